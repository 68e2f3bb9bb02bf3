"""Training targets and output-frame times of the family evidence model.

Bank frames are centred (frame ``k`` is the instant ``k * hop / sr``); output frame ``j``
of the network pools bank frames ``[stride * j, stride * (j + 1))`` and stands for the
instant of their centre.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

#: Class index of each change answer (:data:`timingbench.models.family_net.CHANGES`).
ENTERED, LEFT, NONE, IGNORE = 0, 1, 2, -1


def presence_targets(labels: npt.NDArray[np.uint8], stride: int) -> npt.NDArray[np.float32]:
    """Per output frame, the share of its bank frames in which each family sounds.

    Parameters
    ----------
    labels : np.ndarray of uint8, shape (..., n_families, n_frames)
    stride : int

    Returns
    -------
    share : np.ndarray of float32, shape (..., n_families, n_frames // stride)
    """
    n = labels.shape[-1] // stride
    x = labels[..., : n * stride].reshape(*labels.shape[:-1], n, stride)
    return np.asarray(x.mean(axis=-1), dtype=np.float32)


def change_targets(presence: npt.NDArray[np.float32], *, context: int, guard: int, absent_max: float,
                   present_min: float, min_context: int, near: int = 0,
                   near_min: float = 0.0) -> npt.NDArray[np.int64]:
    """Entered / left / none / ignore targets per family and output frame.

    Over the ``context`` output frames before frame ``j`` (``guard`` frames left out) and
    after it, a family is *absent* when it sounds in at most ``absent_max`` of the frames
    and *present* when in at least ``present_min``. Entered: absent before, present
    after, and sounding in at least ``near_min`` of the ``near`` frames just after the
    guard (so the label sits on the entrance, not up to a context earlier); left: the
    mirror image; none: the same state on both sides; ignore otherwise, or when either
    side has fewer than ``min_context`` frames inside the clip.

    Parameters
    ----------
    presence : np.ndarray of float32, shape (..., n_families, n)
        :func:`presence_targets`.

    Returns
    -------
    target : np.ndarray of int64, shape like ``presence``
    """
    p = (presence >= 0.5).astype(np.float64)
    n = p.shape[-1]
    c = np.concatenate([np.zeros(p.shape[:-1] + (1,)), np.cumsum(p, axis=-1)], axis=-1)
    j = np.arange(n)
    lo_b, hi_b = np.clip(j - guard - context, 0, n), np.clip(j - guard, 0, n)
    lo_a, hi_a = np.clip(j + guard + 1, 0, n), np.clip(j + guard + 1 + context, 0, n)
    nb, na = hi_b - lo_b, hi_a - lo_a
    fb = (c[..., hi_b] - c[..., lo_b]) / np.maximum(nb, 1)
    fa = (c[..., hi_a] - c[..., lo_a]) / np.maximum(na, 1)
    out = np.full(p.shape, IGNORE, dtype=np.int64)
    ab, pb = fb <= absent_max, fb >= present_min
    aa, pa = fa <= absent_max, fa >= present_min
    if near > 0:
        lo_n, hi_n = np.clip(j - guard - near, 0, n), np.clip(j + guard + 1 + near, 0, n)
        near_b = (c[..., hi_b] - c[..., lo_n]) / np.maximum(hi_b - lo_n, 1)
        near_a = (c[..., hi_n] - c[..., lo_a]) / np.maximum(hi_n - lo_a, 1)
    else:
        near_b = near_a = np.ones(p.shape)
    out[ab & aa] = NONE
    out[pb & pa] = NONE
    out[ab & pa & (near_a >= near_min)] = ENTERED
    out[pb & aa & (near_b >= near_min)] = LEFT
    short = (nb < min_context) | (na < min_context)
    out[..., short] = IGNORE
    return out
