"""The shipped family evidence network run on a clip's feature bank.

The network reads the bank's log-mel (no audio is decoded or transformed again), on CPU
through torch. Its outputs are memoised in the bank (and so in the feature cache) under
a key holding the digest of the weights file (the bank's own key covers the log-mel), so
a new model never reuses stale curves; no hand-bumped version is involved.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.convert import frames_to_time
from timingbench.errors import ModelUnavailableError
from timingbench.packaged import data_path

#: The weights that ship inside the package.
WEIGHTS = data_path("evidence", "family_evidence.pt")



def output_times(n_out: int, *, stride: int, sr: float, hop: int) -> npt.NDArray[np.float64]:
    """Seconds of the ``n_out`` output frames."""
    return frames_to_time(stride * np.arange(n_out) + (stride - 1) / 2.0, sr=sr, hop=hop)


def clip_output_times(n_frames: int, *, stride: int, sr: float, hop: int) -> npt.NDArray[np.float64]:
    """The output grid of the network on a log-mel of ``n_frames`` frames, without running it.

    The log-mel is padded to whole strides; outputs past its last frame are dropped.

    Parameters
    ----------
    n_frames : int
        Log-mel frames.
    stride : int
        Bank frames per output frame.
    sr : float
        Sample rate of the bank, Hz.
    hop : int
        Hop of the bank, samples.

    Returns
    -------
    times : np.ndarray of float64, shape (n,)
        Output-frame instants in seconds.
    """
    n_out = (int(n_frames) + (-int(n_frames)) % stride) // stride
    t = output_times(n_out, stride=stride, sr=sr, hop=hop)
    return t[t <= (int(n_frames) - 1) * hop / sr + 1e-9]

@dataclass(frozen=True)
class NetOutputs:
    """Per-frame outputs of the network for one clip.

    Attributes
    ----------
    times : np.ndarray of float64, shape (n,)
        Output-frame instants in seconds (hop ``stride * hop / sr``, 46.4 ms).
    presence, entered, left : np.ndarray of float64, shape (11, n)
        Probability that each family sounds; that it entered / left across the frame.
    """

    times: npt.NDArray[np.float64]
    presence: npt.NDArray[np.float64]
    entered: npt.NDArray[np.float64]
    left: npt.NDArray[np.float64]


def weights_digest(path: Path) -> str:
    """First 16 hex digits of the SHA-256 of a weights file.

    Hashed once per file version: memoised on the resolved path, its size and its
    modification time (ns), so a rewritten file is hashed again.
    """
    st = path.stat()
    return _digest(str(path.resolve()), st.st_size, st.st_mtime_ns)


@lru_cache(maxsize=16)
def _digest(path_str: str, size: int, mtime_ns: int) -> str:
    return hashlib.sha256(Path(path_str).read_bytes()).hexdigest()[:16]


@lru_cache(maxsize=4)
def _model(path_str: str, digest: str) -> tuple[Any, dict[str, Any]]:
    from timingbench.models.family_net import load_weights

    return load_weights(Path(path_str))


def run_network(logmel: npt.ArrayLike, *, sr: float, hop: int, weights: Path | None = None) -> NetOutputs:
    """Run the network on one clip's log-mel.

    Parameters
    ----------
    logmel : array_like, shape (n_mels, n_frames)
        The bank's log-mel (dB re the clip maximum).
    sr : float
        Sample rate of the bank in Hz.
    hop : int
        Hop of the bank in samples.
    weights : Path, optional
        Weights file; the shipped one when omitted.

    Returns
    -------
    outputs : NetOutputs

    Raises
    ------
    ModelUnavailableError
        If the weights file is missing or unreadable.
    """
    import torch

    path = Path(weights) if weights is not None else WEIGHTS
    if not path.is_file():
        raise ModelUnavailableError(f"{path}: family evidence weights not found (run `timingbench evidence train`)")
    try:
        model, _ = _model(str(path), weights_digest(path))
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        raise ModelUnavailableError(f"{path}: cannot load the family evidence weights ({exc})") from None
    x = np.array(logmel, dtype=np.float32)  # a writable copy for torch
    stride = model.shape.stride
    n = x.shape[1]
    pad = (-n) % stride
    if pad:  # padded with the log-mel's floor, the range the network was trained on
        x = np.pad(x, ((0, 0), (0, pad)), constant_values=-float(model.shape.db_range))
    with torch.inference_mode():
        pres, change = model(torch.from_numpy(x)[None])
        pres_p = torch.sigmoid(pres)[0].double().numpy()
        ch_p = torch.softmax(change, dim=2)[0].double().numpy()
    if pres_p.shape[1] != (n + pad) // stride:
        raise ModelUnavailableError(f"{path}: the network gave {pres_p.shape[1]} output frames for {n} log-mel "
                                    f"frames at stride {stride} (expected {(n + pad) // stride})")
    t = clip_output_times(n, stride=stride, sr=sr, hop=hop)
    keep = slice(0, t.size)
    return NetOutputs(times=t, presence=pres_p[:, keep], entered=ch_p[:, 0, keep], left=ch_p[:, 1, keep])


def network_unavailable(weights: Path | None = None) -> str | None:
    """Why the network cannot run (its weights missing or unreadable), or None when it can.

    Loads the weights (once per process and file version) without running them.
    """
    path = Path(weights) if weights is not None else WEIGHTS
    if not path.is_file():
        return f"{path}: family evidence weights not found (run `timingbench evidence train`)"
    try:
        _model(str(path), weights_digest(path))
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        return f"{path}: cannot load the family evidence weights ({exc})"
    return None


def bank_outputs(bank: Any, *, weights: Path | None = None) -> NetOutputs:
    """:func:`run_network` on ``bank.logmel``, memoised in the bank."""
    path = Path(weights) if weights is not None else WEIGHTS
    if not path.is_file():
        raise ModelUnavailableError(f"{path}: family evidence weights not found (run `timingbench evidence train`)")
    key = f"evidence:trained:{weights_digest(path)}"
    raw = bank.derived(key, lambda b: run_network(b.logmel, sr=b.sr, hop=b.hop, weights=path).__dict__)
    return NetOutputs(**raw)


def reference_logmel() -> npt.NDArray[np.float32]:
    """A fixed 12-s log-mel (quiet first half, a banded texture after 6 s) for the reference outputs."""
    r = np.random.default_rng(0)
    n = 1034
    x = np.full((128, n), -80.0, dtype=np.float32)
    x[:, 517:] = -50.0 + 8.0 * r.standard_normal((128, n - 517)).astype(np.float32)
    x[20:24, 517:] = -10.0
    x[40:42, 517:] = -18.0
    return np.minimum(x, 0.0)


def reference_outputs(weights: Path | None = None, *, sr: float, hop: int) -> dict[str, Any]:
    """Summary of the network's outputs on :func:`reference_logmel` (stored beside shipped weights).

    Parameters
    ----------
    weights : Path, optional
        Weights file; the shipped one when omitted.
    sr : float
        Sample rate of the bank the network reads, Hz (``audio.sample_rate_hz``).
    hop : int
        Hop of that bank, samples (``features.hop``).
    """
    out = run_network(reference_logmel(), sr=sr, hop=hop, weights=weights)
    return {"n_frames": int(out.times.size),
            "presence_mean": [round(float(v), 6) for v in out.presence.mean(axis=1)],
            "entered_max": [round(float(v), 6) for v in out.entered.max(axis=1)]}
