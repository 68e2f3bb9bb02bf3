"""The two-level change point of a presence curve: oracle against brute-force least squares, and its decisions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from timingbench.config import load_config
from timingbench.errors import ParameterError
from timingbench.identity.changepoint import best_step, split_scores
from timingbench.identity.decide import PresenceMeasure, measure, step_gates
from timingbench.identity.evidence import FamilyEvidence

HOP = 0.32


def brute_force_split(x: np.ndarray, *, rising: bool, min_k: int, max_k: int) -> int | None:
    """The split (columns before it) of least two-level squared error among those stepping the asked way."""
    best, best_sse = None, np.inf
    for k in range(min_k, max_k + 1):
        a, b = x[:k], x[k:]
        if (b.mean() - a.mean()) * (1 if rising else -1) <= 0:
            continue
        sse = ((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()
        if sse < best_sse - 1e-12:
            best, best_sse = k, sse
    return best


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-8, 8, allow_nan=False), min_size=8, max_size=60), st.booleans())
def test_best_step_is_the_least_squares_split(values: list[float], rising: bool) -> None:
    x = np.asarray(values)
    t = HOP * np.arange(x.size)
    step = best_step(x, t, lo_s=0.0, hi_s=float(t[-1]), rising=rising, min_before_s=3 * HOP, min_after_s=3 * HOP)
    k = brute_force_split(x, rising=rising, min_k=3, max_k=x.size - 3)
    if k is None:
        assert step is None
        return
    assert step is not None
    score = split_scores(x, rising=rising)
    # ties: the brute force keeps the first split; the score's argmax too, up to rounding
    got = int(round(step.time_s / HOP + 0.5))
    assert got == k or np.isclose(score[got - 1], score[k - 1], rtol=1e-9, atol=1e-9)


def test_clean_step_found_at_its_edge_with_median_levels() -> None:
    t = HOP * np.arange(40)
    x = np.where(t < 6.0, -4.0, 2.0)
    x[25] = -10.0  # one stray column after the step does not move the median level
    step = best_step(x, t, lo_s=0.0, hi_s=12.48, rising=True, min_before_s=1.0, min_after_s=1.0)
    assert step is not None
    assert abs(step.time_s - 6.0) <= HOP
    assert step.before == -4.0 and step.after == 2.0 and step.size == 6.0
    assert best_step(x, t, lo_s=0.0, hi_s=12.48, rising=False, min_before_s=1.0, min_after_s=1.0) is None


def test_best_step_refuses_bad_input() -> None:
    with pytest.raises(ParameterError, match="finite"):
        best_step([0.0, np.nan, 1.0], [0.0, 0.3, 0.6], lo_s=0, hi_s=1, rising=True, min_before_s=0, min_after_s=0)
    with pytest.raises(ParameterError, match="one length"):
        best_step([0.0, 1.0], [0.0], lo_s=0, hi_s=1, rising=True, min_before_s=0, min_after_s=0)


def _evidence(z: np.ndarray, family: str = "percussion") -> FamilyEvidence:
    t = HOP * np.arange(z.size)
    return FamilyEvidence(times=t, curves={family: 1 / (1 + np.exp(-z))}, backend="tagger", exempt={},
                          window_s=HOP, presence_times={family: t}, presence_logits={family: z})


@pytest.mark.parametrize(("before", "after", "entry", "verdict"), [
    (-5.0, 1.0, True, "pass"), (-5.0, -4.5, True, "fail"), (1.0, -5.0, False, "pass"), (1.0, 0.5, False, "fail")])
def test_decide_thresholds_the_step_size(before: float, after: float, entry: bool, verdict: str) -> None:
    t = HOP * np.arange(40)
    z = np.where(t < 6.0, before, after)
    params = load_config().params.presence
    found = measure(_evidence(z), "percussion", entry=entry, lo_s=1.0, hi_s=11.0, params=params)
    if found.step is None:
        assert verdict == "fail"
        return
    gates = dict(step_gates(found, "percussion", entry=entry, params=params))
    assert gates["family_change"][0] == verdict


def test_entrance_near_the_clip_start_is_decided_on_the_pre_roll_there_is() -> None:
    t = HOP * np.arange(40)
    z = np.where(t < 0.6, -5.0, 1.0)
    params = load_config().params.presence
    found = measure(_evidence(z), "percussion", entry=True, lo_s=0.0, hi_s=5.6, params=params)
    assert isinstance(found, PresenceMeasure) and found.step is not None
    assert found.short_context and 0 < found.quiet_s < params.min_side_s
    assert abs(found.step.time_s - 0.6) <= HOP
    # away from the start a split is never placed with less than min_side_s of columns before it
    z2 = np.where(t < 6.0, -5.0, 1.0)
    far = measure(_evidence(z2), "percussion", entry=True, lo_s=5.4, hi_s=11.0, params=params)
    assert far.step is not None and not far.short_context
    assert far.step.before_s >= params.min_side_s - HOP / 2 and far.step.time_s > 6.0


def test_pooled_presence_is_the_head_on_averaged_embeddings() -> None:
    import torch

    from timingbench.models.tagger import TaggerColumns, pooled_logits, tagger_for

    tagger = tagger_for(load_config().params.tagger)
    rng = np.random.default_rng(3)
    c = int(tagger.shape.last)
    emb = rng.normal(size=(c, 7)).astype(np.float32)
    with torch.no_grad():
        raw = tagger.folded.head(torch.from_numpy(emb.T.copy())).numpy().T
        mid = tagger.folded.head(torch.from_numpy(emb[:, 2:5].mean(axis=1)[None])).numpy()[0]
    cols = TaggerColumns(times=0.32 * np.arange(7), logits=raw, embeddings=emb, labels=tagger.labels,
                         weights=tagger.weights)
    np.testing.assert_allclose(pooled_logits(cols, tagger, span_s=0.1), raw, atol=1e-6)
    pooled = pooled_logits(cols, tagger, span_s=0.96)
    np.testing.assert_allclose(pooled[:, 3], mid, atol=1e-4)
    assert not np.allclose(pooled[:, 3], raw[:, 3], atol=1e-3)
