"""Tests of the labelling server: path safety, request validation, saving, resume."""

from __future__ import annotations

import http.client
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile as sf

from timingbench.annotation_io import load_annotations
from timingbench.cli import build_parser
from timingbench.config import Config
from timingbench.errors import AnnotationError
from timingbench.label.server import LabelApp, LabelServer, make_server
from timingbench.label.store import LabelStore

SR = 44100
HOP_S = 512 / SR


def write_corpus(root: Path, rng: np.random.Generator) -> tuple[Path, Path]:
    """Two 4 s clips (a tone, then noise bursts from 1.5 s) and their prompts."""
    clips = root / "clips"
    clips.mkdir()
    t = np.arange(4 * SR) / SR
    y = 0.1 * np.sin(2 * np.pi * 220 * t)
    for k in range(4):
        s = int((1.5 + 0.5 * k) * SR)
        y[s:s + 2000] += 0.5 * rng.standard_normal(2000) * np.exp(-np.arange(2000) / 600)
    sf.write(clips / "p1.wav", y.astype(np.float32), SR)
    sf.write(clips / "p2__1.wav", (0.5 * y).astype(np.float32), SR)
    (clips / "notes.txt").write_text("not audio")
    prompts = root / "prompts.jsonl"
    rows = [
        {"id": "p1", "family": "single_event", "text": "Bring in drums at 1.5 s.",
         "duration_s": 4.0, "tempo": None,
         "events": [{"id": "p1/e1", "kind": "instrument_entry", "target": "drums",
                     "family": "percussion", "time_s": 1.5, "tolerance_s": 0.5}]},
        {"id": "p2", "family": "event_sequence", "text": "Drums at 1 s, stop at 3 s.",
         "duration_s": 4.0, "tempo": None,
         "events": [{"id": "p2/e1", "kind": "instrument_entry", "target": "drums",
                     "family": "percussion", "time_s": 1.0, "tolerance_s": 0.5},
                    {"id": "p2/e2", "kind": "music_end", "target": "", "family": "mix",
                     "time_s": 3.0, "tolerance_s": 0.5}]},
    ]
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return clips, prompts


class Client:
    """A tiny HTTP client for one server."""

    def __init__(self, server: LabelServer) -> None:
        self.host, self.port = server.server_address[:2]

    def request(self, method: str, path: str, body: Any = None, *,
                headers: dict[str, str] | None = None, raw: bytes | None = None
                ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection(str(self.host), int(self.port), timeout=30)
        hdrs = {"Content-Type": "application/json"} if body is not None or raw is not None else {}
        hdrs.update(headers or {})
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        out = resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        conn.close()
        return out

    def json(self, method: str, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        status, _, data = self.request(method, path, body, **kw)
        return status, json.loads(data)


@pytest.fixture
def served(tmp_path: Path, rng: np.random.Generator, config: Config,
           monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Client, LabelStore, Path]]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    clips, prompts = write_corpus(tmp_path, rng)
    out = tmp_path / "ann.jsonl"
    store = LabelStore(out, annotator="ana", split="dev")
    app = LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=config)
    server = make_server(app, host="127.0.0.1", port=0)
    th = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    try:
        yield Client(server), store, out
    finally:
        server.shutdown()
        server.server_close()
        store.close()


@pytest.mark.parametrize(
    "path",
    [
        "/api/clip/..%2F..%2Fetc%2Fpasswd/audio",
        "/api/clip/%2Fetc%2Fpasswd/audio",
        "/api/clip/../prompts.jsonl/audio",
        "/api/clip/notes.txt/audio",
        "/api/clip/missing.wav/audio",
        "/static/../../pyproject.toml",
        "/../prompts.jsonl",
        "/api/clip/p1.wav/../../../prompts.jsonl",
    ],
)
def test_only_matched_clips_are_served(served: tuple[Client, LabelStore, Path], path: str) -> None:
    client, _, _ = served
    status, _, body = client.request("GET", path)
    assert status == 404
    assert b"root:" not in body and b"drums" not in body


