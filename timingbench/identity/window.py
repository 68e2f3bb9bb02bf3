"""The one before/after window convention and the one logistic / log-odds pair of identity.

For a candidate at ``t`` seconds, the *before* side holds the evidence frames with times in
``[t - guard - context, t - guard]`` and the *after* side those in
``[t + guard, t + guard + context]``, both cut by the frames that exist (the clip's edges).
Times are compared at :data:`~timingbench.convert.TIME_DECIMALS` decimals, so a frame lying
exactly on a bound counts.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from timingbench.convert import TIME_DECIMALS
from timingbench.errors import ParameterError

F64 = npt.NDArray[np.float64]
Mask = npt.NDArray[np.bool_]


def context_masks(times: npt.ArrayLike, t_s: float, *, context_s: float, guard_s: float) -> tuple[Mask, Mask]:
    """Frames of the before side and of the after side of ``t_s`` (module docstring).

    Parameters
    ----------
    times : array_like, shape (n,)
        Frame times in seconds.
    t_s : float
        The candidate instant in seconds.
    context_s, guard_s : float
        Length of each side and the gap left out on either side of ``t_s`` (s).

    Returns
    -------
    before, after : np.ndarray of bool, shape (n,)
    """
    c = np.round(np.asarray(times, dtype=np.float64), TIME_DECIMALS)

    def r(x: float) -> float:
        return round(x, TIME_DECIMALS)

    pre = (c >= r(t_s - guard_s - context_s)) & (c <= r(t_s - guard_s))
    post = (c >= r(t_s + guard_s)) & (c <= r(t_s + guard_s + context_s))
    return pre, post


def sigmoid(x: npt.ArrayLike) -> F64:
    """Logistic function, computed without overflow (``0.5 (1 + tanh(x / 2))``)."""
    x = np.asarray(x, dtype=np.float64)
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * x)), dtype=np.float64)


def logit(p: npt.ArrayLike, clip: float) -> F64:
    """``log(p / (1 - p))`` with ``p`` clipped to ``[clip, 1 - clip]`` (NaN stays NaN).

    Raises
    ------
    ParameterError
        If ``clip`` is not in (0, 0.5).
    """
    if not 0.0 < clip < 0.5:
        raise ParameterError(f"prob_clip (semantic.prob_clip, evidence.prob_clip) must lie in (0, 0.5), got {clip!r}")
    q = np.clip(np.asarray(p, dtype=np.float64), clip, 1.0 - clip)
    return np.asarray(np.log(q) - np.log1p(-q), dtype=np.float64)


def logit_rise(before: float, after: float, *, clip: float) -> float:
    """Rise of evidence in log-odds, probabilities clipped to ``[clip, 1 - clip]``.

    Parameters
    ----------
    before, after : float
        Evidence (probabilities) before and after a candidate.
    clip : float
        Clipping bound in (0, 0.5).

    Returns
    -------
    rise : float
        ``logit(after) - logit(before)``.

    Raises
    ------
    ParameterError
        If ``clip`` is not in (0, 0.5).
    """
    z = logit([before, after], clip)
    return float(z[1] - z[0])
