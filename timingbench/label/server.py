"""The labelling page's HTTP server (standard library only).

The server answers a fixed set of routes (see :class:`LabelHandler`): the page's three
static files, a JSON API, the audio of the matched clips and their log-mel spectrograms.
Safety rules:

- Only clips matched to a prompt (formats §2) are served, looked up by exact file
  name; the resolved file must lie inside CLIPS_DIR (a symlink pointing out of it is
  refused). Any other path is 404.
- Request bodies must be JSON objects (``Content-Type: application/json``) of at most
  ``label.max_body_bytes``; invalid ones get a 4xx answer ``{"error": "..."}`` naming the
  field.
- The ``Host`` header must name the address the server is bound to (or ``localhost``),
  which defeats DNS-rebinding pages reaching a loopback server.
- A write (``POST``) whose ``Origin`` is not the page's own (``http://`` + its ``Host``),
  or that the browser marks ``Sec-Fetch-Site: cross-site``, is refused (403): another
  site's page cannot save into the annotation file.
- The server binds to a loopback address unless its caller passes ``allow_remote``
  (the ``--host`` flag of ``timingbench label``, which also prints a warning).
"""

from __future__ import annotations

import ipaddress
import json
import mimetypes
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from timingbench.annotation_io import (
    ONSET_CHARACTERS,
    audacity_labels_from_text,
    audacity_labels_text,
)
from timingbench.audio import load_clip
from timingbench.config import Config
from timingbench.convert import frames_to_time, time_to_frames
from timingbench.errors import AnnotationError, TimingbenchError
from timingbench.label.spectrogram import encode_logmel, logmel_for_clip
from timingbench.label.store import LabelStore
from timingbench.packaged import LABEL_ASSETS
from timingbench.prompts import EVENT_FAMILIES, ClipRef, Prompt, load_prompts, match_clips