def test_symlink_out_of_the_clips_folder_is_refused(
    tmp_path: Path, rng: np.random.Generator, config: Config
) -> None:
    clips, prompts = write_corpus(tmp_path, rng)
    outside = tmp_path / "secret.wav"
    sf.write(outside, np.zeros(SR, np.float32) + 0.1, SR)
    (clips / "p2__1.wav").unlink()
    os.symlink(outside, clips / "p2__1.wav")
    with LabelStore(tmp_path / "a.jsonl", annotator="x", split="dev") as store:
        app = LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=config)
        server = make_server(app, host="127.0.0.1", port=0)
        th = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        th.start()
        try:
            status, _, _ = Client(server).request("GET", "/api/clip/p2__1.wav/audio")
            ok, _, _ = Client(server).request("GET", "/api/clip/p1.wav/audio")
        finally:
            server.shutdown()
            server.server_close()
    assert status == 404 and ok == 200


def test_audio_byte_ranges(served: tuple[Client, LabelStore, Path], tmp_path: Path) -> None:
    client, _, _ = served
    whole = (tmp_path / "clips" / "p1.wav").read_bytes()
    status, hdr, body = client.request("GET", "/api/clip/p1.wav/audio", headers={"Range": "bytes=10-19"})
    assert status == 206 and body == whole[10:20]
    assert hdr["content-range"] == f"bytes 10-19/{len(whole)}"
    status, hdr, body = client.request("GET", "/api/clip/p1.wav/audio")
    assert status == 200 and body == whole and hdr["content-type"] == "audio/wav"
    status, _, _ = client.request("GET", "/api/clip/p1.wav/audio",
                                  headers={"Range": f"bytes={len(whole) + 5}-"})
    assert status == 416


