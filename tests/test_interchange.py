"""JAMS export (`timingbench export jams`) and arrays in seconds for mir_eval.onset / mir_eval.beat."""

from __future__ import annotations

import json
from pathlib import Path

import mir_eval
import numpy as np
import pytest
import soundfile as sf

from timingbench.api import ClipResult, EventResult
from timingbench.cli import main
from timingbench.errors import ParameterError, TimingbenchError
from timingbench.interchange import beats_for_mir_eval, detections_for_mir_eval, read_results

#: jams validates with a call that jsonschema deprecates (not ours to fix).
pytestmark = pytest.mark.filterwarnings("ignore:Passing a schema to Validator:DeprecationWarning")


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict:
    """Three rendered clips (a whole-mix event, a stem entry, a tempo target) and a corrupt one, scored."""
    from timingbench.render import render_recipe

    root = tmp_path_factory.mktemp("interchange")
    rendered = [render_recipe("silence_then_start", seed=3301, out_dir=root, duration_s=12.0),
                render_recipe("entry_on_time", seed=3302, out_dir=root, duration_s=12.0, family="percussion"),
                render_recipe("tempo_click", seed=3303, out_dir=root, duration_s=12.0)]
    rows = [r.prompt for r in rendered]
    (root / "clips" / f"{rows[0]['id']}__2.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", str(root / "clips"), "--prompts", str(root / "prompts.jsonl"), "--out",
                 str(root / "results"), "--separation", "dsp", "--cache", str(root / "cache")]) == 0
    return {"root": root, "results": root / "results", "rendered": rendered}


def test_read_results_gives_the_rows_back(scored):
    res = read_results(scored["results"])
    lines = (scored["results"] / "events.jsonl").read_text().splitlines()
    assert [json.loads(x) for x in lines] == res.event_rows()
    assert res.clips[0].config_hash == json.loads((scored["results"] / "summary.json").read_text())["config"]["hash"]
    with pytest.raises(TimingbenchError, match="not a results folder"):
        read_results(scored["root"])


def _only(jam, namespace: str, annotator: str):
    (ann,) = [a for a in jam.annotations
              if a.namespace == namespace and a.annotation_metadata.annotator.name == annotator]
    return ann


