"""The judging bar (calibration.judging): audible events by level band, negatives credited, the verdict."""

from __future__ import annotations

from timingbench.calibration.judging import band_of, figures, quietest_heard, verdict

BANDS = [(-18.0, -12.0), (-12.0, -6.0), (-6.0, 0.0)]


def _case(i: int, level: float | None, *, occurred: bool = True, outcome: str = "on_time",
          scenario: str = "on_time", family: str = "bass") -> tuple[dict, dict, dict]:  # type: ignore[type-arg]
    clip, eid = f"c{i}.wav", f"c{i}/e1"
    row = {"clip": clip, "event_id": eid, "kind": "instrument_entry", "family": family, "instructed_s": 5.0,
           "tolerance_s": 0.5, "outcome": outcome, "detected_s": 5.1 if outcome != "none" else None,
           "evidence": [{"source": "stems"}]}
    truth = {"event_id": eid, "occurred": occurred, "onset_s": 5.0 if occurred else None}
    man = {"clip": clip, "scenario": scenario, "levels_db": [] if level is None else [level]}
    return row, truth, man


def _figs(cases):  # type: ignore[no-untyped-def]
    rows = [c[0] for c in cases]
    truth = {c[1]["event_id"]: c[1] for c in cases}
    man = {c[2]["clip"]: c[2] for c in cases}
    return figures(rows, truth, man, bands=BANDS, min_level_db=-12.0, offset_match_s=0.25)


def test_bands_and_the_quietest_heard() -> None:
    assert band_of(-12.0, BANDS) == "-12..-6" and band_of(0.0, BANDS) == "-6..0" and band_of(-20.0, BANDS) is None
    cases = [_case(i, lv, outcome="on_time" if lv >= -12 else "none") for i, lv in enumerate([-15, -12, -9, -3, 0])]
    f = _figs(cases)["bass"]["stems"]
    assert f["on_time_by_band"] == {"-18..-12": [0, 1], "-12..-6": [2, 2], "-6..0": [2, 2]}
    assert f["audible"] == [4, 4] and f["quietest_heard"] == "-12..-6"
    assert quietest_heard({"-18..-12": [1, 1], "-12..-6": [0, 1], "-6..0": [1, 1]}, BANDS) == "-6..0"


def test_the_bar() -> None:
    on = [_case(i, -6.0) for i in range(8)]
    neg = [_case(100 + i, None, occurred=False, outcome="none", scenario="absent") for i in range(20)]
    f = _figs(on + neg)["bass"]["stems"]
    assert verdict(f, min_on_time=0.8, min_events=8, max_negative_rate=0.05, min_negatives=10) == (True, None)
    one = neg[:-1] + [_case(200, None, occurred=False, outcome="on_time", scenario="busy_decoy")]
    f = _figs(on + one)["bass"]["stems"]
    assert f["negatives_credited"] == [1, 20] and f["busy_decoys_none"] == [0, 1]
    assert verdict(f, min_on_time=0.8, min_events=8, max_negative_rate=0.05, min_negatives=10)[0] is True
    f = _figs(on[:7] + neg)["bass"]["stems"]
    assert verdict(f, min_on_time=0.8, min_events=8, max_negative_rate=0.05,
                   min_negatives=10) == (False, "dev_audible_on_time_events_below_8")
    f = _figs(on + neg[:9])["bass"]["stems"]
    assert verdict(f, min_on_time=0.8, min_events=8, max_negative_rate=0.05,
                   min_negatives=10) == (False, "dev_negatives_below_10")


def test_corpus_figures_read_a_results_folder_with_the_configured_bar(tmp_path, config) -> None:  # type: ignore[no-untyped-def]
    import json

    from timingbench.calibration.judging import corpus_figures

    on = [_case(i, -6.0) for i in range(8)]
    neg = [_case(100 + i, None, occurred=False, outcome="none", scenario="absent") for i in range(10)]
    corpus, results = tmp_path / "corpus", tmp_path / "results"
    corpus.mkdir()
    results.mkdir()
    for name, rows in (("truth.jsonl", [c[1] for c in on + neg]),
                       ("manifest.jsonl", [{**c[2], "split": "dev"} for c in on + neg])):
        (corpus / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (results / "events.jsonl").write_text("".join(json.dumps(c[0]) + "\n" for c in on + neg), encoding="utf-8")
    out = corpus_figures(corpus, results, config)
    bands = [tuple(b) for b in config.params.calibration.judge_level_bands_db]
    assert out["splits"] == ["dev"] and out["bands"] == bands
    assert out["figures"]["bass"]["stems"]["audible"] == [8, 8]
    assert out["verdicts"]["bass"]["stems"] == [True, None]
    strict = config.with_value("calibration.judge_min_events", 9)
    assert corpus_figures(corpus, results, strict)["verdicts"]["bass"]["stems"][0] is False
