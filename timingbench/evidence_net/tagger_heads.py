"""Family heads on the AudioSet tagger's column embeddings: presence per family every 0.32 s.

One logistic regression per instrument family reads the frozen tagger's 384-d column
embedding (:attr:`~timingbench.evidence_net.tagger.TaggerColumns.embeddings`) and gives
the probability that the family sounds in most of the column's 0.32 s. The heads are
trained by ``timingbench evidence train-heads`` (:mod:`timingbench.evidence.heads_train`)
on rendered training clips and the real corpus's dev split; the shipped file is
``timingbench/data/tagger/family_heads.npz`` (``docs/tagger-model.md``, "Family heads").

A heads file is an ``.npz`` holding the families, the standardisation (mean, scale) and
per family a weight vector and a bias, with a JSON ``info`` record (format, tagger
weights' digest, training data, seed, held-out metrics). It is written byte-identically
for the same contents (fixed zip timestamps), so a rebuild can be compared with ``cmp``.
"""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.packaged import data_path

#: The heads that ship inside the package.
SHIPPED_HEADS = data_path("tagger", "family_heads.npz")
#: Format tag of a heads file.
HEADS_FORMAT = "tagger-family-heads-1"
_ARRAYS = ("families", "mean", "scale", "weights", "bias", "info")
#: Zip entry timestamp of a written file (the zip format's earliest), so bytes depend on contents only.
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class FamilyHeads:
    """Logistic heads, one per family, on standardised tagger embeddings.

    ``p_f = sigmoid(weights[f] . ((e - mean) / scale) + bias[f])`` for an embedding ``e``.

    Attributes
    ----------
    families : tuple of str
        Family names, in row order (``timingbench.identity.FAMILY_NAMES``).
    mean : np.ndarray of float32, shape (C,)
        Mean of the training embeddings.
    scale : np.ndarray of float32, shape (C,)
        Their standard deviation (floored; positive).
    weights : np.ndarray of float32, shape (F, C)
        Per family, the weights on the standardised embedding.
    bias : np.ndarray of float32, shape (F,)
        Per family, the bias (log-odds at the mean embedding).
    info : dict
        Format, tagger weights, training data, seed, metrics (JSON-serialisable).
    """

    families: tuple[str, ...]
    mean: npt.NDArray[np.float32]
    scale: npt.NDArray[np.float32]
    weights: npt.NDArray[np.float32]
    bias: npt.NDArray[np.float32]
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        f, c = len(self.families), int(np.asarray(self.mean).shape[0]) if np.ndim(self.mean) == 1 else -1
        if c < 1 or np.shape(self.scale) != (c,) or np.shape(self.weights) != (f, c) or np.shape(self.bias) != (f,):
            raise ParameterError(f"family heads: inconsistent shapes (families {f}, mean {np.shape(self.mean)}, "
                                 f"scale {np.shape(self.scale)}, weights {np.shape(self.weights)}, "
                                 f"bias {np.shape(self.bias)})")
        if not np.all(np.asarray(self.scale) > 0):
            raise ParameterError("family heads: every scale must be positive")
        for a in (self.mean, self.scale, self.weights, self.bias):
            if not np.all(np.isfinite(a)):
                raise ParameterError("family heads: non-finite parameters")

    @property
    def channels(self) -> int:
        """Embedding size C the heads read (384 for mn04)."""
        return int(self.mean.shape[0])


def head_logits(embeddings: npt.ArrayLike, heads: FamilyHeads) -> npt.NDArray[np.float64]:
    """Log-odds of every family per column.

    Parameters
    ----------
    embeddings : array_like, shape (C, n)
        Tagger column embeddings (``TaggerColumns.embeddings``).
    heads : FamilyHeads

    Returns
    -------
    logits : np.ndarray of float64, shape (F, n)

    Raises
    ------
    ParameterError
        If ``embeddings`` is not (C, n) with the heads' C, or holds non-finite values.
    """
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2 or e.shape[0] != heads.channels:
        raise ParameterError(f"embeddings must be (channels, columns) with {heads.channels} channels (the tagger the "
                             f"heads were trained on), got shape {e.shape}")
    if not np.all(np.isfinite(e)):
        raise ParameterError("embeddings hold non-finite values")
    z = (e - heads.mean.astype(np.float64)[:, None]) / heads.scale.astype(np.float64)[:, None]
    return np.asarray(heads.weights, dtype=np.float64) @ z + heads.bias.astype(np.float64)[:, None]


