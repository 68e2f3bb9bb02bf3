"""Load on the labelling server: requests per second and latency under concurrent clients.

Run: ``.venv/bin/python benchmarks/label_server_load.py [--clients 50] [--seconds 20]``.

The server (``timingbench label``'s :class:`~timingbench.label.server.LabelServer`) runs in
a child process on a loopback port, over a made-up corpus of ``--clips`` 10-second clips.
Each client thread of this process loops over a fixed request mix on its own clip subset:
session and clip-detail reads (``GET``), the clip's log-mel (``GET``, cached after the first
analysis), a Layer-1 save and a new Layer-2 row (``POST``). Every request's status and
latency is recorded; a request that fails (no answer, or not ``200``) is counted.

Baseline: the same mix from one client, timed in the same run before the concurrent one.
After the run the server is stopped and the annotation file is loaded back with
:func:`~timingbench.annotation_io.load_annotations`: it must have no malformed
row, and every Layer-2 save the server confirmed must be in it (no lost save).
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from timingbench.annotation_io import load_annotations

SR = 44100

SERVER = r"""
import sys, threading
from timingbench.config import load_config
from timingbench.label.server import LabelApp, make_server
from timingbench.label.store import LabelStore
clips, prompts, out = sys.argv[1:4]
store = LabelStore(out, annotator="load", split="dev")
app = LabelApp(clips_dir=clips, prompts_path=prompts, store=store, cfg=load_config())
server = make_server(app, host="127.0.0.1", port=0)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()  # runs until the parent closes stdin
server.shutdown(); server.server_close(); store.close()
print("closed", flush=True)
"""


def make_corpus(root: Path, n: int) -> tuple[Path, Path, list[str]]:
    """``n`` 10-s clips (a tone with noise bursts) and one single-event prompt each."""
    clips = root / "clips"
    clips.mkdir()
    rng = np.random.default_rng(7)
    t = np.arange(10 * SR) / SR
    rows, names = [], []
    for k in range(n):
        y = 0.1 * np.sin(2 * np.pi * (220 + 10 * k) * t)
        for b in range(6):
            s = int((1.0 + 1.5 * b) * SR)
            y[s:s + 2000] += 0.4 * rng.standard_normal(2000) * np.exp(-np.arange(2000) / 600)
        pid = f"load{k:02d}"
        sf.write(clips / f"{pid}.wav", y.astype(np.float32), SR)
        names.append(f"{pid}.wav")
        rows.append({"id": pid, "family": "single_event", "text": "Drums at 2 s.", "duration_s": 10.0,
                     "tempo": None, "events": [{"id": f"{pid}/e1", "kind": "instrument_entry",
                                                "target": "drums", "family": "percussion",
                                                "time_s": 2.0, "tolerance_s": 0.5}]})
    prompts = root / "prompts.jsonl"
    prompts.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return clips, prompts, names


class Stats:
    """Latencies and failures, shared by the client threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: list[float] = []
        self.by_method: dict[str, list[float]] = {"GET": [], "POST": []}
        self.failures: list[str] = []
        self.layer2_saved: list[str] = []

    def add(self, method: str, seconds: float, failure: str | None = None, saved: str | None = None) -> None:
        with self.lock:
            self.latencies.append(seconds)
            self.by_method[method].append(seconds)
            if failure:
                self.failures.append(failure)
            if saved:
                self.layer2_saved.append(saved)


