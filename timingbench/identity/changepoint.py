"""The best two-level step of a presence curve: where a family's presence changes, and by how much.

A family's presence (log-odds, one value per evidence column) over a search window is fitted
by two constant levels, one before a split and one after it, in the least-squares sense. The
split that minimises the squared error among those whose step goes the asked way (up for an
entrance, down for an exit) is the change point. For a split after ``k`` of ``n`` columns with
means ``a`` (before) and ``b`` (after), the error removed by the two-level fit over the
one-level fit is ``k (n - k) / n * (b - a) ** 2``, so the best split is the one that maximises
``sqrt(k (n - k) / n) * (b - a)`` (times -1 for an exit), computed for every split at once
from cumulative sums.

The change point's levels are then summarised robustly: the medians of the columns before and
after it. Their difference (after minus before, signed so that an exit's fall is positive) is
the step's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from timingbench.convert import grid_hop_s
from timingbench.errors import ParameterError

F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Step:
    """The best two-level step of a curve inside a span.

    Attributes
    ----------
    time_s : float
        The change point: halfway between the last column before the split and the first after it.
    before, after : float
        Medians of the curve over the columns before and after the split (log-odds).
    size : float
        ``after - before`` for a rise, ``before - after`` for a fall (positive: the asked way).
    before_s, after_s : float
        Seconds of columns on each side of the split (column count times the column hop).
    """

    time_s: float
    before: float
    after: float
    size: float
    before_s: float
    after_s: float


def split_scores(x: npt.ArrayLike, *, rising: bool) -> F64:
    """Signed least-squares score of every split of ``x`` (module docstring).

    Parameters
    ----------
    x : array_like, shape (n,)
        The curve.
    rising : bool
        True: a step up scores positive; False: a step down does.

    Returns
    -------
    score : np.ndarray of float64, shape (n - 1,)
        ``score[k - 1]`` is the split after ``k`` columns, ``k`` in ``1 .. n - 1``
        (empty when ``n < 2``).
    """
    v = np.asarray(x, dtype=np.float64)
    n = v.size
    if n < 2:
        return np.zeros(0)
    c = np.cumsum(v)
    k = np.arange(1, n, dtype=np.float64)
    mean_before = c[:-1] / k
    mean_after = (c[-1] - c[:-1]) / (n - k)
    score = np.sqrt(k * (n - k) / n) * (mean_after - mean_before)
    return np.asarray(score if rising else -score, dtype=np.float64)


def best_step(values: npt.ArrayLike, times: npt.ArrayLike, *, lo_s: float, hi_s: float, rising: bool,
              min_before_s: float, min_after_s: float) -> Step | None:
    """The best step the asked way of ``values`` over the columns with times in ``[lo_s, hi_s]``.

    Parameters
    ----------
    values : array_like, shape (n,)
        The curve (log-odds presence), one value per column.
    times : array_like, shape (n,)
        Column centres in seconds, increasing and evenly spaced.
    lo_s, hi_s : float
        The span searched, in seconds.
    rising : bool
        An entrance (a step up) or an exit (a step down).
    min_before_s, min_after_s : float
        Least seconds of columns each side of the split must hold.

    Returns
    -------
    step : Step or None
        None when no split leaves enough columns on both sides, or when no split goes the
        asked way (every one scores at most 0).

    Raises
    ------
    ParameterError
        If ``values`` and ``times`` differ in length or a value is not finite.
    """
    v = np.asarray(values, dtype=np.float64)
    t = np.asarray(times, dtype=np.float64)
    if v.shape != t.shape or v.ndim != 1:
        raise ParameterError(f"values and times must be 1-d of one length, got {v.shape} and {t.shape}")
    if not np.isfinite(v).all():
        raise ParameterError("presence values must be finite (log-odds of clipped probabilities)")
    sel = np.flatnonzero((t >= lo_s - 1e-9) & (t <= hi_s + 1e-9))
    if sel.size < 2:
        return None
    hop = grid_hop_s(t)
    x, xt = v[sel], t[sel]
    score = split_scores(x, rising=rising)
    k = np.arange(1, x.size)
    ok = (k * hop >= min_before_s - 1e-9) & ((x.size - k) * hop >= min_after_s - 1e-9) & (score > 0)
    if not ok.any():
        return None
    best = int(k[ok][np.argmax(score[ok])])
    before, after = float(np.median(x[:best])), float(np.median(x[best:]))
    size = after - before if rising else before - after
    return Step(time_s=float(0.5 * (xt[best - 1] + xt[best])), before=before, after=after, size=size,
                before_s=round(best * hop, 4), after_s=round((x.size - best) * hop, 4))