@pytest.mark.parametrize(
    ("path", "body", "status", "needle"),
    [
        ("/api/clip/p1.wav/layer1", {"event_id": "p2/e1", "occurred": True}, 400, "event_id"),
        ("/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "salience": 5}, 400, "salience"),
        ("/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "salience": "3"}, 400, "salience"),
        ("/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "onset_s": 9.0}, 400, "onset_s"),
        ("/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "onset_s": -1}, 400, "onset_s"),
        ("/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "occurred": "yes"}, 400, "occurred"),
        ("/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "onset_character": "sharp"}, 400,
         "onset_character"),
        ("/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "clip": "p2__1.wav"}, 400, "unknown"),
        ("/api/clip/p1.wav/layer2", {"source": "kick", "family": "drums", "onset_s": 1.0}, 400,
         "family"),
        ("/api/clip/p1.wav/layer2", {"source": " ", "family": "bass", "onset_s": 1.0}, 400,
         "source"),
        ("/api/clip/p1.wav/layer2", {"source": "kick", "family": "bass"}, 400, "onset_s"),
        ("/api/clip/p1.wav/layer2", {"id": "nope", "source": "k", "family": "bass",
                                     "onset_s": 1.0}, 400, "id"),
        ("/api/clip/p1.wav/layer2/delete", {"id": "nope"}, 400, "id"),
        ("/api/clip/p1.wav/layer2-done", {"done": "yes"}, 400, "done"),
        ("/api/clip/p1.wav/open", {"x": 1}, 400, "unknown"),
        ("/api/clip/p1.wav/import-audacity", {"text": "1.0\t1.0\tdrums|kick|9\n"}, 400, "nothing imported"),
        ("/api/clip/p1.wav/import-audacity", {"text": "1.0\t1.0\t@p2/e1|hard|2\n"}, 400, "event_id"),
        ("/api/clip/x.wav/layer1", {"event_id": "x/e1"}, 404, "no clip"),
        ("/api/clip/p1.wav/nothing", {}, 404, "no such endpoint"),
    ],
)
def test_invalid_requests_get_a_clear_4xx(
    served: tuple[Client, LabelStore, Path], path: str, body: Any, status: int, needle: str
) -> None:
    client, _, out = served
    got, data = client.json("POST", path, body)
    assert got == status
    assert needle in data["error"]
    assert load_annotations(out).rows() == []  # nothing was saved


def test_malformed_bodies(served: tuple[Client, LabelStore, Path], config: Config) -> None:
    client, _, _ = served
    assert client.json("POST", "/api/clip/p1.wav/layer1", raw=b"{not json")[0] == 400
    assert client.json("POST", "/api/clip/p1.wav/layer1", raw=b"[1, 2]")[0] == 400
    assert client.json("POST", "/api/clip/p1.wav/layer1", raw=b"{}",
                       headers={"Content-Type": "text/plain"})[0] == 415
    # an oversized body is refused from its Content-Length, before it is read
    conn = http.client.HTTPConnection(str(client.host), int(client.port), timeout=30)
    conn.putrequest("POST", "/api/clip/p1.wav/import-audacity")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(int(config.params.label.max_body_bytes) + 1))
    conn.endheaders()
    resp = conn.getresponse()
    assert resp.status == 413 and b"limit" in resp.read()
    conn.close()
    # a page of another site reaching the loopback port under its own name is refused
    assert client.json("GET", "/api/session", headers={"Host": "evil.example:80"})[0] == 403


def test_layer1_draft_then_complete_row_is_saved_on_the_frame_grid(
    served: tuple[Client, LabelStore, Path],
) -> None:
    client, _, out = served
    status, rec = client.json("POST", "/api/clip/p1.wav/layer1",
                              {"event_id": "p1/e1", "occurred": True, "onset_s": 1.503})
    assert status == 200 and rec["complete"] is False
    frame = rec["onset_s"] / HOP_S
    assert abs(frame - round(frame)) < 1e-4 and abs(rec["onset_s"] - 1.503) <= HOP_S / 2
    assert load_annotations(out).rows() == []  # a draft (no character yet) is not a row yet
    _, rec = client.json("POST", "/api/clip/p1.wav/layer1",
                         {"event_id": "p1/e1", "onset_character": "hard"})
    assert rec["complete"] is False  # valid, written, but not rated yet
    assert load_annotations(out).layer1[0].salience is None
    status, rec = client.json("POST", "/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "salience": 3})
    assert rec["complete"] is True
    ann = load_annotations(out)
    assert ann.errors == [] and len(ann.layer1) == 1
    row = ann.layer1[0]
    assert (row.clip, row.event_id, row.occurred, row.onset_character, row.salience,
            row.annotator, row.split) == ("p1.wav", "p1/e1", True, "hard", 3, "ana", "dev")
    # "did not occur" clears the onset and is complete without a salience
    _, rec = client.json("POST", "/api/clip/p1.wav/layer1", {"event_id": "p1/e1", "occurred": False})
    assert rec["complete"] is True and rec["onset_s"] is None
    assert load_annotations(out).layer1[0].occurred is False


def test_layer2_add_edit_delete_and_export(served: tuple[Client, LabelStore, Path]) -> None:
    client, _, out = served
    _, row = client.json("POST", "/api/clip/p1.wav/layer2",
                         {"source": "snare", "family": "percussion", "onset_s": 2.0, "salience": 2})
    _, row2 = client.json("POST", "/api/clip/p1.wav/layer2",
                          {"source": "pad", "family": "synth", "onset_s": 0.0, "salience": 1})
    _, edited = client.json("POST", "/api/clip/p1.wav/layer2", {**{k: row[k] for k in (
        "id", "family", "onset_s", "salience")}, "source": "snare drum"})
    assert edited["id"] == row["id"] and edited["source"] == "snare drum"
    ann = load_annotations(out)
    assert sorted(r.source for r in ann.layer2) == ["pad", "snare drum"]
    status, _, txt = client.request("GET", "/api/clip/p1.wav/labels.txt")
    assert status == 200
    assert txt.decode().splitlines() == [
        "0.000000\t0.000000\tsynth|pad|1", f"{row['onset_s']:.6f}\t{row['onset_s']:.6f}\tpercussion|snare drum|2"
    ]
    assert client.json("POST", "/api/clip/p1.wav/layer2/delete", {"id": row2["id"]})[0] == 200
    assert [r.source for r in load_annotations(out).layer2] == ["snare drum"]


def test_audacity_import_through_the_page(served: tuple[Client, LabelStore, Path]) -> None:
    client, _, out = served
    text = "1.5\t1.5\t@p1/e1|soft|2\n2.0\t2.0\tpercussion|hat|1\n"
    status, res = client.json("POST", "/api/clip/p1.wav/import-audacity", {"text": text})
    assert status == 200 and res == {"imported": 2}
    ann = load_annotations(out)
    assert [(r.event_id, r.onset_s, r.annotator) for r in ann.layer1] == [("p1/e1", 1.5, "ana")]
    assert [(r.source, r.onset_s) for r in ann.layer2] == [("hat", 2.0)]


def test_session_progress_and_resume(served: tuple[Client, LabelStore, Path]) -> None:
    client, _, _ = served
    _, s = client.json("GET", "/api/session")
    assert [c["clip"] for c in s["clips"]] == ["p1.wav", "p2__1.wav"]
    assert s["last_clip"] is None and s["annotator"] == "ana"
    client.json("POST", "/api/clip/p2__1.wav/open", {})
    client.json("POST", "/api/clip/p2__1.wav/layer1", {"event_id": "p2/e2", "occurred": False})
    client.json("POST", "/api/clip/p2__1.wav/layer2-done", {"done": True})
    _, s = client.json("GET", "/api/session")
    p2 = s["clips"][1]
    assert s["last_clip"] == "p2__1.wav"
    assert (p2["n_events"], p2["l1_done"], p2["l2_done"]) == (2, 1, True)


def test_store_survives_a_kill_between_journal_and_compaction(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    with LabelStore(out, annotator="ana", split="dev") as st:
        st.put_layer1(clip="c.wav", event_id="c/e1",
                      fields={"occurred": True, "onset_s": 1.0, "onset_character": "hard"})
        st.put_layer1(clip="c.wav", event_id="c/e1", fields={"salience": None})
        before = out.read_text()
        st.put_layer1(clip="c.wav", event_id="c/e1", fields={"salience": 2})
        st.put_layer2(clip="c.wav", fields={"source": "x", "family": "bass", "onset_s": 2.0})
        st.set_last_clip("c.wav")
    # as if killed after the journal write and before the compacted file was replaced,
    # with a torn last journal line
    out.write_text(before)
    with open(out.with_name(out.name + ".journal"), "a") as fh:
        fh.write('{"op": "l2", "row": {"cl')
    with LabelStore(out, annotator="ana", split="dev") as st:
        assert st.layer1("c.wav")["c/e1"]["salience"] == 2
        assert [r["source"] for r in st.layer2("c.wav")] == ["x"]
        assert st.last_clip() == "c.wav"
    ann = load_annotations(out)
    assert ann.errors == [] and len(ann.layer1) == 1 and len(ann.layer2) == 1


def test_drafts_resume_from_the_journal(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    with LabelStore(out, annotator="ana", split="dev") as st:
        st.put_layer1(clip="c.wav", event_id="c/e1", fields={"occurred": True, "onset_s": 0.5})
    with LabelStore(out, annotator="ana", split="dev") as st:
        rec = st.layer1("c.wav")["c/e1"]
        assert rec["onset_s"] == 0.5 and rec["complete"] is False


def test_annotators_are_kept_apart(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    with LabelStore(out, annotator="ana", split="dev") as st:
        st.put_layer1(clip="c.wav", event_id="c/e1", fields={"occurred": False})
        st.put_layer2(clip="c.wav", fields={"source": "x", "family": "bass", "onset_s": 2.0})
    with LabelStore(out, annotator="bo", split="validation") as st:
        assert st.layer1("c.wav") == {} and st.layer2("c.wav") == []
        st.put_layer1(clip="c.wav", event_id="c/e1",
                      fields={"occurred": True, "onset_s": 1.0, "onset_character": "soft",
                              "salience": 1})
    ann = load_annotations(out)
    assert ann.errors == []
    assert sorted((r.annotator, r.occurred, r.split) for r in ann.layer1) == [
        ("ana", False, "dev"), ("bo", True, "validation")
    ]
    assert [r.annotator for r in ann.layer2] == ["ana"]


def test_second_server_on_the_same_file_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    with LabelStore(out, annotator="ana", split="dev"):
        with pytest.raises(AnnotationError, match="another labelling server"):
            LabelStore(out, annotator="bo", split="dev")


def test_store_refuses_a_file_with_malformed_rows(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    out.write_text('{"clip": "c.wav", "event_id": "c/e1", "occurred": "maybe", "annotator": "a"}\n')
    with pytest.raises(AnnotationError, match="would be lost"):
        LabelStore(out, annotator="ana", split="dev")
    assert "maybe" in out.read_text()  # untouched


def test_existing_rows_of_other_tools_are_kept_with_their_keys(tmp_path: Path) -> None:
    out = tmp_path / "a.jsonl"
    truth = {"clip": "c.wav", "prompt_id": "c", "event_id": "c/e1", "occurred": True,
             "onset_s": 6.0, "onset_character": "hard", "annotator": "renderer", "split": "dev",
             "recipe": "on_time"}
    out.write_text(json.dumps(truth) + "\n")
    with LabelStore(out, annotator="ana", split="dev") as st:
        st.put_layer2(clip="c.wav", fields={"source": "x", "family": "bass", "onset_s": 2.0})
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    # every key survives; a missing salience is written as an explicit null
    assert {**truth, "salience": None} in rows and len(rows) == 2


def test_cli_defaults_bind_loopback(config: Config) -> None:
    args = build_parser().parse_args(["label", "clips", "--prompts", "p.jsonl", "--out", "a.jsonl"])
    assert args.host is None and args.port is None  # resolved from the config at run time
    assert config.params.label.host == "127.0.0.1"
    assert args.func.__name__ == "run_label"


def _results_folder(root: Path) -> Path:
    """A results folder as `timingbench score` writes it, for the clips of :func:`write_corpus`."""
    res = root / "results"
    res.mkdir()
    rows = [
        {"clip": "p1.wav", "prompt_id": "p1", "sample": 0, "event_id": "p1/e1", "kind": "instrument_entry",
         "family": "percussion", "instructed_s": 1.5, "tolerance_s": 0.5, "outcome": "on_time",
         "detected_s": 1.486, "error_s": -0.014, "gates": {"detection": "pass"}, "rejected_by": None,
         "detector": "percussion", "p_chance": 0.0, "floor_s": 0.0036},
        {"clip": "p2__1.wav", "prompt_id": "p2", "sample": 1, "event_id": "p2/e2", "kind": "music_end",
         "family": "mix", "instructed_s": 3.0, "tolerance_s": 0.5, "outcome": "none", "detected_s": None,
         "error_s": None, "gates": {"detection": "pass", "decay": "fail"}, "rejected_by": "decay",
         "detector": "mix.stop", "p_chance": 0.0, "floor_s": 0.0084},
        {"clip": "other.wav", "prompt_id": "other", "sample": 0, "event_id": "other/e1", "kind": "music_end",
         "family": "mix", "instructed_s": 1.0, "tolerance_s": 0.5, "outcome": "none", "detected_s": None,
         "error_s": None, "gates": {}, "rejected_by": "detection", "detector": "mix.stop", "p_chance": None,
         "floor_s": None},
    ]
    (res / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return res


def test_scorer_verdicts_are_served_read_only(tmp_path: Path, rng: np.random.Generator, config: Config,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    clips, prompts = write_corpus(tmp_path, rng)
    res = _results_folder(tmp_path)
    with LabelStore(tmp_path / "a.jsonl", annotator="x", split="dev") as store:
        app = LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=config, results=res)
        server = make_server(app, host="127.0.0.1", port=0)
        th = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        th.start()
        try:
            c = Client(server)
            _, session = c.json("GET", "/api/session")
            _, one = c.json("GET", "/api/clip/p1.wav/verdicts")
            _, two = c.json("GET", "/api/clip/p2__1.wav")
            post, _ = c.json("POST", "/api/clip/p1.wav/verdicts", {})
            missing, _ = c.json("GET", "/api/clip/other.wav/verdicts")
        finally:
            server.shutdown()
            server.server_close()
    assert session["results"] == {"path": str(res), "clips": 2}
    (v,) = one["verdicts"]
    assert (v["event_id"], v["outcome"], v["detected_s"], v["instructed_s"]) == ("p1/e1", "on_time", 1.486, 1.5)
    # a clip with a row for only one of its events: that row, with why it was not credited
    assert [(x["event_id"], x["outcome"], x["rejected_by"]) for x in two["verdicts"]] == [("p2/e2", "none", "decay")]
    assert post == 404  # nothing writes to the results
    assert missing == 404  # a results row of a clip that is not on the page is not served


def test_without_results_the_verdict_layer_is_null(served: tuple[Client, LabelStore, Path]) -> None:
    client, _, _ = served
    _, session = client.json("GET", "/api/session")
    _, detail = client.json("GET", "/api/clip/p1.wav")
    _, only = client.json("GET", "/api/clip/p1.wav/verdicts")
    assert session["results"] is None and detail["verdicts"] is None and only["verdicts"] is None


def test_label_results_folder_must_exist(tmp_path: Path, rng: np.random.Generator, config: Config) -> None:
    from timingbench.errors import TimingbenchError

    clips, prompts = write_corpus(tmp_path, rng)
    with LabelStore(tmp_path / "a.jsonl", annotator="x", split="dev") as store:
        with pytest.raises(TimingbenchError, match=r"nowhere: results folder not found"):
            LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=config, results=tmp_path / "nowhere")
        (tmp_path / "half").mkdir()
        with pytest.raises(TimingbenchError, match=r"events.jsonl: not found"):
            LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=config, results=tmp_path / "half")


# ---------------------------------------------------------------------- attack surface

GET_ROUTES = ["", "/verdicts", "/logmel", "/audio", "/labels.txt"]
POST_ROUTES = [("/open", {}), ("/layer1", {"event_id": "p1/e1", "onset_s": 1.5}),
               ("/layer2", {"source": "x", "family": "bass", "onset_s": 1.0}),
               ("/layer2/delete", {"id": "x"}), ("/layer2-done", {"done": True}),
               ("/import-audacity", {"text": "1.5\t1.5\tp1/e1\n"})]
TRAVERSALS = ["..%2Fprompts.jsonl", "..%2F..%2F..%2Fetc%2Fpasswd", "%2Fetc%2Fpasswd", "..",
              "%2E%2E%2Fprompts.jsonl", "p1.wav%2F..%2F..%2Fprompts.jsonl", "notes.txt",
              "p1.wav%00.txt", "..%5Cprompts.jsonl", "clips%2Fp1.wav"]


@pytest.mark.parametrize("route", GET_ROUTES)
def test_path_traversal_is_refused_on_every_read_route(
    served: tuple[Client, LabelStore, Path], route: str
) -> None:
    client, _, _ = served
    for name in TRAVERSALS:
        status, _, body = client.request("GET", f"/api/clip/{name}{route}")
        assert status == 404, (name, route)
        assert b"root:" not in body and b"drums" not in body
    assert client.request("GET", f"/api/clip/p1.wav{route}")[0] == 200  # the route itself works


@pytest.mark.parametrize(("route", "body"), POST_ROUTES)
def test_path_traversal_is_refused_on_every_write_route(
    served: tuple[Client, LabelStore, Path], route: str, body: dict[str, Any]
) -> None:
    client, _, out = served
    before = out.read_bytes() if out.exists() else b""
    for name in TRAVERSALS:
        assert client.request("POST", f"/api/clip/{name}{route}", body)[0] == 404, (name, route)
    assert (out.read_bytes() if out.exists() else b"") == before
    assert not out.exists() or load_annotations(out).rows() == []


@pytest.mark.parametrize("route", [r for r, _ in POST_ROUTES])
def test_oversized_bodies_are_refused_on_every_write_route(
    served: tuple[Client, LabelStore, Path], config: Config, route: str
) -> None:
    client, _, out = served
    limit = int(config.params.label.max_body_bytes)
    for length in (limit + 1, 10 * limit, 2**62):
        # refused from its Content-Length alone: the server never reads (or buffers) the body
        conn = http.client.HTTPConnection(str(client.host), int(client.port), timeout=30)
        conn.putrequest("POST", f"/api/clip/p1.wav{route}")
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(length))
        conn.endheaders(b'{"text": "' + b"x" * 1000)
        resp = conn.getresponse()
        status, data = resp.status, json.loads(resp.read())
        conn.close()
        assert status == 413 and f"{limit}-byte limit" in data["error"]
    assert not out.exists() or load_annotations(out).rows() == []


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Origin": "https://127.0.0.1"},  # another scheme is another origin
    {"Sec-Fetch-Site": "cross-site"},
    {"Host": "evil.example"},
    {"Host": "evil.example", "Origin": "http://evil.example"},
])
def test_writes_from_a_foreign_origin_or_host_are_refused(
    served: tuple[Client, LabelStore, Path], headers: dict[str, str]
) -> None:
    client, _, out = served
    body = {"event_id": "p1/e1", "occurred": True, "onset_s": 1.5, "onset_character": "hard", "salience": 3}
    status, data = client.json("POST", "/api/clip/p1.wav/layer1", body, headers=headers)
    assert status == 403 and ("Origin" in data["error"] or "Host" in data["error"]
                              or "cross-site" in data["error"])
    assert not out.exists() or load_annotations(out).rows() == []
    # the same write from the page itself (its own origin) is accepted
    own = {"Origin": f"http://{client.host}:{client.port}", "Sec-Fetch-Site": "same-origin"}
    assert client.json("POST", "/api/clip/p1.wav/layer1", body, headers=own)[0] == 200
    assert len(load_annotations(out).layer1) == 1


def test_non_loopback_bind_needs_the_explicit_flag(tmp_path: Path, rng: np.random.Generator,
                                                   config: Config) -> None:
    from timingbench.errors import TimingbenchError
    from timingbench.label.server import is_loopback

    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert is_loopback("127.0.0.2") and not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    clips, prompts = write_corpus(tmp_path, rng)
    with LabelStore(tmp_path / "a.jsonl", annotator="x", split="dev") as store:
        app = LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=config)
        with pytest.raises(TimingbenchError, match="--host"):
            make_server(app, host="0.0.0.0", port=0)
        server = make_server(app, host="0.0.0.0", port=0, allow_remote=True)
        try:
            assert server.allowed_hosts is None  # reached under any name, as asked
        finally:
            server.server_close()


def _cli_label(tmp_path: Path, rng: np.random.Generator, extra: list[str],
               monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    from timingbench.cli import main

    clips, prompts = write_corpus(tmp_path, rng)
    bound: list[str] = []

    def serve_forever(self: LabelServer, poll_interval: float = 0.5) -> None:
        bound.append(str(self.server_address[0]))
        raise KeyboardInterrupt

    monkeypatch.setattr(LabelServer, "serve_forever", serve_forever)
    rc = main(["label", str(clips), "--prompts", str(prompts), "--out", str(tmp_path / "a.jsonl"),
               "--annotator", "x", "--port", "0", *extra])
    return rc, bound


def test_cli_exposes_the_page_only_with_host_and_warns(
    tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, bound = _cli_label(tmp_path, rng, ["--host", "0.0.0.0"], monkeypatch)
    assert rc == 0 and bound == ["0.0.0.0"]
    assert "warning: the page is reachable from other machines on 0.0.0.0" in capsys.readouterr().err


def test_cli_loopback_default_prints_no_warning(
    tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, bound = _cli_label(tmp_path, rng, [], monkeypatch)
    assert rc == 0 and bound == ["127.0.0.1"]
    assert "warning: the page is reachable" not in capsys.readouterr().err


def test_cli_refuses_a_configured_non_loopback_host_without_the_flag(
    tmp_path: Path, rng: np.random.Generator, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from timingbench.config import DEFAULT_CONFIG_PATH

    text = DEFAULT_CONFIG_PATH.read_text(encoding="utf-8")
    assert 'host: {value: "127.0.0.1"' in text
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(text.replace('host: {value: "127.0.0.1"', 'host: {value: "0.0.0.0"', 1), encoding="utf-8")
    rc, bound = _cli_label(tmp_path, rng, ["--config", str(cfg)], monkeypatch)
    assert rc == 1 and bound == []
    assert "non-loopback address '0.0.0.0'" in capsys.readouterr().err