def request(port: int, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data is not None else {}
        conn.request(method, path, body=data, headers=headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def client(port: int, clips: list[str], until: float, stats: Stats, worker: int) -> None:
    k = 0
    while time.perf_counter() < until:
        clip = clips[(worker + k) % len(clips)]
        pid = clip.removesuffix(".wav")
        mix = [("GET", "/api/session", None), ("GET", f"/api/clip/{clip}", None),
               ("GET", f"/api/clip/{clip}/logmel", None),
               ("POST", f"/api/clip/{clip}/layer1", {"event_id": f"{pid}/e1", "occurred": True,
                                                     "onset_s": 2.0 + 0.01 * (k % 50), "onset_character": "hard",
                                                     "salience": 1 + k % 3}),
               ("POST", f"/api/clip/{clip}/layer2", {"source": f"w{worker}-{k}", "family": "percussion",
                                                     "onset_s": 1.0 + (k % 80) * 0.1, "salience": 2})]
        for method, path, body in mix:
            t0 = time.perf_counter()
            try:
                status, data = request(port, method, path, body)
            except OSError as exc:
                stats.add(method, time.perf_counter() - t0, f"{method} {path}: {exc}")
                continue
            dt = time.perf_counter() - t0
            if status != 200:
                stats.add(method, dt, f"{method} {path}: HTTP {status} {data[:120]!r}")
            elif path.endswith("/layer2"):
                stats.add(method, dt, saved=json.loads(data)["source"])
            else:
                stats.add(method, dt)
        k += 1


def run(port: int, clips: list[str], n_clients: int, seconds: float) -> tuple[Stats, float]:
    stats = Stats()
    t0 = time.perf_counter()
    until = t0 + seconds
    with ThreadPoolExecutor(max_workers=n_clients) as pool:
        for f in [pool.submit(client, port, clips, until, stats, w) for w in range(n_clients)]:
            f.result()
    return stats, time.perf_counter() - t0


def pct(xs: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(xs), q)) * 1000 if xs else float("nan")


def report(name: str, stats: Stats, wall: float) -> None:
    n = len(stats.latencies)
    print(f"{name:<22} {n:>7} req {n / wall:8.1f} req/s  p50 {pct(stats.latencies, 50):7.1f} ms  "
          f"p95 {pct(stats.latencies, 95):7.1f} ms  p99 {pct(stats.latencies, 99):7.1f} ms  "
          f"max {max(stats.latencies) * 1000 if n else float('nan'):7.1f} ms  failed {len(stats.failures)}",
          flush=True)
    for method, xs in stats.by_method.items():
        print(f"    {method:<4} {len(xs):>7} req  p50 {pct(xs, 50):7.1f} ms  p99 {pct(xs, 99):7.1f} ms")
    for f in stats.failures[:5]:
        print(f"    failure: {f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--baseline-seconds", type=float, default=5.0)
    ap.add_argument("--clips", type=int, default=8)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        clips_dir, prompts, names = make_corpus(root, args.clips)
        out = root / "annotations.jsonl"
        srv = subprocess.Popen([sys.executable, "-c", SERVER, str(clips_dir), str(prompts), str(out)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert srv.stdout is not None and srv.stdin is not None
        port = int(srv.stdout.readline())
        for name in names:  # analyse every clip once, so both runs read cached log-mels
            request(port, "GET", f"/api/clip/{name}/logmel")
        base, base_wall = run(port, names, 1, args.baseline_seconds)
        load, load_wall = run(port, names, args.clients, args.seconds)
        srv.stdin.close()
        srv.stdout.readline()
        srv.wait(30)
        ann = load_annotations(out)
    print(f"label server: {args.clips} clips, loopback, request mix session/detail/logmel/layer1/layer2")
    report("1 client (baseline)", base, base_wall)
    report(f"{args.clients} clients", load, load_wall)
    ratio = (len(load.latencies) / load_wall) / (len(base.latencies) / base_wall)
    print(f"throughput {args.clients} clients / 1 client: {ratio:.2f}x")
    saved = set(base.layer2_saved) | set(load.layer2_saved)
    on_disk = {r.source for r in ann.layer2}
    print(f"annotation file: {len(ann.layer1)} Layer-1 and {len(ann.layer2)} Layer-2 rows, "
          f"{len(ann.errors)} malformed; confirmed Layer-2 saves missing from it: {len(saved - on_disk)}")
    if ann.errors or saved - on_disk or base.failures or load.failures:
        sys.exit(1)


if __name__ == "__main__":
    main()
