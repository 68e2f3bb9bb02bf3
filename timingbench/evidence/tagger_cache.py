"""The AudioSet tagger's column embeddings of labelled audio, cached once for the family heads.

Two sources are read (:mod:`timingbench.evidence_net.tagger_heads` trains on both):

- **make-data folders.** ``timingbench evidence make-data --tagger`` hands every shard's
  mixes to :class:`TaggerSink`, which reads each mix with the tagger
  (:func:`~timingbench.evidence_net.tagger.tagger_columns`) at a seeded peak level between
  ``heads.level_min_dbfs`` and ``heads.level_max_dbfs`` and writes ``tagger-XXXX.npz``
  beside shard ``part-XXXX.npz``: per clip the embeddings (float32, (C, n)), the logits
  (float16, (527, n)) and the level. Column labels come from the shard's frame labels
  (:func:`column_shares`).
- **The real corpus** (``timingbench render --corpus real --stems``): every clip of one
  split is read with the tagger and labelled from its stems (:func:`real_columns`), cached
  in ``tagger-columns-<split>.npz`` in the corpus folder.

Labels per column: the share of the column's 0.32 s span (centred on the column time)
in which the family sounds, by the evidence labels' rule (a stem's frame level within
``evidence.label_present_db`` of the mix's loudest frame); present when the share exceeds
``heads.label_present_share``. A column may be *unlabelled* for a family (weight 0): in the
real corpus, where a recording that holds several families sounds and the family is not
the recording's own (the celesta backing holds plucked, strings, woodwinds and bass
somewhere, not in every column).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import soundfile as sf

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.evidence.programs import FAMILIES
from timingbench.evidence_net.tagger import COLUMN_S, tagger_columns
from timingbench.features import spectral as _sp
from timingbench.params.tagger import TaggerParams

#: Sidecar file of shard ``part-XXXX.npz``: ``tagger-XXXX.npz``.
SIDECAR_PREFIX = "tagger-"
#: Format tag written into every cache file.
CACHE_FORMAT = "tagger-columns-1"


def sidecar_path(shard: Path) -> Path:
    """``tagger-XXXX.npz`` beside shard ``part-XXXX.npz``."""
    return shard.with_name(SIDECAR_PREFIX + shard.name.removeprefix("part-"))


def _level_db(seed: int, index: int, lo: float, hi: float) -> float:
    return float(np.random.default_rng([int(seed), int(index), 35]).uniform(lo, hi)) if hi > lo else float(hi)


class TaggerSink:
    """Reads every mix of a make-data shard with the tagger and writes the shard's sidecar.

    Parameters
    ----------
    config : Config
        ``tagger`` (weights, chunking) and ``heads`` (the peak level range).
    seed : int
        The data set's seed (the levels are drawn per clip from it).
    """

    def __init__(self, config: Config, *, seed: int) -> None:
        self.tagger: TaggerParams = config.params.tagger
        self.lo = float(config.params.heads.level_min_dbfs)
        self.hi = float(config.params.heads.level_max_dbfs)
        self.seed = int(seed)

    def done(self, shard: Path) -> bool:
        """Whether the shard's sidecar exists."""
        return sidecar_path(shard).is_file()

    def write(self, shard: Path, indices: list[int], mixes: list[npt.NDArray[np.float64]], *, sr: int) -> None:
        """Read the mixes (clip order) and write ``tagger-XXXX.npz`` atomically."""
        embs, logits, levels = [], [], []
        weights: dict[str, Any] = {}
        for i, mix in zip(indices, mixes, strict=True):
            level = _level_db(self.seed, i, self.lo, self.hi)
            peak = float(np.max(np.abs(mix))) or 1.0
            cols = tagger_columns((mix * (10.0 ** (level / 20.0) / peak)).astype(np.float32), sr, self.tagger)
            embs.append(cols.embeddings)
            logits.append(cols.logits.astype(np.float16))
            levels.append(level)
            weights = cols.weights.disclosure()
        n = {e.shape[1] for e in embs}
        if len(n) != 1:
            raise ParameterError(f"{shard}: clips of different lengths ({sorted(n)} tagger columns)")
        out = sidecar_path(shard)
        tmp = out.with_suffix(".tmp.npz")
        np.savez(tmp, indices=np.asarray(indices, dtype=np.int64), embeddings=np.stack(embs),
                 logits=np.stack(logits), level_dbfs=np.asarray(levels),
                 info=np.array(json.dumps({"format": CACHE_FORMAT, "weights": weights,
                                           "level_dbfs": [self.lo, self.hi]})))
        tmp.replace(out)


