"""Family curves from the AudioSet tagger's frame-wise logits: presence, entered, left.

The tagger (:mod:`timingbench.models.tagger`) gives 527 AudioSet logits per column of
its last feature map (a 0.32-s stride). A family's **presence** in a column is the sigmoid of
the largest logit over the family's AudioSet classes (the family registry). Its **change**
across an instant ``t`` is the log-odds rise of that presence from the median of the
columns before ``t`` to the median of the columns after it (each side ``context_s`` long,
``guard_s`` left out around ``t``), the same before/after convention as the trained
network's change head. The rise of the non-music classes (speech, animal sounds) across the
same instant is taken off first, so a voice that speaks, or a dog that barks, does not read
as singing or as an instrument entering. The rise is mapped to a probability with a logistic
centred on ``rise_mid`` (``entered = 1 / (1 + exp(-(rise - rise_mid)))``), so it reads on the
scale of the network's change head and the two can be fused by their maximum.

Everything here is arithmetic on arrays; nothing runs a model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError
from timingbench.identity.window import logit, sigmoid

F64 = npt.NDArray[np.float64]


def class_indices(labels: Sequence[str], classes: Sequence[str], *, what: str) -> list[int]:
    """Indices of ``classes`` among the tagger's ``labels``.

    Raises
    ------
    ParameterError
        If a class is not one of the labels (``what`` names the table that listed it).
    """
    col = {name: i for i, name in enumerate(labels)}
    missing = [c for c in classes if c not in col]
    if missing:
        raise ParameterError(f"{what}: {missing} are not AudioSet class names of the tagger")
    return [col[c] for c in classes]


def group_logits(logits: npt.ArrayLike, labels: Sequence[str],
                 table: Mapping[str, Sequence[str]], *, what: str = "families") -> dict[str, F64]:
    """Per-column log-odds of each group: the largest logit over its classes.

    Parameters
    ----------
    logits : array_like, shape (527, n_columns)
        The tagger's frame-wise logits.
    labels : sequence of str
        The tagger's class display names, in logit order.
    table : mapping of str to sequence of str
        Group (a family, or ``nonmusic``) -> its AudioSet class names.
    what : str
        Name of the table, for errors.

    Returns
    -------
    logits : dict of str to np.ndarray, shape (n_columns,)

    Raises
    ------
    ParameterError
        If ``logits`` does not have one row per label, a group lists no class, or a class
        is not a label.
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2 or z.shape[0] != len(labels):
        raise ParameterError(f"logits must have shape ({len(labels)}, n_columns), got {z.shape}")
    out: dict[str, F64] = {}
    for name, classes in table.items():
        if not classes:
            raise ParameterError(f"{what}: group {name!r} lists no AudioSet class")
        idx = class_indices(labels, classes, what=f"{what}.{name}")
        out[name] = np.asarray(z[idx].max(axis=0), dtype=np.float64) if z.shape[1] else np.zeros(0)
    return out


def group_presence(logits: npt.ArrayLike, labels: Sequence[str],
                   table: Mapping[str, Sequence[str]], *, what: str = "families") -> dict[str, F64]:
    """Per-column probability of each group: the sigmoid of :func:`group_logits`."""
    return {name: sigmoid(z) for name, z in group_logits(logits, labels, table, what=what).items()}


def side_medians(columns: npt.ArrayLike, column_times: npt.ArrayLike, frame_times: npt.ArrayLike, *,
                 context_s: float, guard_s: float, percentile: float = 50.0) -> tuple[F64, F64]:
    """A percentile (the median by default) of each row of ``columns`` over the columns before and after every
    frame time.

    Before ``t``: columns centred in ``[t - guard_s - context_s, t - guard_s]``; after it:
    ``[t + guard_s, t + guard_s + context_s]``. A side with no column is NaN.

    Parameters
    ----------
    columns : array_like, shape (n_rows, n_columns)
        Per-column values (probabilities).
    column_times : array_like, shape (n_columns,)
        Column centres in seconds, increasing.
    frame_times : array_like, shape (n_frames,)
        Instants (s) at which the sides are read.
    context_s, guard_s : float
        Length of each side and the gap left out on either side of the instant (s).
    percentile : float
        The percentile read on each side (50: the median).

    Returns
    -------
    before, after : np.ndarray, shape (n_rows, n_frames)
    """
    v = np.atleast_2d(np.asarray(columns, dtype=np.float64))
    ct = np.asarray(column_times, dtype=np.float64)
    ft = np.asarray(frame_times, dtype=np.float64)
    if context_s <= 0 or guard_s < 0:
        raise ParameterError(f"context_s must be > 0 and guard_s >= 0, got {context_s!r}, {guard_s!r}")
    eps = 1e-9
    lo_b = np.searchsorted(ct, ft - guard_s - context_s - eps, side="left")
    hi_b = np.searchsorted(ct, ft - guard_s + eps, side="right")
    lo_a = np.searchsorted(ct, ft + guard_s - eps, side="left")
    hi_a = np.searchsorted(ct, ft + guard_s + context_s + eps, side="right")
    if ft.size == 0:
        return np.zeros((v.shape[0], 0)), np.zeros((v.shape[0], 0))
    return (window_percentiles(v, lo_b, hi_b, percentile=percentile),
            window_percentiles(v, lo_a, hi_a, percentile=percentile))