#: The page's static files (package data), by URL path.
STATIC_DIR = LABEL_ASSETS
STATIC_FILES = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/style.css": ("style.css", "text/css; charset=utf-8"),
}
_AUDIO_TYPES = {
    ".wav": "audio/wav", ".flac": "audio/flac", ".ogg": "audio/ogg", ".opus": "audio/ogg",
    ".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".aac": "audio/aac", ".aiff": "audio/aiff",
    ".aif": "audio/aiff",
}
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_RANGE_RE = re.compile(r"^bytes=(\d*)-(\d*)$")


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or address to bind) reaches only this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class HttpError(TimingbenchError):
    """An error answered to the client with an HTTP status and a JSON message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class _Analysed:
    duration_s: float
    logmel: dict[str, Any]


class LabelApp:
    """The labelling session: clips, prompts, the store and the analysis cache.

    Parameters
    ----------
    clips_dir : str or Path
        Folder of clips (formats §2 names).
    prompts_path : str or Path
        Prompt set (formats §1).
    store : LabelStore
        Where annotations are saved.
    cfg : Config
        Reads the ``label`` and ``features`` sections and the audio settings.
    results : str or Path, optional
        A ``timingbench score`` results folder: its verdicts for each clip are served
        (read-only) with the clip and drawn on the page.

    Raises
    ------
    PromptError
        If the prompt file or the clips folder cannot be read.
    TimingbenchError
        If no clip of the folder matches a prompt, or ``results`` is not a results folder.
    """

    def __init__(
        self, *, clips_dir: str | Path, prompts_path: str | Path, store: LabelStore, cfg: Config,
        results: str | Path | None = None,
    ) -> None:
        self.clips_dir = Path(clips_dir).resolve()
        self.prompt_set = load_prompts(prompts_path)
        match = match_clips(self.clips_dir, self.prompt_set.prompts)
        self.clips: dict[str, ClipRef] = {c.clip: c for c in match.clips}
        if not self.clips:
            raise TimingbenchError(
                f"{self.clips_dir}: no clip matches a prompt of {prompts_path} "
                "(clips are named <prompt_id>.<ext> or <prompt_id>__<k>.<ext>)"
            )
        self.unmatched = match.unmatched
        self.store = store
        self.cfg = cfg
        self.params = cfg.params.label
        self.max_body = self.params.max_body_bytes
        self._cache: OrderedDict[str, _Analysed] = OrderedDict()
        self._cache_size = self.params.spectrogram_cache_clips
        self._cache_lock = threading.Lock()
        self._clip_locks: dict[str, threading.Lock] = {c: threading.Lock() for c in self.clips}
        self.results_dir: Path | None = None
        self._verdicts: dict[str, list[dict[str, Any]]] = {}
        if results is not None:
            from timingbench.explain.results import load_results, verdict_view

            res = load_results(results)
            self.results_dir = res.path
            for row in res.events:
                if row.get("clip") in self.clips:
                    self._verdicts.setdefault(str(row["clip"]), []).append(verdict_view(row))

    # ------------------------------------------------------------------ lookups

    def clip_ref(self, name: str) -> ClipRef:
        """The matched clip called ``name``; 404 for anything else.

        Raises
        ------
        HttpError
            404 when ``name`` is not a matched clip or resolves outside CLIPS_DIR.
        """
        ref = self.clips.get(name)
        if ref is None:
            raise HttpError(404, f"no clip {name!r} in the clips folder")
        real = ref.path.resolve()
        if real.parent != self.clips_dir or not real.is_file():
            raise HttpError(404, f"clip {name!r} does not lie inside the clips folder")
        return ref

    def verdicts(self, name: str) -> list[dict[str, Any]] | None:
        """The scorer's verdicts on a matched clip (None when no results folder was given)."""
        self.clip_ref(name)
        if self.results_dir is None:
            return None
        return list(self._verdicts.get(name, []))

    def prompt_of(self, name: str) -> Prompt:
        """The prompt of a matched clip."""
        return self.prompt_set.prompts[self.clip_ref(name).prompt_id]

    def analysed(self, name: str) -> _Analysed:
        """Decode the clip and compute its log-mel once (kept in a small LRU cache).

        Raises
        ------
        HttpError
            422 when the clip cannot be decoded or analysed.
        """
        ref = self.clip_ref(name)
        with self._cache_lock:
            hit = self._cache.get(name)
            if hit is not None:
                self._cache.move_to_end(name)
                return hit
        with self._clip_locks[name]:
            with self._cache_lock:
                if name in self._cache:
                    return self._cache[name]
            try:
                clip = load_clip(ref.path, self.cfg)
                payload = encode_logmel(logmel_for_clip(clip, self.cfg))
            except TimingbenchError as exc:
                raise HttpError(422, str(exc)) from None
            entry = _Analysed(clip.duration_s, payload)
            with self._cache_lock:
                self._cache[name] = entry
                while len(self._cache) > self._cache_size:
                    self._cache.popitem(last=False)
            return entry

    def snap(self, t: float, name: str) -> float:
        """Snap seconds to the clip's analysis frame grid."""
        lm = self.analysed(name).logmel
        frame = time_to_frames([t], sr=lm["sr"], hop=lm["hop"])
        return round(float(frames_to_time(frame, sr=lm["sr"], hop=lm["hop"])[0]), 6)

    # ------------------------------------------------------------------ views

    def session(self) -> dict[str, Any]:
        """Session overview: annotator, clip list with per-layer progress, settings."""
        clips = []
        for name, ref in self.clips.items():
            prompt = self.prompt_set.prompts[ref.prompt_id]
            l1 = self.store.layer1(name)
            clips.append({
                "clip": name,
                "prompt_id": ref.prompt_id,
                "n_events": len(prompt.events),
                "l1_done": sum(1 for e in prompt.events if l1.get(e.id, {}).get("complete")),
                "l2_count": len(self.store.layer2(name)),
                "l2_done": self.store.layer2_done(name),
            })
        last = self.store.last_clip()
        return {
            "annotator": self.store.annotator,
            "split": self.store.split,
            "out": str(self.store.out),
            "clips": clips,
            "last_clip": last if last in self.clips else None,
            "families": list(EVENT_FAMILIES),
            "onset_characters": list(ONSET_CHARACTERS),
            "seek_step_s": self.params.seek_step_s,
            "zoom_px_per_s": list(self.params.zoom_px_per_s),
            "default_zoom_index": self.params.default_zoom_index,
            "results": None if self.results_dir is None else {
                "path": str(self.results_dir), "clips": sum(1 for c in self.clips if c in self._verdicts)},
        }

    def clip_detail(self, name: str) -> dict[str, Any]:
        """The prompt, its events and this annotator's annotations of one clip."""
        prompt = self.prompt_of(name)
        a = self.analysed(name)
        return {
            "clip": name,
            "duration_s": a.duration_s,
            "prompt": {
                "id": prompt.id, "text": prompt.text, "family": prompt.family,
                "events": [
                    {"id": e.id, "kind": e.kind, "target": e.target, "family": e.family,
                     "time_s": e.time_s, "tolerance_s": e.tolerance_s}
                    for e in prompt.events
                ],
            },
            "layer1": self.store.layer1(name),
            "layer2": self.store.layer2(name),
            "l2_done": self.store.layer2_done(name),
            "verdicts": self.verdicts(name),
        }

    # ------------------------------------------------------------------ edits

    def put_layer1(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Validate and save a Layer-1 update (``event_id`` plus the changed fields)."""
        prompt = self.prompt_of(name)
        fields = dict(body)
        event_id = fields.pop("event_id", None)
        if event_id not in {e.id for e in prompt.events}:
            raise HttpError(400, f"field 'event_id': {event_id!r} is not an instructed event "
                                 f"of prompt {prompt.id!r}")
        dur = self.analysed(name).duration_s
        if _is_time(fields.get("onset_s")):
            _check_within(fields["onset_s"], dur)
            fields["onset_s"] = self.snap(float(fields["onset_s"]), name)
        return self.store.put_layer1(clip=name, event_id=str(event_id), fields=fields,
                                     duration_s=dur)

    def put_layer2(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Validate and save a new or edited Layer-2 row."""
        self.clip_ref(name)
        fields = dict(body)
        dur = self.analysed(name).duration_s
        if _is_time(fields.get("onset_s")):
            _check_within(fields["onset_s"], dur)
            fields["onset_s"] = self.snap(float(fields["onset_s"]), name)
        return self.store.put_layer2(clip=name, fields=fields, duration_s=dur)

    def import_audacity(self, name: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """Import an Audacity label track's text for this clip (all lines or none)."""
        prompt = self.prompt_of(name)
        _only_fields(body, ("text", "filename"))
        text = body.get("text")
        if not isinstance(text, str):
            raise HttpError(400, "field 'text': must be the label file's text")
        src = body.get("filename") if isinstance(body.get("filename"), str) else "labels.txt"
        ann = audacity_labels_from_text(text, source=str(src), clip=name,
                                        annotator=self.store.annotator, split=self.store.split)
        errors = [str(e) for e in ann.errors]
        known = {e.id for e in prompt.events}
        for r in ann.layer1:
            if r.event_id not in known:
                errors.append(f"{r.where}: field 'event_id': {r.event_id!r} is not an "
                              f"instructed event of prompt {prompt.id!r}")
        if errors:
            raise HttpError(400, "nothing imported: " + "; ".join(errors))
        n = self.store.import_rows(ann.rows())
        return {"imported": n}

    def export_audacity(self, name: str) -> str:
        """This annotator's complete rows of a clip as an Audacity label track."""
        self.clip_ref(name)
        return audacity_labels_text(self.store.rows(name))


def _is_time(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v == v and abs(v) != float("inf")


def _check_within(t: float, duration_s: float) -> None:
    if t < 0 or t > duration_s:
        raise HttpError(400, f"field 'onset_s': {t} s lies outside the clip [0, {duration_s:.3f}] s")


def _only_fields(body: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise HttpError(400, f"unknown field(s) {unknown}; allowed: {list(allowed)}")


class LabelHandler(BaseHTTPRequestHandler):
    """Routes of the labelling server.

    ``GET /``, ``/static/app.js``, ``/static/style.css``; ``GET /api/session``;
    ``GET /api/clip/NAME`` (prompt + annotations), ``.../verdicts`` (the scorer's rows,
    read-only; null without a results folder), ``.../logmel`` (spectrogram JSON),
    ``.../audio`` (the file, with byte ranges), ``.../labels.txt`` (Audacity export);
    ``POST /api/clip/NAME/open``, ``.../layer1``, ``.../layer2``, ``.../layer2/delete``,
    ``.../layer2-done``, ``.../import-audacity``. ``NAME`` is the percent-encoded file name.
    """

    server: LabelServer
    protocol_version = "HTTP/1.1"
    server_version = "timingbench-label"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        if self.server.verbose:
            sys.stderr.write("label: " + (format % args) + "\n")

    # ------------------------------------------------------------------ plumbing

    def _send(self, status: int, body: bytes, content_type: str,
              headers: Mapping[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj, allow_nan=False).encode("utf-8"),
                   "application/json; charset=utf-8")

    def _segments(self) -> list[str]:
        path = urlsplit(self.path).path
        return [unquote(s) for s in path.split("/")[1:]]

    def _check_host(self) -> None:
        host = self.headers.get("Host", "")
        allowed = self.server.allowed_hosts
        if allowed is not None and host not in allowed:
            raise HttpError(403, f"Host {host!r} not allowed; open {self.server.url}")

    def _check_origin(self) -> None:
        """Refuse a write sent by another site's page (its ``Origin`` is not this page's)."""
        if self.headers.get("Sec-Fetch-Site", "").lower() == "cross-site":
            raise HttpError(403, "cross-site write refused (Sec-Fetch-Site: cross-site)")
        origin = self.headers.get("Origin")
        if origin is not None and origin != f"http://{self.headers.get('Host', '')}":
            raise HttpError(403, f"Origin {origin!r} not allowed to write; open {self.server.url}")

    def _body(self) -> dict[str, Any]:
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HttpError(415, "request body must be JSON (Content-Type: application/json)")
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise HttpError(411, "Content-Length is required")
        n = int(length)
        if n > self.server.app.max_body:
            raise HttpError(413, f"request body of {n} bytes exceeds the "
                                 f"{self.server.app.max_body}-byte limit")
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise HttpError(400, f"request body is not valid JSON ({exc})") from None
        if not isinstance(body, dict):
            raise HttpError(400, "request body must be a JSON object")
        return body

    def _guard(self, fn: Any) -> None:
        try:
            self._check_host()
            fn()
        except HttpError as exc:
            self.close_connection = True  # an unread request body must not be parsed as a request
            self._json(exc.status, {"error": str(exc)})
        except AnnotationError as exc:
            self.close_connection = True
            self._json(400, {"error": str(exc)})
        except (BrokenPipeError, ConnectionResetError):
            pass

    # ------------------------------------------------------------------ routes

    def do_GET(self) -> None:  # noqa: N802
        self._guard(self._get)

    def do_HEAD(self) -> None:  # noqa: N802
        self._guard(self._get)

    def do_POST(self) -> None:  # noqa: N802
        self._guard(self._post)

    def _get(self) -> None:
        app = self.server.app
        path = urlsplit(self.path).path
        if path in STATIC_FILES:
            fname, ctype = STATIC_FILES[path]
            self._send(200, (STATIC_DIR / fname).read_bytes(), ctype)
            return
        seg = self._segments()
        if seg == ["api", "session"]:
            self._json(200, app.session())
            return
        if len(seg) in (3, 4) and seg[:2] == ["api", "clip"]:
            name = seg[2]
            what = seg[3] if len(seg) == 4 else ""
            if what == "":
                self._json(200, app.clip_detail(name))
                return
            if what == "verdicts":
                self._json(200, {"clip": name, "verdicts": app.verdicts(name)})
                return
            if what == "logmel":
                self._json(200, app.analysed(name).logmel)
                return
            if what == "audio":
                self._audio(app.clip_ref(name).path)
                return
            if what == "labels.txt":
                text = app.export_audacity(name)
                stem = Path(name).stem
                self._send(200, text.encode("utf-8"), "text/plain; charset=utf-8",
                           {"Content-Disposition": f'attachment; filename="{stem}.txt"'})
                return
        raise HttpError(404, f"no such page: {path}")

    def _post(self) -> None:
        app = self.server.app
        self._check_origin()
        seg = self._segments()
        if len(seg) < 4 or seg[:2] != ["api", "clip"]:
            raise HttpError(404, f"no such endpoint: {urlsplit(self.path).path}")
        name, action = seg[2], "/".join(seg[3:])
        if action not in ("open", "layer1", "layer2", "layer2/delete", "layer2-done",
                          "import-audacity"):
            raise HttpError(404, f"no such endpoint: {urlsplit(self.path).path}")
        app.clip_ref(name)
        body = self._body()
        if action == "open":
            _only_fields(body, ())
            app.store.set_last_clip(name)
            self._json(200, {"ok": True})
        elif action == "layer1":
            self._json(200, app.put_layer1(name, body))
        elif action == "layer2":
            self._json(200, app.put_layer2(name, body))
        elif action == "layer2/delete":
            _only_fields(body, ("id",))
            rid = body.get("id")
            if not isinstance(rid, str):
                raise HttpError(400, "field 'id': must be the observed event's id")
            app.store.delete_layer2(clip=name, row_id=rid)
            self._json(200, {"ok": True})
        elif action == "layer2-done":
            _only_fields(body, ("done",))
            if not isinstance(body.get("done"), bool):
                raise HttpError(400, "field 'done': must be true or false")
            app.store.set_layer2_done(clip=name, done=body["done"])
            self._json(200, {"ok": True})
        else:
            self._json(200, app.import_audacity(name, body))

    def _audio(self, path: Path) -> None:
        size = path.stat().st_size
        ctype = _AUDIO_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0] \
            or "application/octet-stream"
        rng = self.headers.get("Range")
        start, end = 0, size - 1
        status = 200
        if rng:
            m = _RANGE_RE.match(rng.strip())
            if not m or (not m.group(1) and not m.group(2)):
                raise HttpError(416, f"unsupported Range {rng!r}")
            if m.group(1):
                start = int(m.group(1))
                end = min(int(m.group(2)), size - 1) if m.group(2) else size - 1
            else:  # suffix range: the last N bytes
                start = max(0, size - int(m.group(2)))
            if start > end or start >= size:
                self._send(416, b"", ctype, {"Content-Range": f"bytes */{size}"})
                return
            status = 206
        with open(path, "rb") as fh:
            fh.seek(start)
            data = fh.read(end - start + 1)
        headers = {"Accept-Ranges": "bytes"}
        if status == 206:
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        self._send(status, data, ctype, headers)


class LabelServer(ThreadingHTTPServer):
    """A threading HTTP server that carries the :class:`LabelApp`."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, app: LabelApp, *, host: str, port: int, verbose: bool = False) -> None:
        super().__init__((host, port), LabelHandler)
        self.app = app
        self.verbose = verbose
        bound_port = self.server_address[1]
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{bound_port}/"
        # loopback servers answer only requests addressed to loopback (DNS rebinding);
        # a server bound elsewhere on purpose (--host) is reached under any name
        self.allowed_hosts: set[str] | None = None
        if is_loopback(host):
            self.allowed_hosts = {f"{shown}:{bound_port}", f"localhost:{bound_port}",
                                  f"127.0.0.1:{bound_port}"}


def make_server(app: LabelApp, *, host: str, port: int, verbose: bool = False,
                allow_remote: bool = False) -> LabelServer:
    """Bind a :class:`LabelServer` (``port=0`` picks a free port; see ``server.url``).

    Parameters
    ----------
    allow_remote : bool
        Permit a non-loopback ``host`` (the page then edits files for anyone who reaches it).

    Raises
    ------
    TimingbenchError
        If ``host`` is not a loopback address and ``allow_remote`` is false, or the address
        cannot be bound (port in use, unknown host).
    """
    if not allow_remote and not is_loopback(host):
        raise TimingbenchError(f"refusing to serve the labelling page on non-loopback address {host!r}: "
                               "pass it with --host explicitly to expose the page to other machines")
    try:
        return LabelServer(app, host=host, port=port, verbose=verbose)
    except OSError as exc:
        raise TimingbenchError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); "
                               "choose another --port") from None


__all__ = ["HttpError", "LabelApp", "LabelHandler", "LabelServer", "is_loopback", "make_server"]