# ----------------------------------------------------------------------------- labels


def column_shares(frame_labels: npt.ArrayLike, *, frame_hop_s: float, n_columns: int,
                  column_s: float = COLUMN_S) -> npt.NDArray[np.float64]:
    """Share of each tagger column's span in which each row's label is on.

    Column ``k`` spans ``[(k - 1/2) column_s, (k + 1/2) column_s)`` (centred on its time,
    :attr:`~timingbench.evidence_net.tagger.TaggerColumns.times`); frame ``j`` is centred at
    ``j * frame_hop_s`` and counts in the column its centre falls in. A span with no frame
    (past the labels' end) has share 0.

    Parameters
    ----------
    frame_labels : array_like, shape (F, m)
        Per-frame labels (0/1, or shares in [0, 1]).
    frame_hop_s : float
        Seconds between frames.
    n_columns : int
        Number of tagger columns.
    column_s : float
        Seconds per column (0.32).

    Returns
    -------
    shares : np.ndarray of float64, shape (F, n_columns)

    Raises
    ------
    ParameterError
        If ``frame_labels`` is not two-dimensional or a step is not positive.
    """
    lab = np.asarray(frame_labels, dtype=np.float64)
    if lab.ndim != 2:
        raise ParameterError(f"frame labels must be (families, frames), got shape {lab.shape}")
    if not (frame_hop_s > 0 and column_s > 0):
        raise ParameterError(f"frame_hop_s and column_s must be positive seconds, got {frame_hop_s}, {column_s}")
    t = np.arange(lab.shape[1]) * frame_hop_s
    col = np.floor(np.round(t / column_s + 0.5, 6)).astype(np.int64)
    keep = col < n_columns
    sums = np.zeros((lab.shape[0], n_columns))
    counts = np.bincount(col[keep], minlength=n_columns).astype(np.float64)
    for f in range(lab.shape[0]):
        sums[f] = np.bincount(col[keep], weights=lab[f, keep], minlength=n_columns)
    return np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)


# ----------------------------------------------------------------------------- column sets


@dataclass(frozen=True)
class ColumnSet:
    """Tagger columns with family labels, one row per column.

    Attributes
    ----------
    embeddings : np.ndarray of float32, shape (N, C)
    shares : np.ndarray of float32, shape (N, 11)
        Share of the column's span in which each family sounds (order of ``FAMILIES``).
    known : np.ndarray of bool, shape (N, 11)
        False where a family's label is unknown (not trained or measured on).
    clip : np.ndarray of int64, shape (N,)
        Clip number within the set (0-based).
    source : str
        What the set was read from.
    """

    embeddings: npt.NDArray[np.float32]
    shares: npt.NDArray[np.float32]
    known: npt.NDArray[np.bool_]
    clip: npt.NDArray[np.int64]
    source: str

    def __len__(self) -> int:
        return int(self.embeddings.shape[0])

    def present(self, share: float) -> npt.NDArray[np.bool_]:
        """``shares > share``: the binary labels, shape (N, 11)."""
        return np.asarray(self.shares > share)


def concat(sets: list[ColumnSet]) -> ColumnSet:
    """One set of all rows (clip numbers made distinct), in order."""
    if not sets:
        raise ParameterError("no column sets to join")
    offs = np.cumsum([0] + [int(s.clip.max()) + 1 if len(s) else 0 for s in sets])
    return ColumnSet(embeddings=np.concatenate([s.embeddings for s in sets]),
                     shares=np.concatenate([s.shares for s in sets]),
                     known=np.concatenate([s.known for s in sets]),
                     clip=np.concatenate([s.clip + o for s, o in zip(sets, offs, strict=False)]),
                     source="+".join(s.source for s in sets))


