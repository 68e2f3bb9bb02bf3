"""Per-prompt statistics, macro averages and the prompt-level bootstrap.

Every metric is first reduced to one value per prompt (all samples of a prompt pooled),
then averaged over prompts, so each prompt weighs the same however many samples a system
drew (the paper's macro averaging). Two shapes of metric exist:

- a *rate* (:class:`RateSeries`): per prompt a numerator and a denominator (e.g. on-time
  events and all events of that prompt); the macro rate is the mean over prompts with a
  non-zero denominator of ``num / den``;
- a *quantile* of signed errors (:class:`RowSeries`): rows weighted ``1 / (rows of their
  prompt)`` so each prompt with deliveries weighs the same; the weighted lower quantile.

Uncertainty comes from a seeded bootstrap over prompts: a resample draws prompt ids with
replacement and carries all samples and events of a drawn prompt together. One matrix of
draw counts (resamples x prompts) is shared by every metric and every system, so the
difference between two systems is computed on paired resamples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from timingbench.errors import ParameterError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
#: Per-item prompt indices, and per-item values, as given to :func:`rate_series` and :func:`row_series`.
IndexLike = Sequence[int] | IntArray
ValuesLike = Sequence[float] | FloatArray


@dataclass(frozen=True)
class RateSeries:
    """Per-prompt numerators and denominators of a rate (arrays of shape ``(n_prompts,)``)."""

    num: FloatArray
    den: FloatArray


@dataclass(frozen=True)
class RowSeries:
    """Rows for a weighted quantile: prompt index, value (seconds) and weight per row."""

    prompt_index: IntArray
    value: FloatArray
    weight: FloatArray


Series = RateSeries | RowSeries


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its bootstrap interval.

    Attributes
    ----------
    value : float
        The estimate on all prompts (NaN when undefined).
    lo, hi : float
        Percentile bootstrap interval (NaN when undefined).
    n_prompts : int
        Prompts that contribute to the estimate.
    n_items : int
        Events, clips or rows behind it.
    """

    value: float
    lo: float
    hi: float
    n_prompts: int
    n_items: int


def _indexed(prompt_index: IndexLike, values: ValuesLike, n_prompts: int, *, name: str) -> tuple[IntArray, FloatArray]:
    """``prompt_index`` (int64) and ``values`` (float64, named ``name`` in errors) as arrays of shape ``(n_items,)``.

    Raises
    ------
    ParameterError
        If they are not 1-D of one length or an index is outside ``[0, n_prompts)``.
    """
    idx = np.asarray(prompt_index, dtype=np.int64)
    v = np.asarray(values, dtype=np.float64)
    if idx.shape != v.shape or idx.ndim != 1:
        raise ParameterError(f"prompt_index and {name} must be 1-D of one length, got {idx.shape} and {v.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= n_prompts):
        raise ParameterError(f"prompt index out of range [0, {n_prompts})")
    return idx, v


def rate_series(*, prompt_index: IndexLike, hits: ValuesLike, n_prompts: int) -> RateSeries:
    """Pool per-item hits into per-prompt numerators and denominators.

    Parameters
    ----------
    prompt_index : sequence of int, shape (n_items,)
        Prompt index of each item.
    hits : sequence of float, shape (n_items,)
        Credit of each item in [0, 1] (1/0 for a plain rate).
    n_prompts : int
        Size of the prompt index.

    Returns
    -------
    series : RateSeries

    Raises
    ------
    ParameterError
        If the arrays differ in length or an index is out of range.
    """
    idx, h = _indexed(prompt_index, hits, n_prompts, name="hits")
    num = np.bincount(idx, weights=h, minlength=n_prompts).astype(np.float64)
    den = np.bincount(idx, minlength=n_prompts).astype(np.float64)
    return RateSeries(num=num, den=den)


def row_series(*, prompt_index: IndexLike, values: ValuesLike, n_prompts: int) -> RowSeries:
    """Rows weighted so that each prompt with rows weighs the same.

    Parameters
    ----------
    prompt_index : sequence of int, shape (n_rows,)
    values : sequence of float, shape (n_rows,)
        Values in seconds.
    n_prompts : int

    Returns
    -------
    series : RowSeries

    Raises
    ------
    ParameterError
        If the arrays differ in length or an index is out of range.
    """
    idx, v = _indexed(prompt_index, values, n_prompts, name="values")
    per = np.bincount(idx, minlength=n_prompts).astype(np.float64) if idx.size else np.zeros(n_prompts)
    w = 1.0 / per[idx] if idx.size else np.zeros(0)
    order = np.argsort(v, kind="stable")
    return RowSeries(prompt_index=idx[order], value=v[order], weight=w[order])


def bootstrap_counts(*, n_prompts: int, n_boot: int, seed: int) -> FloatArray:
    """How often each prompt is drawn in each bootstrap resample.

    Parameters
    ----------
    n_prompts : int
    n_boot : int
        Number of resamples.
    seed : int

    Returns
    -------
    counts : np.ndarray of float, shape (n_boot, n_prompts)
        Each row sums to ``n_prompts``.

    Raises
    ------
    ParameterError
        If ``n_boot`` < 1 or ``n_prompts`` < 1.
    """
    if n_boot < 1 or n_prompts < 1:
        raise ParameterError(f"need n_boot >= 1 and n_prompts >= 1, got {n_boot} and {n_prompts}")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_prompts, size=(n_boot, n_prompts))
    counts = np.zeros((n_boot, n_prompts), dtype=np.float64)
    np.add.at(counts, (np.repeat(np.arange(n_boot), n_prompts), draws.ravel()), 1.0)
    return counts


