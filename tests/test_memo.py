"""Memo keys built from what a computation reads (:mod:`timingbench.memo`).

A computation that reads a constant its key lacks fails at once: shown on a planted
computation and, for every memoised step of the detectors and identity rules, by removing
one constant from its declared reads and running it.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from timingbench.audio import load_clip
from timingbench.config import DEFAULT_CONFIG_PATH, load_config
from timingbench.detectors import percussion, stem, tonal
from timingbench.errors import MemoKeyError
from timingbench.features import compute_bank
from timingbench.memo import memo_key, memoised
from timingbench.scoring import DetectorParams, run_detector
from timingbench.verdicts import EventContext

SR = 44100
CFG = load_config(DEFAULT_CONFIG_PATH)


class _Owner:
    def __init__(self) -> None:
        self.store: dict[Any, Any] = {}
        self.calls = 0

    def memo(self, key: Any, fn: Any) -> Any:
        if key not in self.store:
            self.calls += 1
            self.store[key] = fn()
        return self.store[key]


def test_a_read_the_key_lacks_fails():
    p = CFG.params.stem
    with pytest.raises(MemoKeyError, match=r"StemParams\.smooth_s"):
        memoised(_Owner(), "planted", p, ("step_before_s",), lambda q: q.step_before_s + q.smooth_s)


def test_key_follows_the_declared_reads_only():
    p = CFG.params.stem
    owner = _Owner()
    reads = ("step_before_s",)
    a = memoised(owner, "x", p, reads, lambda q: q.step_before_s * 2)
    # a constant outside the reads does not split the memo (the sweep reuses measurements) ...
    b = memoised(owner, "x", dataclasses.replace(p, smooth_s=p.smooth_s + 1), reads, lambda q: q.step_before_s * 2)
    assert a == b and owner.calls == 1
    # ... one inside it does
    c = memoised(owner, "x", dataclasses.replace(p, step_before_s=p.step_before_s + 1), reads,
                 lambda q: q.step_before_s * 2)
    assert c != a and owner.calls == 2
    assert memo_key("x", p, reads, (1,)) != memo_key("x", p, reads, (2,))


def test_nested_reads_open_one_field_of_a_nested_set():
    p = CFG.params.percussion
    got = memoised(_Owner(), "n", p, ("absence.absence_guard_s",), lambda q: q.absence.absence_guard_s)
    assert got == p.absence.absence_guard_s
    with pytest.raises(MemoKeyError, match="absence_strict_percentile"):
        memoised(_Owner(), "n", p, ("absence.absence_guard_s",), lambda q: q.absence.absence_strict_percentile)
    # a set embedded two levels down (the windows every detector shares) opens the same way
    got = memoised(_Owner(), "n", p, ("absence.windows.strict_s",), lambda q: q.absence.windows.strict_s)
    assert got == CFG.params.windows.strict_s
    with pytest.raises(MemoKeyError, match="persistence_s"):
        memoised(_Owner(), "n", p, ("absence.windows.strict_s",), lambda q: q.absence.windows.persistence_s)


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A drone, then a high layer and a click train entering at 6 s (tonal and percussion work)."""
    rng = np.random.default_rng(3)
    n = 12 * SR
    t = np.arange(n) / SR
    y = 0.2 * np.sin(2 * np.pi * 110 * t) + 0.003 * rng.standard_normal(n)
    k = 6 * SR
    y[k:] += 0.3 * np.sin(2 * np.pi * 1320 * t[k:])
    for hit in range(k, n - 2000, SR // 4):
        y[hit:hit + 400] += 0.8 * rng.standard_normal(400) * np.exp(-np.arange(400) / 60)
    path = tmp_path_factory.mktemp("memo") / "clip.wav"
    sf.write(path, (0.5 * y / np.max(np.abs(y))).astype(np.float32), SR, subtype="PCM_24")
    return compute_bank(load_clip(path, CFG), CFG, separation="dsp")


def _fresh(bank: Any) -> Any:
    bank._memo.clear()
    return bank


@pytest.mark.parametrize("module,name,family", [
    (tonal, "WINDOW_READS", "synth"), (tonal, "REGISTER_READS", "synth"), (tonal, "STEP_READS", "synth"),
    (tonal, "MEASURE_READS", "synth"), (tonal, "SNAP_READS", "synth"),
    (percussion, "CURVE_READS", "percussion"), (percussion, "ROUTE_READS", "percussion"),
    (percussion, "ABSENCE_READS", "percussion"), (stem, "STEP_READS", "bass"),
])
def test_every_declared_read_is_needed(monkeypatch: pytest.MonkeyPatch, bank: Any, module: Any, name: str,
                                       family: str) -> None:
    ctxs = [EventContext(kind, family, family, 6.0, 1.0, 11.0) for kind in ("instrument_entry", "instrument_exit")]
    dp = DetectorParams.of(CFG)
    # the low percussion route (off by default) is the only reader of its band's constants
    dp = dataclasses.replace(dp, percussion=dataclasses.replace(dp.percussion, route_low_hz=40.0))
    for ctx in ctxs:
        run_detector(_fresh(bank), ctx, dp)  # runs with the declared reads
    reads = getattr(module, name)
    for dropped in reads:
        monkeypatch.setattr(module, name, tuple(r for r in reads if r != dropped))
        failed = []
        for ctx in ctxs:
            try:
                run_detector(_fresh(bank), ctx, dp)
            except MemoKeyError as exc:
                failed.append(str(exc))
        # the error names the field, or the nested set the key no longer opens at all
        assert any(part in f for f in failed for part in dropped.split(".")[-2:]), f"{name} without {dropped!r} ran"
    monkeypatch.setattr(module, name, reads)


def test_memo_module_is_the_only_memo_helper() -> None:
    pkg = Path(__file__).resolve().parent.parent / "timingbench"
    hits = [str(p.relative_to(pkg)) for p in pkg.rglob("*.py")
            if p.name != "memo.py" and '"memo", None)' in p.read_text(encoding="utf-8")]
    assert not hits, hits