def render_columns(folder: Path, *, config: Config) -> ColumnSet:
    """The tagger columns of a make-data folder (its ``tagger-XXXX.npz``) with their labels.

    Raises
    ------
    ParameterError
        If a shard has no sidecar (``make-data --tagger`` writes them; it renders again
        only the shards whose sidecar is missing) or a sidecar does not match its shard.
    """
    from timingbench.evidence.dataset import shard_paths

    feat = config.params.features
    hop_s = int(feat.hop) / float(config.params.audio.sample_rate_hz)
    embs, shares, clips = [], [], []
    for shard in shard_paths(folder):
        side = sidecar_path(shard)
        if not side.is_file():
            raise ParameterError(f"{side}: no tagger columns for {shard.name}; run `timingbench evidence make-data "
                                 f"--tagger` with the folder's --n and --seed again (it renders only such shards)")
        with np.load(shard) as z, np.load(side) as t:
            labels = z["labels"]
            meta = json.loads(str(z["meta"]))
            idx = t["indices"]
            if [int(m["index"]) for m in meta] != [int(i) for i in idx]:
                raise ParameterError(f"{side}: its clips differ from {shard.name}'s; delete it and run make-data "
                                     "--tagger again")
            emb = t["embeddings"]
        for k in range(emb.shape[0]):
            n = emb.shape[2]
            embs.append(emb[k].T)
            shares.append(column_shares(labels[k], frame_hop_s=hop_s, n_columns=n).T)
            clips.append(np.full(n, int(idx[k])))
    sh = np.concatenate(shares).astype(np.float32)
    return ColumnSet(embeddings=np.concatenate(embs).astype(np.float32), shares=sh,
                     known=np.ones(sh.shape, dtype=bool), clip=np.concatenate(clips).astype(np.int64),
                     source=str(folder))


# ----------------------------------------------------------------------------- the real corpus


def _part_families(source_key: str) -> tuple[set[str], set[str]]:
    """(sure, unsure) families of a real recording: its own family, or its only one, is
    sure where it sounds; the other families it holds somewhere are unknown there."""
    from timingbench.render.real_corpus import REAL_SOURCES

    src = REAL_SOURCES[source_key]
    contains = set(src.contains)
    sure = set(contains) if len(contains) == 1 else ({src.family} if src.family else set())
    return sure, contains - sure