def macro_rate(series: RateSeries, counts: FloatArray) -> FloatArray:
    """Macro-averaged rate for each row of ``counts`` (NaN where no prompt contributes).

    Parameters
    ----------
    series : RateSeries
    counts : np.ndarray, shape (n_rows, n_prompts)
        Prompt weights (all ones for the point estimate, draw counts for resamples).

    Returns
    -------
    rate : np.ndarray, shape (n_rows,)
    """
    defined = series.den > 0
    per_prompt = np.where(defined, series.num / np.where(defined, series.den, 1.0), 0.0)
    top = counts @ per_prompt
    bottom = counts @ defined.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(bottom > 0, top / np.where(bottom > 0, bottom, 1.0), np.nan)


def weighted_quantile(series: RowSeries, counts: FloatArray, q: float) -> FloatArray:
    """Weighted lower quantile of the rows for each row of ``counts``.

    Parameters
    ----------
    series : RowSeries
        Rows sorted by value (as :func:`row_series` returns them).
    counts : np.ndarray, shape (n_rows, n_prompts)
    q : float
        Quantile in [0, 1].

    Returns
    -------
    quantile : np.ndarray, shape (n_rows,)
        NaN where no row has weight.

    Raises
    ------
    ParameterError
        If ``q`` is outside [0, 1].
    """
    if not 0.0 <= q <= 1.0:
        raise ParameterError(f"q must lie in [0, 1], got {q}")
    n = counts.shape[0]
    if series.value.size == 0:
        return np.full(n, np.nan)
    w = counts[:, series.prompt_index] * series.weight[None, :]
    cum = np.cumsum(w, axis=1)
    total = cum[:, -1]
    # The small slack makes a quantile that falls exactly on a weight boundary take the lower row.
    target = q * total - 1e-12 * np.maximum(total, 1.0)
    pos = np.argmax(cum >= target[:, None], axis=1)
    out = series.value[pos]
    return np.where(total > 0, out, np.nan)


def _n_prompts(series: Series) -> tuple[int, int]:
    if isinstance(series, RateSeries):
        return int(np.count_nonzero(series.den > 0)), int(series.den.sum())
    return int(np.unique(series.prompt_index).size), int(series.value.size)


def statistic(series: Series, counts: FloatArray, *, q: float = 0.5) -> FloatArray:
    """The metric of ``series`` for every row of ``counts`` (rate, or quantile ``q``)."""
    if isinstance(series, RateSeries):
        return macro_rate(series, counts)
    return weighted_quantile(series, counts, q)


def _interval(samples: FloatArray, level: float) -> tuple[float, float]:
    finite = samples[np.isfinite(samples)]
    # Fewer than half the resamples defined: the interval would describe a different population.
    if finite.size < max(1, samples.size // 2):
        return float("nan"), float("nan")
    a = (1.0 - level) / 2.0 * 100.0
    lo, hi = np.percentile(finite, [a, 100.0 - a])
    return float(lo), float(hi)


def estimate(series: Series, counts: FloatArray, *, level: float, q: float = 0.5) -> Estimate:
    """Point estimate on all prompts with a percentile bootstrap interval.

    Parameters
    ----------
    series : RateSeries or RowSeries
    counts : np.ndarray, shape (n_boot, n_prompts)
        From :func:`bootstrap_counts`.
    level : float
        Interval level (0.95 for 95 %).
    q : float
        Quantile for row series.

    Returns
    -------
    estimate : Estimate
    """
    ones = np.ones((1, counts.shape[1]))
    point = float(statistic(series, ones, q=q)[0])
    lo, hi = _interval(statistic(series, counts, q=q), level)
    n_p, n_i = _n_prompts(series)
    return Estimate(point, lo, hi, n_p, n_i)


def difference(a: Series, b: Series, counts: FloatArray, *, level: float, q: float = 0.5) -> Estimate:
    """``metric(a) - metric(b)`` on paired resamples, with its interval.

    Parameters
    ----------
    a, b : RateSeries or RowSeries
        The same metric for two systems on the same prompt index.
    counts : np.ndarray, shape (n_boot, n_prompts)
    level : float
    q : float

    Returns
    -------
    difference : Estimate
        ``n_prompts`` counts prompts that contribute to both systems.
    """
    ones = np.ones((1, counts.shape[1]))
    point = float(statistic(a, ones, q=q)[0] - statistic(b, ones, q=q)[0])
    lo, hi = _interval(statistic(a, counts, q=q) - statistic(b, counts, q=q), level)
    pa, na = _n_prompts(a)
    pb, nb = _n_prompts(b)
    return Estimate(point, lo, hi, min(pa, pb), na + nb)


def timbre_verdicts(value: object) -> list[bool]:
    """Match verdicts (True/False) found in a ``timbre_match`` field; exempt/unknown skipped.

    formats §3 fixes the meaning ("family evidence per tonal-layer event, or null"),
    not the shape, so several shapes are read: a bool, a string (``match``/``pass`` vs
    ``mismatch``/``fail``), an object with ``match``/``matched``/``verdict``, or a list or
    mapping of those (one per event).
    """
    yes = {"match", "matched", "pass", "true", "yes"}
    no = {"mismatch", "no_match", "fail", "false", "no"}

    def one(v: object) -> bool | None:
        if isinstance(v, bool):
            return v
        if isinstance(v, str):
            return True if v.lower() in yes else False if v.lower() in no else None
        if isinstance(v, Mapping):
            for key in ("match", "matched", "verdict", "ok"):
                if key in v:
                    return one(v[key])
        return None

    if value is None:
        return []
    single = one(value)
    if single is not None:
        return [single]
    items: list[object] = []
    if isinstance(value, Mapping):
        items = list(value.values())
    elif isinstance(value, list):
        items = list(value)
    out = [one(v) for v in items]
    return [v for v in out if v is not None]
