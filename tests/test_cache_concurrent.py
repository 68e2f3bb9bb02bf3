"""Two processes hammering the same feature-cache keys never read a half-written entry."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import numpy as np

from timingbench.features.cache import FORMAT_VERSION, read_entry, write_entry

KEYS = ("k0", "k1", "k2")
ROUNDS = 150


def _payload(key: str, writer: int, i: int) -> dict[str, object]:
    # large enough (~400 KB) that a non-atomic write would be seen half done
    n = 50_000 + 997 * ((writer * 31 + i) % 7)
    return {"writer": writer, "i": i, "n": n, "values": np.full(n, float(i), dtype=np.float64)}


def _hammer(root: str, writer: int, queue: mp.Queue) -> None:  # type: ignore[type-arg]
    bad: list[str] = []
    hits = misses = 0
    for i in range(ROUNDS):
        for key in KEYS:
            path = Path(root) / f"{key}.pkl"
            write_entry(path, key=key, payload=_payload(key, writer, i))
            other = Path(root) / f"{KEYS[(KEYS.index(key) + 1) % len(KEYS)]}.pkl"
            got = read_entry(other, key=other.stem)
            if got is None:
                misses += 1
                continue
            hits += 1
            vals = got.get("values")
            ok = (got.get("format") == FORMAT_VERSION and got.get("key") == other.stem
                  and isinstance(vals, np.ndarray) and vals.shape == (got["n"],)
                  and bool(np.all(vals == float(got["i"]))))
            if not ok:
                bad.append(f"{other.name}: writer {got.get('writer')} round {got.get('i')}")
    queue.put((writer, hits, misses, bad))


def test_two_processes_on_the_same_keys_never_see_a_torn_entry(tmp_path: Path) -> None:
    ctx = mp.get_context("spawn")
    queue: mp.Queue = ctx.Queue()  # type: ignore[type-arg]
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), w, queue)) for w in (1, 2)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    for _writer, hits, misses, bad in results:
        assert bad == []
        # every key is written before the neighbour is read, so after round 0 reads are hits:
        # a miss would mean a reader found a torn file (read_entry turns that into None)
        assert misses <= len(KEYS)
        assert hits >= ROUNDS * len(KEYS) - len(KEYS)
    # no temporary file is left behind, and every final entry is whole
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{k}.pkl" for k in KEYS]
    for key in KEYS:
        got = read_entry(tmp_path / f"{key}.pkl", key=key)
        assert got is not None and got["values"].shape == (got["n"],)