def real_clip_labels(row: dict[str, Any], folder: Path, *, config: Config, n_columns: int
                     ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """Column shares and known-masks (both (n_columns, 11)) of one real clip, from its stems.

    Raises
    ------
    ParameterError
        If the corpus was rendered without ``--stems``.
    """
    ev, feat = config.params.evidence, config.params.features
    n_fft, hop = int(feat.n_fft), int(feat.hop)
    stems = row.get("stems") or {}
    if not stems:
        raise ParameterError(f"{folder}: the real corpus has no stems; render it with `timingbench render --corpus "
                             "real --stems`")
    mix, sr = sf.read(folder / "clips" / row["clip"], dtype="float64", always_2d=False)
    ref = _sp.frame_rms(mix, n_fft=n_fft, hop=hop)
    ref_ms = max(float(np.max(ref)) ** 2, 1e-20)
    sure = np.zeros((len(FAMILIES), ref.size))
    unsure = np.zeros((len(FAMILIES), ref.size))
    for part in [row["backing"], *row["layers"]]:
        y, _ = sf.read(folder / stems[part["part"]], dtype="float64", always_2d=False)
        r = _sp.frame_rms(y, n_fft=n_fft, hop=hop)[: ref.size]
        on = 10.0 * np.log10(np.maximum(r * r, 1e-20) / ref_ms) >= float(ev.label_present_db)
        s_f, u_f = _part_families(part["source_key"])
        for fam in s_f:
            sure[FAMILIES.index(fam), : on.size] = np.maximum(sure[FAMILIES.index(fam), : on.size], on)
        for fam in u_f:
            unsure[FAMILIES.index(fam), : on.size] = np.maximum(unsure[FAMILIES.index(fam), : on.size], on)
    hop_s = hop / float(sr)
    share = column_shares(sure, frame_hop_s=hop_s, n_columns=n_columns).T
    doubt = column_shares(unsure, frame_hop_s=hop_s, n_columns=n_columns).T
    thr = float(config.params.heads.label_present_share)
    known = (share > thr) | (doubt == 0.0)
    return share.astype(np.float32), known


def real_cache_key(config: Config) -> str:
    """What a real-corpus column cache depends on: the tagger reading's key and the labelling constants.

    Raises
    ------
    ModelUnavailableError
        If the tagger weights file is missing or does not match its digest.
    """
    from timingbench.evidence_net.tagger import bank_key

    return json.dumps({"format": CACHE_FORMAT, "tagger": bank_key(config.params.tagger),
                       "label_present_db": float(config.params.evidence.label_present_db),
                       "share": float(config.params.heads.label_present_share),
                       "n_fft": int(config.params.features.n_fft), "hop": int(config.params.features.hop)},
                      sort_keys=True)


def real_cache_path(folder: Path, split: str, cache: Path | None = None) -> Path:
    """``tagger-columns-<split>.npz`` in ``cache`` (default: the corpus folder)."""
    return (cache or folder) / f"tagger-columns-{split}.npz"


def real_columns(folder: Path, *, split: str, config: Config, cache: Path | None = None) -> ColumnSet:
    """The tagger columns of one split of a rendered real corpus, labelled from its stems.

    Computed once and cached (``tagger-columns-<split>.npz`` in ``cache``, default the corpus
    folder); a cache of other tagger weights or labelling constants is computed again.

    Parameters
    ----------
    folder : Path
        A real corpus rendered with ``timingbench render --corpus real --stems``.
    split : {"dev", "validation"}
    config : Config
    cache : Path, optional
        Folder of the cache file.

    Raises
    ------
    ParameterError
        If the folder has no manifest or stems, or ``split`` is unknown.
    """
    if split not in ("dev", "validation"):
        raise ParameterError(f"split must be dev or validation, got {split!r}")
    key = real_cache_key(config)
    path = real_cache_path(folder, split, cache)
    if path.is_file():
        with np.load(path) as z:
            if str(z["key"]) == key:
                return ColumnSet(embeddings=z["embeddings"], shares=z["shares"], known=z["known"],
                                 clip=z["clip"], source=f"{folder}:{split}")
    try:
        rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise ParameterError(f"{folder}: no readable manifest.jsonl ({exc}); render the corpus with `timingbench "
                             "render --corpus real --stems`") from None
    embs, shares, knowns, clips, logits, names = [], [], [], [], [], []
    for k, row in enumerate(r for r in rows if r["split"] == split):
        y, sr = sf.read(folder / "clips" / row["clip"], dtype="float32", always_2d=False)
        cols = tagger_columns(y, sr, config.params.tagger)
        share, known = real_clip_labels(row, folder, config=config, n_columns=cols.embeddings.shape[1])
        embs.append(cols.embeddings.T)
        logits.append(cols.logits.T.astype(np.float16))
        shares.append(share)
        knowns.append(known)
        clips.append(np.full(share.shape[0], k))
        names.extend([row["clip"]] * share.shape[0])
    if not embs:
        raise ParameterError(f"{folder}: no clips of split {split!r}")
    out = ColumnSet(embeddings=np.concatenate(embs).astype(np.float32), shares=np.concatenate(shares),
                    known=np.concatenate(knowns), clip=np.concatenate(clips).astype(np.int64),
                    source=f"{folder}:{split}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, key=np.array(key), embeddings=out.embeddings, shares=out.shares, known=out.known, clip=out.clip,
             logits=np.concatenate(logits), clip_name=np.array(names))
    tmp.replace(path)
    return out
