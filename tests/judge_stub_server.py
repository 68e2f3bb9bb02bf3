"""A scripted OpenAI-compatible chat server on 127.0.0.1, for judge tests.

Run as a process: ``python judge_stub_server.py SCRIPT.json``. It binds a free loopback
port, prints ``PORT <n>`` on stdout and serves ``POST /v1/chat/completions`` until it has
been idle for ``idle_timeout_s`` or alive for ``max_lifetime_s`` (it always stops by
itself). ``GET /stats`` returns the number of requests seen per rule.

The script is JSON::

    {"rules": [{"match": "Ground truth:\\nLeipzig", "replies": [R1, R2, ...]}, ...],
     "default": R, "idle_timeout_s": 30, "max_lifetime_s": 120}

A request is answered by the first rule whose ``match`` occurs in the last message; its
k-th hit gets reply ``k`` (the last reply repeats). A reply is an object with any of
``delay_s`` (sleep first), ``status`` (HTTP status, default 200), ``content`` (the
assistant message) or ``raw`` (a literal response body instead of a chat completion).

Tests use :func:`running_stub`, which starts the process and always stops it.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class _State:
    def __init__(self, script: dict[str, Any]) -> None:
        self.script = script
        self.lock = threading.Lock()
        self.hits: dict[str, int] = {}
        self.last_activity = time.monotonic()

    def pick(self, text: str) -> tuple[str, dict[str, Any]]:
        with self.lock:
            self.last_activity = time.monotonic()
            for k, rule in enumerate(self.script.get("rules", [])):
                if rule["match"] in text:
                    name = rule.get("name", str(k))
                    n = self.hits.get(name, 0)
                    self.hits[name] = n + 1
                    replies = rule["replies"]
                    return name, replies[min(n, len(replies) - 1)]
            self.hits["default"] = self.hits.get("default", 0) + 1
            return "default", self.script.get("default", {"content": "yes"})


def _handler(state: _State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/stats":
                with state.lock:
                    body = json.dumps({"hits": state.hits}).encode()
                self._send(200, body)
            elif self.path.endswith("/models"):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "stub"}]}).encode())
            else:
                self._send(404, b"{}")

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length", "0"))
            try:
                req = json.loads(self.rfile.read(length))
                text = req["messages"][-1]["content"]
                model = req.get("model", "stub")
            except (ValueError, KeyError, IndexError, TypeError):
                self._send(400, b'{"error": "bad request"}')
                return
            if not self.path.endswith("/chat/completions"):
                self._send(404, b'{"error": "not found"}')
                return
            _, reply = state.pick(text)
            if reply.get("delay_s"):
                time.sleep(float(reply["delay_s"]))
            status = int(reply.get("status", 200))
            if "raw" in reply:
                body = str(reply["raw"]).encode()
            elif status != 200:
                body = json.dumps({"error": {"message": "scripted failure"}}).encode()
            else:
                body = json.dumps(
                    {
                        "id": "stub",
                        "object": "chat.completion",
                        "model": model,
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": reply.get("content", "")},
                             "finish_reason": "stop"}
                        ],
                    }
                ).encode()
            self._send(status, body)

    return Handler


def serve(script_path: str) -> None:
    """Serve the script at ``script_path`` until idle or out of lifetime."""
    script = json.loads(Path(script_path).read_text(encoding="utf-8"))
    state = _State(script)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    start = time.monotonic()
    idle = float(script.get("idle_timeout_s", 30.0))
    life = float(script.get("max_lifetime_s", 120.0))

    def watchdog() -> None:
        while True:
            time.sleep(0.2)
            now = time.monotonic()
            if now - start > life or now - state.last_activity > idle:
                server.shutdown()
                return

    threading.Thread(target=watchdog, daemon=True).start()
    server.serve_forever(poll_interval=0.1)
    server.server_close()


@contextlib.contextmanager
def running_stub(script: dict[str, Any], tmp_path: Path) -> Iterator[str]:
    """Start the stub with ``script``; yield its base URL (``http://127.0.0.1:<port>/v1``).

    The process is terminated on exit and stops by itself after its idle timeout.
    """
    path = tmp_path / "stub_script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline().strip() if proc.stdout is not None else ""
        if not line.startswith("PORT "):
            raise RuntimeError(f"judge stub did not start (said {line!r})")
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def stub_stats(base_url: str) -> dict[str, int]:
    """Requests seen per rule name by the stub at ``base_url``."""
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(base_url.rsplit("/v1", 1)[0] + "/stats", timeout=5) as resp:
        return dict(json.loads(resp.read())["hits"])


if __name__ == "__main__":
    serve(sys.argv[1])
