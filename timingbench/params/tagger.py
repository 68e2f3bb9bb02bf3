"""Parameter set of the pretrained AudioSet tagger (:mod:`timingbench.models.tagger`).

Each field is the constant of the same name in the ``tagger`` section of
``configs/timingbench-v1.yaml``. The fields' docstring entries (the constant's ``why`` and
provenance) are generated from it by ``tools/params_docs.py --write``;
``tests/test_params_docs.py`` fails when they drift.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from timingbench.errors import ConfigError
from timingbench.params.analysis import AudioParams
from timingbench.params.base import Params, register

_SHA256 = re.compile(r"[0-9a-f]{64}")


@register
@dataclass(frozen=True)
class TaggerParams(Params):
    """Constants of the ``tagger`` section.

    Attributes
    ----------
    weights : str | None
        null reads the shipped EfficientAT mn04 (timingbench/data/tagger/mn04_as_mAP_432.pt, MIT); a
        path loads another width of the same release from a local file (mn10, mn20, mn40_as_ext), as
        --tagger-weights does (convention)
    weights_sha256 : str | None
        SHA-256 of the shipped mn04 file (EfficientAT release v0.0.1): a corrupt or substituted file
        is refused, never read; null skips the check (--tagger-weights sets it null) (convention)
    chunk_s : float
        columns are computed 10 s at a time (rounded up to whole 0.32 s columns: 10.24 s), the
        tagger's training clip length, so memory stays bounded on long inputs (convention)
    context_s : float
        audio read either side of a chunk (rounded up to whole columns: 12.8 s): a window of 35.84 s
        holds the whole 35 s analysis window, so a scored clip is read in one pass as the issue's
        AUCs were measured; on longer inputs each column sees far more than the network's +-3 s
        receptive field (convention)
    presence_pool_s : float
        a family's presence (the largest logit over its AudioSet classes) is the tagger's own head
        applied to the column embeddings averaged over 0.96 s (3 columns): compared on the real
        corpus's dev split against single columns (1) and 1.92 s (6), on-time entrances and exits
        located by the presence step 20/72 against 12/72 and 16/72 (calibrated)
    audio : AudioParams
        the ``audio`` section, whose ``input_loud_level_dbfs`` is the one loud level every model
        input is brought to (its own section)
    threads : int
        torch intra-op threads inside a tagger call (restored after it); 1 so --jobs workers do not
        oversubscribe the cores, as tempo.intra_op_num_threads (convention)
    """

    SECTION = "tagger"

    weights: str | None
    weights_sha256: str | None
    chunk_s: float
    context_s: float
    presence_pool_s: float
    audio: AudioParams
    threads: int

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``tagger.<field>`` when the weights path is empty, the digest is not 64
            lower-case hex digits, the chunk is not positive or the thread count is below 1.
        """
        super().validate()
        sec = self.SECTION
        if self.weights is not None and not self.weights.strip():
            raise ConfigError(f"constant '{sec}.weights' must be a file path or null, got an empty string")
        if self.weights_sha256 is not None and not _SHA256.fullmatch(self.weights_sha256):
            raise ConfigError(f"constant '{sec}.weights_sha256' must be 64 lower-case hex digits or null, "
                              f"got {self.weights_sha256!r:.80}")
        if not self.chunk_s > 0:
            raise ConfigError(f"constant '{sec}.chunk_s' must be positive, got {self.chunk_s!r}")
        if self.threads < 1:
            raise ConfigError(f"constant '{sec}.threads' must be at least 1, got {self.threads!r}")