def head_presence(embeddings: npt.ArrayLike, heads: FamilyHeads) -> dict[str, npt.NDArray[np.float64]]:
    """Probability that each family sounds, per tagger column.

    Parameters
    ----------
    embeddings : array_like, shape (C, n)
        Tagger column embeddings (``TaggerColumns.embeddings``; columns every 0.32 s at
        ``TaggerColumns.times``).
    heads : FamilyHeads
        From :func:`load_heads`.

    Returns
    -------
    presence : dict of str to np.ndarray of float64, shape (n,)
        Per family (in ``heads.families`` order), probabilities in [0, 1].

    Raises
    ------
    ParameterError
        If ``embeddings`` is not (C, n) with the heads' C, or holds non-finite values.
    """
    lg = head_logits(embeddings, heads)
    p = 0.5 * (1.0 + np.tanh(0.5 * lg))  # the logistic function without overflow
    return {fam: p[k] for k, fam in enumerate(heads.families)}


# ----------------------------------------------------------------------------- files


def save_heads(heads: FamilyHeads, path: str | Path) -> None:
    """Write a heads file (``.npz``); the same heads give the same bytes.

    Parameters
    ----------
    heads : FamilyHeads
    path : str or Path
        Written atomically (a temporary file beside it, then renamed).
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    arrays = {"families": np.array(heads.families), "mean": np.asarray(heads.mean, dtype=np.float32),
              "scale": np.asarray(heads.scale, dtype=np.float32),
              "weights": np.asarray(heads.weights, dtype=np.float32),
              "bias": np.asarray(heads.bias, dtype=np.float32),
              "info": np.array(json.dumps({"format": HEADS_FORMAT, **heads.info}, sort_keys=True))}
    tmp = p.with_name(p.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name in _ARRAYS:
            buf = io.BytesIO()
            np.lib.format.write_array(buf, arrays[name], allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())
    tmp.replace(p)


def load_heads(path: str | Path | None = None) -> FamilyHeads:
    """Read a heads file.

    Parameters
    ----------
    path : str or Path, optional
        A file written by :func:`save_heads` (``timingbench evidence train-heads``); the
        shipped ``timingbench/data/tagger/family_heads.npz`` when omitted.

    Returns
    -------
    heads : FamilyHeads

    Raises
    ------
    ModelUnavailableError
        If the file is missing, unreadable, not a heads file, of another format, or its
        arrays are inconsistent; the message names the file.
    """
    p = SHIPPED_HEADS if path is None else Path(path).expanduser()
    what = "the shipped family heads (reinstall timingbench)" if path is None else \
        "family heads (rebuild them with `timingbench evidence train-heads`)"
    if not p.is_file():
        raise ModelUnavailableError(f"{p}: {what} not found")
    try:
        with np.load(p, allow_pickle=False) as z:
            missing = [k for k in _ARRAYS if k not in z.files]
            if missing:
                raise ModelUnavailableError(f"{p}: not a family heads file (no {', '.join(missing)}); {what}")
            a = {k: z[k] for k in _ARRAYS}
        info = json.loads(str(a["info"]))
    except ModelUnavailableError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        raise ModelUnavailableError(f"{p}: cannot read the family heads ({type(exc).__name__}: "
                                    f"{str(exc).splitlines()[0] if str(exc) else 'corrupt'}); {what}") from None
    if not isinstance(info, dict) or info.get("format") != HEADS_FORMAT:
        got = info.get("format") if isinstance(info, dict) else None
        raise ModelUnavailableError(f"{p}: family heads of format {got!r}, this version reads {HEADS_FORMAT}; {what}")
    try:
        return FamilyHeads(families=tuple(str(f) for f in a["families"]), mean=a["mean"].astype(np.float32),
                           scale=a["scale"].astype(np.float32), weights=a["weights"].astype(np.float32),
                           bias=a["bias"].astype(np.float32), info=info)
    except ParameterError as exc:
        raise ModelUnavailableError(f"{p}: {exc}; {what}") from None