def test_export_jams_writes_valid_files(scored, tmp_path, capsys):
    import jams
    out = tmp_path / "jams"
    assert main(["export", "jams", str(scored["results"]), "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    assert "wrote 3 JAMS file(s)" in stdout and "skipped 1 clip(s)" in stdout and "__2.wav" in stdout
    res = read_results(scored["results"])
    summary = json.loads((scored["results"] / "summary.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{Path(c.clip).stem}.jams" for c in res.clips if c.ok)
    for c in (c for c in res.clips if c.ok):
        jam = jams.load(str(out / f"{Path(c.clip).stem}.jams"), validate=True, strict=True)
        jam.validate(strict=True)
        tb = jam.sandbox.timingbench
        assert tb["config_hash"] == summary["config"]["hash"] and tb["config_version"] == summary["config"]["version"]
        assert tb["package_version"] == summary["timingbench_version"] and tb["clip"] == c.to_dict()
        assert jam.file_metadata.duration == c.duration_s and jam.file_metadata.identifiers["clip"] == c.clip
        inst, det = (_only(jam, "onset", who) for who in ("prompt", "timingbench"))
        assert [o.time for o in inst.data] == [e.instructed_s for e in c.events]
        assert [o.value["event_id"] for o in inst.data] == [e.event_id for e in c.events]
        found = [e for e in c.events if e.detected_s is not None]
        assert [(o.time, o.value["event_id"], o.value["outcome"]) for o in det.data] == \
            [(e.detected_s, e.event_id, e.outcome) for e in found]
        if c.tempo:
            tempi = {who: _only(jam, "tempo", who).data[0].value for who in ("prompt", "timingbench")}
            assert tempi == {"prompt": c.tempo["target_bpm"], "timingbench": c.tempo["estimate_bpm"]}
        if c.events:
            # the two onset annotations are jams.eval's reference and estimate
            scores = jams.eval.onset(inst, det, window=0.5)
            ref, est = detections_for_mir_eval(c)
            assert scores["F-measure"] == mir_eval.onset.f_measure(ref, est, window=0.5)[0]
    assert any(c.tempo for c in res.clips if c.ok) and any(c.events for c in res.clips if c.ok)


def test_export_jams_is_deterministic(scored, tmp_path):
    from timingbench.interchange import export_jams

    a = export_jams(scored["results"], tmp_path / "a")
    b = export_jams(read_results(scored["results"]), tmp_path / "b")
    assert [p.read_bytes() for p in a] == [p.read_bytes() for p in b]


def test_export_of_a_folder_that_is_no_results_fails_cleanly(tmp_path, capsys):
    assert main(["export", "jams", str(tmp_path), "--out", str(tmp_path / "o")]) == 1
    assert "not a results folder" in capsys.readouterr().err


def test_detections_feed_mir_eval_onset(scored):
    res = read_results(scored["results"])
    on_time = [c for c in res.clips if c.events and c.events[0].outcome == "on_time"]
    assert on_time
    for c in on_time:
        ref, est = detections_for_mir_eval(scored["results"], c.clip)
        assert ref.dtype == np.float64 and ref.shape == (len(c.events),)
        f, p, r = mir_eval.onset.f_measure(ref, est, window=c.events[0].tolerance_s)
        assert (f, p, r) == (1.0, 1.0, 1.0)
    # rows, filters, and the clip that must be named
    rows = res.event_rows()
    clip = on_time[0].clip
    ref, est = detections_for_mir_eval([r for r in rows if r["clip"] == clip], kinds={"instrument_exit"})
    assert ref.size == 0 and est.size == 0
    with pytest.raises(ParameterError, match="name the clip"):
        detections_for_mir_eval(res)
    with pytest.raises(ParameterError, match="holds? .* clips|name one"):
        detections_for_mir_eval(rows)
    with pytest.raises(ParameterError, match="no clip 'nope.wav'"):
        detections_for_mir_eval(res, "nope.wav")


def test_detections_of_a_miss_and_an_off_time_event():
    base = {"clip": "a.wav", "prompt_id": "a", "sample": 0, "kind": "instrument_entry", "family": "bass",
            "tolerance_s": 0.5, "gates": {}, "rejected_by": None, "detector": "stem", "p_chance": 0.0,
            "floor_s": None}
    rows = [dict(base, event_id="a/e1", instructed_s=2.0, outcome="off_time", detected_s=3.5, error_s=1.5),
            dict(base, event_id="a/e2", instructed_s=6.0, outcome="none", detected_s=None, error_s=None),
            dict(base, event_id="a/e3", instructed_s=9.0, outcome="on_time", detected_s=9.1, error_s=0.1)]
    clip = ClipResult.from_dict({"clip": "a.wav", "prompt_id": "a", "sample": 0, "duration_s": 12.0,
                                 "duration_ok": True, "tempo": None, "timbre_match": None, "error": None}, rows)
    ref, est = detections_for_mir_eval(clip)
    np.testing.assert_array_equal(ref, [2.0, 6.0, 9.0])
    np.testing.assert_array_equal(est, [3.5, 9.1])
    f, p, r = mir_eval.onset.f_measure(ref, est, window=0.5)
    assert (p, r) == (0.5, pytest.approx(1 / 3))
    assert detections_for_mir_eval([EventResult.from_dict(r) for r in rows])[1].tolist() == [3.5, 9.1]
    with pytest.raises(ParameterError, match="is not the given result's clip"):
        detections_for_mir_eval(clip, "b.wav")


def test_beats_feed_mir_eval_beat(scored):
    rc = scored["rendered"][2]
    samples, sr = sf.read(rc.audio_path, dtype="float32")
    est = beats_for_mir_eval(samples, sr)
    ref = np.asarray(rc.meta["beats_s"], dtype=np.float64)
    assert est.dtype == np.float64 and np.all(np.diff(est) > 0)
    assert mir_eval.beat.f_measure(ref, est) > 0.9
