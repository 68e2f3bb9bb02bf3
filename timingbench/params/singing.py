"""Parameter set of the singing detector (:mod:`timingbench.models.singing`) and of the vocals presence
read from it (:mod:`timingbench.identity.singing`).

Each field is the constant of the same name in the ``singing`` section of
``configs/timingbench-v1.yaml``. The fields' docstring entries (the constant's ``why`` and
provenance) are generated from it by ``tools/params_docs.py --write``;
``tests/test_params_docs.py`` fails when they drift.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from timingbench.errors import ConfigError
from timingbench.params.base import Params, register

_SHA256 = re.compile(r"[0-9a-f]{64}")


@register
@dataclass(frozen=True)
class SingingParams(Params):
    """Constants of the ``singing`` section.

    Attributes
    ----------
    model_sha256 : str | None
        SHA-256 of the shipped FireRedVAD AED model (timingbench/data/singing/fireredvad_aed.onnx,
        upstream commit c30ec49e): a corrupt or substituted file is refused, never read (convention)
    cmvn_sha256 : str | None
        SHA-256 of the shipped Kaldi CMVN statistics the model was trained with
        (timingbench/data/singing/cmvn.ark) (convention)
    threads : int
        onnxruntime intra-op threads of the detector's session, sequential execution: --jobs workers
        do not oversubscribe the cores and readings are deterministic, as tagger.threads
        (convention)
    prob_clip : float
        the detector's sigmoid outputs are read in log-odds of [1e-4, 1 - 1e-4] (+-9.2): finite on
        float32 outputs that saturate at 0 and 1, and far outside the +-4 log-odds a singing step is
        read at (convention)
    """

    SECTION = "singing"

    model_sha256: str | None
    cmvn_sha256: str | None
    threads: int
    prob_clip: float

    def validate(self) -> None:
        """Check value ranges.

        Raises
        ------
        ConfigError
            Naming ``singing.<field>`` when a digest is not 64 lower-case hex digits, the
            thread count is below 1 or the clip is outside (0, 0.5).
        """
        super().validate()
        sec = self.SECTION
        for name in ("model_sha256", "cmvn_sha256"):
            v = getattr(self, name)
            if v is not None and not _SHA256.fullmatch(v):
                raise ConfigError(f"constant '{sec}.{name}' must be 64 lower-case hex digits or null, got {v!r:.80}")
        if self.threads < 1:
            raise ConfigError(f"constant '{sec}.threads' must be at least 1, got {self.threads!r}")
        if not 0.0 < self.prob_clip < 0.5:
            raise ConfigError(f"constant '{sec}.prob_clip' must lie in (0, 0.5), got {self.prob_clip!r}")
