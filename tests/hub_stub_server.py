"""A loopback stand-in for the model hosts, for `timingbench models fetch` tests.

Served on 127.0.0.1 from a thread (:func:`serving`):

- ``GET|HEAD /files/<path>``: files under ``files_root`` (the demucs download host layout);
- ``GET /api/models/<org>/<name>[/revision/<rev>]``: a Hugging Face hub model listing with
  per-file sizes, git blob ids and, for weights, LFS SHA-256;
- ``GET|HEAD /<org>/<name>/resolve/<rev>/<file>``: the file, with ``X-Repo-Commit`` and ``ETag``.

``Hub.tamper`` maps a path to bytes served in place of the real file (a corrupted mirror).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def git_blob_sha1(data: bytes) -> str:
    """The git blob id of ``data`` (what the hub lists for a small file)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Hub:
    """Files and hub repositories to serve: ``hf_repos`` maps a model id to a folder."""

    def __init__(self, files_root: Path, hf_repos: dict[str, Path]) -> None:
        self.files_root = files_root
        self.hf_repos = hf_repos
        self.requests: list[str] = []
        self.tamper: dict[str, bytes] = {}

    def info(self, repo: str) -> dict[str, Any]:
        root = self.hf_repos[repo]
        sibs = []
        for p in sorted(root.rglob("*")):
            if p.is_file():
                data = p.read_bytes()
                s: dict[str, Any] = {"rfilename": p.relative_to(root).as_posix(), "size": len(data),
                                     "blobId": git_blob_sha1(data)}
                if p.suffix in (".safetensors", ".bin"):
                    s["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data), "pointerSize": 130}
                sibs.append(s)
        return {"id": repo, "modelId": repo, "sha": COMMIT, "siblings": sibs, "private": False}


def _handler(hub: Hub) -> type[BaseHTTPRequestHandler]:
    class H(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send(self, body: bytes, headers: dict[str, str], status: int = 200) -> None:
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _route(self) -> None:
            path = self.path.split("?", 1)[0]
            hub.requests.append(f"{self.command} {self.path}")
            if path in hub.tamper:
                return self._send(hub.tamper[path], {"X-Repo-Commit": COMMIT, "ETag": '"tampered"'})
            if path.startswith("/files/"):
                f = hub.files_root / path[len("/files/"):]
                if f.is_file():
                    return self._send(f.read_bytes(), {"Content-Type": "application/octet-stream"})
                return self._send(b"not found", {}, 404)
            if path.startswith("/api/models/"):
                rest = path[len("/api/models/"):]
                repo = "/".join(rest.split("/")[:2])
                if repo in hub.hf_repos:
                    return self._send(json.dumps(hub.info(repo)).encode(), {"Content-Type": "application/json"})
                return self._send(b'{"error": "Repository not found"}', {"X-Error-Code": "RepoNotFound"}, 404)
            parts = path.strip("/").split("/")
            if len(parts) >= 5 and parts[2] == "resolve":
                repo = "/".join(parts[:2])
                fname = "/".join(parts[4:])
                root = hub.hf_repos.get(repo)
                if root is not None and (root / fname).is_file():
                    data = (root / fname).read_bytes()
                    etag = (hashlib.sha256(data).hexdigest() if fname.endswith((".safetensors", ".bin"))
                            else git_blob_sha1(data))
                    return self._send(data, {"X-Repo-Commit": COMMIT, "ETag": f'"{etag}"',
                                             "Content-Type": "application/octet-stream"})
                return self._send(b"not found", {"X-Error-Code": "EntryNotFound"}, 404)
            return self._send(b"not found", {}, 404)

        do_GET = _route
        do_HEAD = _route

    return H


@contextlib.contextmanager
def serving(hub: Hub) -> Iterator[str]:
    """Serve ``hub`` on a free loopback port; yields the base URL; always stops the server."""
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _handler(hub))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()
