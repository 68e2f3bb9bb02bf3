"""Training arrays of a data set: the model's input and targets, memory-mapped.

``timingbench evidence make-data`` renders clips into shards (``part-XXXX.npz``); this
module turns a folder's shards into one file per array, written once and opened with
``numpy.load(mmap_mode="r")``, so an epoch reads bytes from the page cache and decodes
neither audio nor a compressed archive:

- ``logmel.npy`` (float16, (n, n_mels, n_frames)): the bank's log-mel of each mix, as the
  network consumes it;
- ``labels.npy`` (uint8, (n, 11, n_frames)): frame labels per family;
- ``presence.npy`` (float16, (n, 11, n_frames // stride)): presence shares
  (:func:`~timingbench.identity.training.targets.presence_targets`; multiples of ``1 / stride``, exact
  in float16);
- ``change.npy`` (int8, (n, 11, n_frames // stride)): entered / left / none / ignore of
  the whole clip (:func:`~timingbench.identity.training.targets.change_targets`), read for the
  class weights and the dev loss;
- ``meta.json``: the clips' layouts; ``arrays.json``: the format, shapes and the target
  constants they were made with (a folder made with other constants is refused).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.identity.training.targets import change_targets, presence_targets

if TYPE_CHECKING:
    pass

#: Format tag of ``arrays.json``.
ARRAYS_FORMAT = "timingbench-evidence-arrays-1"
ARRAY_FILES = ("logmel.npy", "labels.npy", "presence.npy", "change.npy")


@dataclass(frozen=True)
class TargetParams:
    """Constants the stored targets depend on (``evidence.*`` and the network's frames)."""

    stride: int
    context_frames: int
    guard_frames: int
    absent_max: float
    present_min: float
    near_min: float

    @classmethod
    def from_config(cls, cfg: Config) -> TargetParams:
        """Read ``evidence.frame_stride``, ``context_s``, ``guard_s``, ``label_absent_max``,
        ``label_present_min``, ``label_near_min``, ``features.hop`` and ``audio.sample_rate_hz``."""
        ev = cfg.params.evidence
        stride = int(ev.frame_stride)
        out_s = stride * int(cfg.params.features.hop) / float(cfg.params.audio.sample_rate_hz)
        return cls(stride=stride, context_frames=int(round(float(ev.context_s) / out_s)),
                   guard_frames=int(round(float(ev.guard_s) / out_s)),
                   absent_max=float(ev.label_absent_max), present_min=float(ev.label_present_min),
                   near_min=float(ev.label_near_min))

    def change(self, presence: npt.NDArray[np.floating]) -> npt.NDArray[np.int64]:
        """Change targets of presence shares (whole clips or crops alike)."""
        return change_targets(np.asarray(presence, dtype=np.float32), context=self.context_frames,
                              guard=self.guard_frames, absent_max=self.absent_max,
                              present_min=self.present_min, min_context=self.context_frames // 3,
                              near=2 * self.guard_frames + 1, near_min=self.near_min)


@dataclass(frozen=True)
class ClipArrays:
    """The memory-mapped arrays of one data folder (see module docstring)."""

    folder: Path
    logmel: npt.NDArray[np.float16]
    labels: npt.NDArray[np.uint8]
    presence: npt.NDArray[np.float16]
    change: npt.NDArray[np.int8]
    meta: list[dict[str, Any]]
    manifest: dict[str, Any]

    def __len__(self) -> int:
        return int(self.logmel.shape[0])


def has_arrays(folder: Path) -> bool:
    """True when ``folder`` holds arrays written by :func:`write_arrays`."""
    return (folder / "arrays.json").is_file() and all((folder / f).is_file() for f in ARRAY_FILES)


def write_arrays(src: Path, out: Path | None = None, *, cfg: Config) -> dict[str, Any]:
    """Write the arrays of the data folder ``src`` (its ``part-*.npz`` shards) into ``out``.

    Shards are read one at a time, so memory holds one shard and the output is written
    through memory maps. ``out`` (default ``src``) receives the four arrays, ``meta.json``,
    ``arrays.json`` and a copy of ``src``'s ``manifest.json`` (so it is a data folder of its
    own, checked by :func:`~timingbench.identity.training.dataset.read_manifest` like the original).

    Returns
    -------
    record : dict
        The contents of ``arrays.json``.

    Raises
    ------
    ParameterError
        If ``src`` has no shards or manifest, or its shards disagree in shape.
    """
    from timingbench.identity.training.dataset import read_manifest, shard_paths

    out = src if out is None else out
    man = read_manifest(src, for_training=False)
    shards = shard_paths(src)
    tp = TargetParams.from_config(cfg)
    sizes, shape = [], None
    for s in shards:
        with np.load(s) as z:
            sizes.append(int(z["labels"].shape[0]))
            shape = shape or (tuple(z["logmel"].shape[1:]), tuple(z["labels"].shape[1:]))
    assert shape is not None
    n = sum(sizes)
    n_out = shape[1][1] // tp.stride
    out.mkdir(parents=True, exist_ok=True)
    (out / "arrays.json").unlink(missing_ok=True)  # incomplete until rewritten below
    open_ = np.lib.format.open_memmap
    mel = open_(out / "logmel.npy", mode="w+", dtype=np.float16, shape=(n, *shape[0]))
    lab = open_(out / "labels.npy", mode="w+", dtype=np.uint8, shape=(n, *shape[1]))
    pres = open_(out / "presence.npy", mode="w+", dtype=np.float16, shape=(n, shape[1][0], n_out))
    chg = open_(out / "change.npy", mode="w+", dtype=np.int8, shape=(n, shape[1][0], n_out))
    meta: list[dict[str, Any]] = []
    i = 0
    for s, k in zip(shards, sizes, strict=True):
        with np.load(s) as z:
            if tuple(z["logmel"].shape[1:]) != shape[0] or tuple(z["labels"].shape[1:]) != shape[1]:
                raise ParameterError(f"{s}: shard shape {z['logmel'].shape[1:]} differs from the first "
                                     f"shard's {shape[0]}")
            mel[i : i + k] = z["logmel"]
            lab[i : i + k] = z["labels"]
            p = presence_targets(z["labels"], tp.stride)
            pres[i : i + k] = p
            chg[i : i + k] = tp.change(p)
            meta.extend(json.loads(str(z["meta"])))
        i += k
    for a in (mel, lab, pres, chg):
        a.flush()
    del mel, lab, pres, chg
    (out / "meta.json").write_text(json.dumps(meta) + "\n")
    if out.resolve() != src.resolve():
        shutil.copyfile(src / "manifest.json", out / "manifest.json")
    record = {"format": ARRAYS_FORMAT, "source": str(src), "recipe": man["recipe"], "n_clips": n,
              "logmel_shape": list(shape[0]), "labels_shape": list(shape[1]), "targets": dict(tp.__dict__)}
    (out / "arrays.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


def open_arrays(folder: Path, *, cfg: Config) -> ClipArrays:
    """The memory-mapped arrays of ``folder`` (read-only).

    Raises
    ------
    ParameterError
        If the folder holds no arrays (run ``timingbench evidence cache-arrays``), they
        are of another format, or their targets were made with other constants than
        ``cfg``'s.
    """
    from timingbench.identity.training.dataset import read_manifest

    if not has_arrays(folder):
        raise ParameterError(f"{folder}: no training arrays (arrays.json, {', '.join(ARRAY_FILES)}); "
                             f"write them with `timingbench evidence cache-arrays --data {folder}`")
    rec = json.loads((folder / "arrays.json").read_text())
    if rec.get("format") != ARRAYS_FORMAT:
        raise ParameterError(f"{folder}/arrays.json: format {rec.get('format')!r}, expected {ARRAYS_FORMAT}")
    want = TargetParams.from_config(cfg).__dict__
    if rec.get("targets") != want:
        diff = sorted(k for k in want if rec.get("targets", {}).get(k) != want[k])
        raise ParameterError(f"{folder}/arrays.json: targets made with other constants ({', '.join(diff)}); "
                             f"rewrite them with `timingbench evidence cache-arrays --data {folder}`")
    arrays = {f[:-4]: np.load(folder / f, mmap_mode="r") for f in ARRAY_FILES}
    meta = json.loads((folder / "meta.json").read_text())
    return ClipArrays(folder=folder, meta=meta, manifest=read_manifest(folder, for_training=False), **arrays)


class ArraySet:
    """Several :class:`ClipArrays` (or in-memory arrays) read as one indexed set of clips.

    Parameters
    ----------
    parts : sequence of ClipArrays or of (logmel, labels, presence, change) tuples
    limit : int, optional
        Use only the first ``limit`` clips.
    """

    def __init__(self, parts: Sequence[ClipArrays | tuple[Any, Any, Any, Any]], *, limit: int | None = None) -> None:
        self._parts = [(p.logmel, p.labels, p.presence, p.change) if isinstance(p, ClipArrays) else tuple(p)
                       for p in parts]
        if not self._parts:
            raise ParameterError("no training clips")
        frames = {tuple(p[0].shape[1:]) for p in self._parts}
        if len(frames) != 1:
            raise ParameterError(f"data folders hold clips of different shapes {sorted(frames)}")
        sizes = np.array([len(p[0]) for p in self._parts])
        self._offsets = np.concatenate([[0], np.cumsum(sizes)])
        self.n = int(self._offsets[-1]) if limit is None else min(int(limit), int(self._offsets[-1]))
        self.n_mels, self.n_frames = (int(v) for v in self._parts[0][0].shape[1:])

    def __len__(self) -> int:
        return self.n

    def take(self, field: int, idx: npt.ArrayLike, sl: slice = slice(None)) -> npt.NDArray[Any]:
        """Rows ``idx`` (in the given order) of array ``field`` (0 logmel, 1 labels, 2 presence,
        3 change), frames ``sl``."""
        idx = np.asarray(idx, dtype=np.int64)
        part = np.searchsorted(self._offsets, idx, side="right") - 1
        first = self._parts[0][field]
        out = np.empty((idx.size, first.shape[1], len(range(first.shape[2])[sl])), dtype=first.dtype)
        for k in np.unique(part):
            sel = np.flatnonzero(part == k)
            local = idx[sel] - self._offsets[k]
            order = np.argsort(local, kind="stable")  # memory maps read fastest in file order
            out[sel[order]] = self._parts[k][field][np.sort(local), :, sl]
        return out

    def counts(self, n_classes: int) -> npt.NDArray[np.float64]:
        """Number of frames of each change class (0 .. n_classes - 1) over the set."""
        total = np.zeros(n_classes)
        left = self.n
        for p in self._parts:
            c = np.asarray(p[3][: max(left, 0)])
            left -= len(p[3])
            total += [(c == k).sum() for k in range(n_classes)]
        return total