def window_percentiles(values: npt.ArrayLike, lo: npt.ArrayLike, hi: npt.ArrayLike, *,
                       percentile: float) -> F64:
    """A percentile of each row of ``values`` over the columns ``lo[k]:hi[k]`` of every window ``k``.

    The windows of one length are read at once (one :func:`numpy.percentile` over a sliding
    view), each distinct window once; every value is the one a call on that window alone gives.

    Parameters
    ----------
    values : array_like, shape (n_rows, n_columns)
        Per-column values.
    lo, hi : array_like of int, shape (n_windows,)
        Column ranges ``[lo, hi)``; an empty range gives NaN.
    percentile : float
        In [0, 100].

    Returns
    -------
    out : np.ndarray of float64, shape (n_rows, n_windows)
    """
    v = np.atleast_2d(np.asarray(values, dtype=np.float64))
    lo = np.asarray(lo, dtype=np.int64)
    hi = np.asarray(hi, dtype=np.int64)
    out = np.full((v.shape[0], lo.size), np.nan)
    length = hi - lo
    for n in np.unique(length[length > 0]):
        at = np.flatnonzero(length == n)
        starts, where = np.unique(lo[at], return_inverse=True)
        windows = np.lib.stride_tricks.sliding_window_view(v, int(n), axis=1)[:, starts, :]
        out[:, at] = np.percentile(windows, percentile, axis=2)[:, where]
    return out


def change_curves(presence: Mapping[str, npt.ArrayLike], column_times: npt.ArrayLike,
                  frame_times: npt.ArrayLike, *, context_s: float, guard_s: float, prob_clip: float,
                  rise_mid: float, nonmusic: npt.ArrayLike | None = None,
                  percentile: float = 50.0) -> tuple[dict[str, F64], dict[str, F64]]:
    """Entered and left probabilities of every family at ``frame_times`` (module docstring).

    Parameters
    ----------
    presence : mapping of str to array_like, shape (n_columns,)
        Per-column family probabilities (:func:`group_presence`).
    column_times : array_like, shape (n_columns,)
        Column centres (s).
    frame_times : array_like, shape (n_frames,)
        Where the curves are read (s).
    context_s, guard_s : float
        The before/after convention (:func:`side_medians`).
    prob_clip : float
        Probabilities are clipped to ``[prob_clip, 1 - prob_clip]`` before log-odds.
    rise_mid : float
        Log-odds rise that maps to a change probability of 0.5.
    nonmusic : array_like, shape (n_columns,), optional
        Per-column probability of the non-music classes; its rise (fall) across an instant,
        when positive, is subtracted from every family's rise (fall).
    percentile : float
        The percentile of each side's columns compared (50: the medians).

    Returns
    -------
    entered, left : dict of str to np.ndarray, shape (n_frames,)
        0 where a side has no column (the clip's edges).
    """
    names = list(presence)
    ft = np.asarray(frame_times, dtype=np.float64)
    if not names:
        return {}, {}
    rows = [np.asarray(presence[n], dtype=np.float64) for n in names]
    if nonmusic is not None:
        rows.append(np.asarray(nonmusic, dtype=np.float64))
    before, after = side_medians(np.stack(rows), column_times, ft, context_s=context_s, guard_s=guard_s,
                                 percentile=percentile)
    rise = logit(after, prob_clip) - logit(before, prob_clip)
    fall = -rise
    if nonmusic is not None:
        nm_rise, nm_fall = rise[-1], fall[-1]
        rise = rise[:-1] - np.maximum(np.nan_to_num(nm_rise, nan=0.0), 0.0)
        fall = fall[:-1] - np.maximum(np.nan_to_num(nm_fall, nan=0.0), 0.0)
    entered = np.nan_to_num(sigmoid(rise - rise_mid), nan=0.0)
    left = np.nan_to_num(sigmoid(fall - rise_mid), nan=0.0)
    return ({n: entered[i] for i, n in enumerate(names)}, {n: left[i] for i, n in enumerate(names)})


def frame_presence(presence: Mapping[str, npt.ArrayLike], column_times: npt.ArrayLike,
                   frame_times: npt.ArrayLike) -> dict[str, F64]:
    """Per-column presence read at ``frame_times`` by linear interpolation (held at the ends)."""
    ct = np.asarray(column_times, dtype=np.float64)
    ft = np.asarray(frame_times, dtype=np.float64)
    if ct.size == 0:
        return {n: np.zeros(ft.size) for n in presence}
    return {n: np.interp(ft, ct, np.asarray(p, dtype=np.float64)) for n, p in presence.items()}
