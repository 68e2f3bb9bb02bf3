"""The public API: score_audio / score_folder give exactly the rows `timingbench score` writes."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
import soxr

import timingbench
from timingbench.cli import main
from timingbench.errors import ClipError, ParameterError, PromptError, TimingbenchError
from timingbench.jsonio import dumps_row

REPO = Path(__file__).resolve().parent.parent
#: Rendered scenarios: a whole-mix event, a tonal-layer entry (timbre evidence), a tempo target.
RECIPES = (("silence_then_start", 3101, {}), ("entry_on_time", 3102, {"family": "piano"}),
           ("tempo_click", 3103, {}), ("entry_on_time", 3104, {"family": "bass"}))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """Four rendered clips, a stereo 48 kHz copy of the first (sample 2), a corrupt file;
    and `timingbench score` run on them (RESULTS in ``cli/``)."""
    from timingbench.render import render_recipe

    root = tmp_path_factory.mktemp("api")
    rows = [render_recipe(r, seed=s, out_dir=root, duration_s=12.0, **kw).prompt for r, s, kw in RECIPES]
    clips = root / "clips"
    first = sorted(clips.glob("silence_then_start*.wav"))[0]
    x, sr = sf.read(first, dtype="float64")
    stereo = soxr.resample(np.stack([x, 0.5 * x], axis=1), sr, 48000)
    sf.write(clips / f"{first.stem}__2.wav", stereo, 48000, subtype="FLOAT")
    (clips / f"{rows[1]['id']}__3.wav").write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk")
    (root / "prompts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    rc = main(["score", str(clips), "--prompts", str(root / "prompts.jsonl"), "--out", str(root / "cli"),
               "--separation", "dsp", "--cache", str(root / "cache")])
    assert rc == 0
    return root


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _prompt_rows(corpus: Path) -> dict[str, dict]:
    return {r["id"]: r for r in map(json.loads, _lines(corpus / "prompts.jsonl"))}


def test_score_audio_gives_the_rows_the_command_writes(corpus):
    prompts = _prompt_rows(corpus)
    events = _lines(corpus / "cli" / "events.jsonl")
    clips = _lines(corpus / "cli" / "clips.jsonl")
    checked = 0
    for f in sorted((corpus / "clips").glob("*.wav")):
        row = next((c for c in clips if json.loads(c)["clip"] == f.name), None)
        assert row is not None
        if json.loads(row)["error"]:
            continue
        samples, sr = sf.read(f, dtype="float32", always_2d=True)
        pid = json.loads(row)["prompt_id"]
        res = timingbench.score_audio(samples, sr, prompts[pid], clip=f.name)
        assert dumps_row(res.to_dict()) == row
        assert [dumps_row(e) for e in res.event_rows()] == [e for e in events if json.loads(e)["clip"] == f.name]
        checked += 1
    assert checked == 5
    # what the comparison covered: a tempo object, timbre evidence, an on-time event, a resampled stereo clip
    all_clips = [json.loads(c) for c in clips]
    assert any(c["tempo"] for c in all_clips) and any(c["timbre_match"] for c in all_clips)
    assert any(json.loads(e)["outcome"] == "on_time" for e in events)
    assert any(c["clip"].endswith("__2.wav") and c["sample"] == 2 for c in all_clips)


def test_score_folder_in_memory_equals_the_command(corpus):
    res = timingbench.score_folder(corpus / "clips", corpus / "prompts.jsonl")
    assert [dumps_row(r) for r in res.event_rows()] == _lines(corpus / "cli" / "events.jsonl")
    assert [dumps_row(r) for r in res.clip_rows()] == _lines(corpus / "cli" / "clips.jsonl")
    cli_summary = json.loads((corpus / "cli" / "summary.json").read_text())
    # in memory there is no results folder for the paths to be relative to
    assert res.summary["clips_dir_relative"] is None and res.summary["prompts"]["path_relative"] is None
    mem = {**res.summary, "clips_dir_relative": cli_summary["clips_dir_relative"],
           "prompts": {**res.summary["prompts"], "path_relative": cli_summary["prompts"]["path_relative"]}}
    assert mem == cli_summary
    assert res.out_dir is None
    broken = next(c for c in res.clips if c.clip.endswith("__3.wav"))
    assert not broken.ok and "corrupt" in (broken.error or "")
    # its event counts as not delivered, with the reason
    assert [(e.outcome, e.extra["error"]) for e in broken.events] == [("none", broken.error)]


def test_score_folder_with_out_is_the_command(corpus, tmp_path):
    res = timingbench.score_folder(corpus / "clips", corpus / "prompts.jsonl", tmp_path / "r",
                                   cache_dir=corpus / "cache", jobs=2)
    for name in ("events.jsonl", "clips.jsonl"):
        assert (tmp_path / "r" / name).read_bytes() == (corpus / "cli" / name).read_bytes()
    assert [dumps_row(r) for r in res.event_rows()] == _lines(corpus / "cli" / "events.jsonl")
    assert res.out_dir == tmp_path / "r"


def test_score_audio_writes_no_file(corpus, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    f = sorted((corpus / "clips").glob("silence_then_start*.wav"))[0]
    samples, sr = sf.read(f, dtype="float32")
    res = timingbench.score_audio(samples, sr, _prompt_rows(corpus)[f.stem])
    assert res.clip == f.stem and res.events[0].outcome == "on_time"
    assert list(tmp_path.iterdir()) == []


def _synthetic(sr: int, rng: np.random.Generator) -> np.ndarray:
    """3 s of silence, then 7 s of a plucked-chord loop with noise hits (known start: 3.0 s)."""
    t = np.arange(int(10.0 * sr)) / sr
    x = np.zeros_like(t)
    for start in np.arange(3.0, 10.0, 0.5):
        k = t >= start
        env = np.exp(-(t[k] - start) * 6.0)
        for f0 in (220.0, 277.2, 329.6):
            x[k] += 0.12 * env * np.sin(2 * np.pi * f0 * (t[k] - start))
        n = min(int(0.03 * sr), int(k.sum()))
        i0 = int(np.argmax(k))
        x[i0:i0 + n] += 0.2 * rng.standard_normal(n) * np.exp(-np.arange(n) / (0.005 * sr))
    return x.astype(np.float32)


def test_notebook_style_score_audio_on_an_in_memory_array(rng):
    import timingbench as tb

    sr = 44100
    audio = _synthetic(sr, rng)
    prompt_row = {
        "id": "nb-1", "family": "single_event", "style": "ambient", "duration_s": 10.0,
        "text": "Start with 3 seconds of silence, then begin the music.", "tempo": None,
        "events": [{"id": "nb-1/e1", "kind": "music_start_after_silence", "target": "music",
                    "family": "mix", "time_s": 3.0, "tolerance_s": 0.5}],
    }
    res = tb.score_audio(audio, sr, prompt_row)
    ev = res.events[0]
    assert isinstance(res, tb.ClipResult) and isinstance(ev, tb.EventResult)
    assert ev.outcome == "on_time" and ev.on_time
    assert ev.detected_s == pytest.approx(3.0, abs=0.05)
    assert ev.error_s == pytest.approx(ev.detected_s - 3.0, abs=1e-6)
    assert res.event("nb-1/e1") is ev
    assert res.duration_s == pytest.approx(10.0) and res.duration_ok and res.tempo is None
    assert res.config_hash == tb.load_config().content_hash
    # the same clip at another rate scores the same event on time
    res48 = tb.score_audio(soxr.resample(audio, sr, 48000), 48000, prompt_row)
    assert res48.events[0].outcome == "on_time"
    # frozen results
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.outcome = "none"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ev.gates["search"] = "fail"  # type: ignore[index]


def test_score_audio_accepts_a_packaged_prompt_id(rng):
    ps = timingbench.load_prompts()
    assert len(ps.prompts) == 250 and not ps.errors
    pid = next(p.id for p in ps.prompts.values() if p.events[0].kind == "music_start_after_silence")
    p = ps.prompts[pid]
    sr = 22050
    t = np.arange(int(p.duration_s * sr)) / sr
    x = np.where(t >= p.events[0].time_s, 0.3 * np.sin(2 * np.pi * 330 * t), 0.0).astype(np.float32)
    res = timingbench.score_audio(x, sr, pid, family_evidence="none", chance=False)
    assert res.prompt_id == pid and len(res.events) == len(p.events)
    assert res.events[0].p_chance is None


GOOD = {"id": "x", "family": "single_event", "text": "t", "style": "s", "duration_s": 6.0, "tempo": None,
        "events": [{"id": "x/e1", "kind": "music_start_after_silence", "target": "music",
                    "family": "mix", "time_s": 2.0, "tolerance_s": 0.5}]}
TONE = (0.3 * np.sin(2 * np.pi * 440 * np.arange(6 * 44100) / 44100)).astype(np.float32)


@pytest.mark.parametrize("samples, sr, prompt, error, match", [
    (np.where(np.arange(TONE.size) == 5000, np.nan, TONE), 44100, GOOD, ClipError,
     r"samples: 1 non-finite .* frame 5000"),
    (np.zeros(0, np.float32), 44100, GOOD, ClipError, r"samples: empty"),
    (TONE[:10], 44100, GOOD, ClipError, r"samples: too short"),
    ((TONE * 32767).astype(np.int16), 44100, GOOD, ParameterError, r"samples: .*integer dtype int16"),
    (np.stack([TONE, TONE]), 44100, GOOD, ParameterError, r"samples: shape \(2, 264600\) .* samples\.T"),
    (TONE[None, None], 44100, GOOD, ParameterError, r"samples: expected shape"),
    (["a", "b"], 44100, GOOD, ParameterError, r"samples: expected real numbers"),
    (TONE, 0, GOOD, ParameterError, r"sr: 0 Hz is below"),
    (TONE, 44.1, GOOD, ParameterError, r"sr: expected a whole number"),
    (TONE, "44100", GOOD, ParameterError, r"sr: expected a whole number"),
    (TONE, 44100, dict(GOOD, duration_s=-1), PromptError, r"field 'duration_s'"),
    (TONE, 44100, {k: v for k, v in GOOD.items() if k != "events"}, PromptError, r"field 'events'"),
    (TONE, 44100, dict(GOOD, events=[dict(GOOD["events"][0], kind="drop")]), PromptError,
     r"field 'events\[0\]\.kind'|kind"),
    (TONE, 44100, "no-such-prompt", PromptError, r"prompt: 'no-such-prompt' is not an id"),
    (TONE, 44100, 42, PromptError, r"prompt: expected a prompt row"),
])
def test_bad_input_raises_naming_the_field(samples, sr, prompt, error, match):
    with pytest.raises(error, match=match):
        timingbench.score_audio(samples, sr, prompt, family_evidence="none", chance=False)


@pytest.mark.parametrize("kw, match", [
    ({"separation": "spleeter"}, r"separation: expected one of"),
    ({"family_evidence": "panns"}, r"family_evidence: expected one of"),
    ({"config": 3}, r"config: expected a Config"),
    ({"sample": -1}, r"sample: expected a whole number"),
])
def test_bad_options_raise_parameter_error(kw, match):
    with pytest.raises(ParameterError, match=match):
        timingbench.score_audio(TONE, 44100, GOOD, **kw)


def test_score_folder_rejects_bad_jobs_and_prompt_sets_with_out(tmp_path):
    with pytest.raises(ParameterError, match="jobs"):
        timingbench.score_folder(tmp_path, None, jobs=0)
    with pytest.raises(ParameterError, match="prompts: with out="):
        timingbench.score_folder(tmp_path, timingbench.load_prompts(), tmp_path / "r")
    with pytest.raises(TimingbenchError, match="clips folder not found"):
        timingbench.score_folder(tmp_path / "nope")


def test_rows_round_trip_and_keep_unknown_keys_in_place():
    row = {"clip": "a.wav", "prompt_id": "a", "sample": 0, "event_id": "a/e1", "kind": "music_end",
           "family": "mix", "instructed_s": 5.0, "tolerance_s": 0.5, "outcome": "off_time",
           "detected_s": 6.0, "error_s": 1.0, "gates": {"level": "pass"}, "rejected_by": None,
           "gate_stats": {"level": {"ratio_db": 12.5}}, "detector": "mix", "p_chance": 0.1, "floor_s": None}
    ev = timingbench.EventResult.from_dict(row)
    assert ev.extra["gate_stats"]["level"]["ratio_db"] == 12.5
    assert dumps_row(ev.to_dict()) == dumps_row(row)
    clip = {"clip": "a.wav", "prompt_id": "a", "sample": 0, "duration_s": 6.0, "duration_ok": True,
            "tempo": None, "timbre_match": [{"event_id": "a/e1", "match": None}], "error": None}
    cr = timingbench.ClipResult.from_dict(clip, [row])
    assert dumps_row(cr.to_dict()) == dumps_row(clip) and cr.events == (ev,)
    with pytest.raises(ParameterError, match="missing key"):
        timingbench.EventResult.from_dict({k: v for k, v in row.items() if k != "outcome"})
    with pytest.raises(ParameterError, match="another clip"):
        timingbench.ClipResult.from_dict(dict(clip, clip="b.wav"), [row])


def test_import_is_lazy():
    code = ("import sys, timingbench; heavy = [m for m in ('numpy', 'timingbench.api', 'timingbench.runner') "
            "if m in sys.modules]; print(heavy); timingbench.score_audio; print('timingbench.api' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(REPO)}).stdout.split("\n")
    assert out[0] == "[]" and out[1] == "True"
    assert set(timingbench.__all__) == set(timingbench._LAZY) | {"__version__"}
    assert {"score_audio", "score_folder", "load_config", "load_prompts", "ClipResult",
            "EventResult"} <= set(timingbench.__all__) <= set(dir(timingbench))
    assert all(getattr(timingbench, name) is not None for name in timingbench.__all__)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        timingbench.nope  # noqa: B018


def test_silent_samples_are_scored_as_the_command_scores_a_silent_file() -> None:
    res = timingbench.score_audio(np.zeros_like(TONE), 44100, GOOD, separation="dsp", family_evidence="none",
                                  chance=False)
    assert res.ok and res.extra["silent"] is True and res.duration_ok is True
    assert [(e.outcome, e.detected_s) for e in res.events] == [("none", None)]
