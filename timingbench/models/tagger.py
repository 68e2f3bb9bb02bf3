"""The pretrained AudioSet tagger on audio: loading its weights, time-resolved reading, the bank memo.

The tagger is EfficientAT's mn04 (``docs/tagger-model.md``), shipped in the package with its
licence. :func:`tagger_columns` reads a signal once and gives, every 0.32 s, the logits of
AudioSet's 527 classes and the embedding the classifier reads: the classifier applied to each
time column of the last feature map. Long inputs are read in chunks with context either side
(``tagger.chunk_s``, ``tagger.context_s``), streamed through the resampler, so memory does
not grow with the input beyond the outputs; a clip no longer than one window (chunk plus
both contexts, 35.84 s as configured) is read in exactly one pass.

:func:`bank_tagger` memoises the reading in a clip's feature bank (and so in the feature
cache) under a key holding the weights' digest and the chunking parameters.

Weights are never replaced silently: a missing, unreadable or corrupt file, or one whose
SHA-256 differs from the configured one, raises :class:`~timingbench.errors.ModelUnavailableError`
naming the file and the digest expected.

Importing this module imports no torch (every scoring command reads :func:`with_tagger_weights`):
the network's module is imported when weights are first loaded.
"""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.memo import file_sha256, process_cache
from timingbench.models.tagger_frontend import COLUMN_FRAMES, HOP, MODEL_SR, PAD, log_mel, n_frames
from timingbench.packaged import data_path
from timingbench.params.tagger import TaggerParams

if TYPE_CHECKING:
    from timingbench.config import Config
    from timingbench.models.tagger_model import AudioTagger, FoldedTagger, TaggerShape

#: The weights that ship inside the package (``tagger.weights: null``).
SHIPPED_WEIGHTS = data_path("tagger", "mn04_as_mAP_432.pt")
#: AudioSet's class index (index, mid, display name), in the order of the network's outputs.
LABELS_CSV = data_path("tagger", "class_labels_indices.csv")
#: Samples at :data:`MODEL_SR` per time column of the last feature map (32 frames of 320).
COLUMN_SAMPLES = COLUMN_FRAMES * HOP
#: Seconds per time column (0.32 s).
COLUMN_S = COLUMN_SAMPLES / MODEL_SR
#: Resampling quality (as the bank's other model inputs).
RESAMPLE_QUALITY = "VHQ"
#: Input samples fed to the resampler at a time when reading an in-memory signal.
_FEED_SAMPLES = 1 << 18


@dataclass(frozen=True)
class TaggerWeights:
    """Which weights a reading used.

    Attributes
    ----------
    name : str
        File name (``mn04_as_mAP_432.pt`` when shipped).
    sha256 : str
        SHA-256 of the file (64 hex digits).
    path : str
        The file read.
    shipped : bool
        Whether it is the file that ships in the package.
    channels : int
        Embedding size (384 for mn04).
    """

    name: str
    sha256: str
    path: str
    shipped: bool
    channels: int

    @property
    def digest(self) -> str:
        """The first 16 hex digits of the SHA-256 (cache keys, disclosures)."""
        return self.sha256[:16]

    def disclosure(self) -> dict[str, Any]:
        """What a run records about the weights: name, digest prefix, shipped or not, width."""
        return {"name": self.name, "sha256": self.digest, "shipped": self.shipped, "channels": self.channels}


@dataclass(frozen=True)
class LoadedTagger:
    """A loaded tagger.

    Attributes
    ----------
    weights : TaggerWeights
        The weights file it was built from (name, digest, whether shipped).
    shape : TaggerShape
        The architecture its state dict describes.
    module : AudioTagger
        The network as a torch module (state-dict layout).
    folded : FoldedTagger
        Its inference form (batch norms folded, channels-last), what readings run.
    labels : tuple of str
        Display names of the outputs.
    """

    weights: TaggerWeights
    shape: TaggerShape
    module: AudioTagger
    folded: FoldedTagger
    labels: tuple[str, ...]


@dataclass(frozen=True)
class TaggerColumns:
    """The tagger's time-resolved reading of one signal.

    Attributes
    ----------
    times : np.ndarray of float64, shape (n,)
        Seconds of the column centres (``0.32 k``): column ``k`` is computed around 32 log-mel
        frames from frame ``32 k`` (its receptive field is centred there and spans about +-3 s).
    logits : np.ndarray of float32, shape (527, n)
        Per-column logits of AudioSet's classes (sigmoid for probabilities).
    embeddings : np.ndarray of float32, shape (C, n)
        Per-column embeddings (the last feature map averaged over frequency; C = 384 for mn04).
    labels : tuple of str
        Display names of the 527 classes, in row order of ``logits``.
    weights : TaggerWeights
        The weights used.
    """

    times: npt.NDArray[np.float64]
    logits: npt.NDArray[np.float32]
    embeddings: npt.NDArray[np.float32]
    labels: tuple[str, ...]
    weights: TaggerWeights


# ----------------------------------------------------------------------------- loading


def _expected(expected_sha256: str | None) -> str:
    return f"expected sha256 {expected_sha256}" if expected_sha256 else "no expected sha256 configured"


def _check_file(path: Path, expected_sha256: str | None) -> str:
    """The file's SHA-256, after checking it exists and matches ``expected_sha256``."""
    if not path.is_file():
        raise ModelUnavailableError(
            f"{path}: AudioSet tagger weights not found ({_expected(expected_sha256)}); the shipped file is "
            "timingbench/data/tagger/mn04_as_mAP_432.pt (reinstall timingbench), another width is given with "
            "--tagger-weights PATH or tagger.weights")
    try:
        digest = file_sha256(path)
    except OSError as exc:
        raise ModelUnavailableError(f"{path}: cannot read the AudioSet tagger weights ({exc.strerror}; "
                                    f"{_expected(expected_sha256)})") from None
    if expected_sha256 is not None and digest != expected_sha256:
        raise ModelUnavailableError(
            f"{path}: AudioSet tagger weights are corrupt or another file: sha256 {digest}, expected sha256 "
            f"{expected_sha256} (reinstall timingbench; for another width pass --tagger-weights PATH, which "
            "checks no digest, or set tagger.weights_sha256 to that file's)")
    return digest


def load_tagger(path: str | Path, *, expected_sha256: str | None = None) -> LoadedTagger:
    """Load a tagger's weights (any EfficientAT MobileNet width), memoised per file version.

    Parameters
    ----------
    path : str or Path
        A PyTorch state dict of an EfficientAT AudioSet MobileNet (``mn04_as_mAP_432.pt``,
        ``mn10_as...``, ...).
    expected_sha256 : str, optional
        The file's SHA-256; checked before the file is read when given.

    Returns
    -------
    tagger : LoadedTagger

    Raises
    ------
    ModelUnavailableError
        If the file is missing or unreadable, its SHA-256 differs from ``expected_sha256``, it
        is not a state dict, or its keys do not describe an EfficientAT MobileNet; the message
        names the file and the SHA-256 expected.
    """
    p = Path(path)
    digest = _check_file(p, expected_sha256)
    st = p.stat()
    return _load(str(p.resolve()), st.st_size, st.st_mtime_ns, digest, expected_sha256)


@process_cache(4)
def _load(path_str: str, size: int, mtime_ns: int, digest: str, expected_sha256: str | None) -> LoadedTagger:
    import pickle
    import zipfile

    import torch

    from timingbench.models.tagger_model import FoldedTagger, build_tagger

    path = Path(path_str)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, ValueError, EOFError, pickle.UnpicklingError, zipfile.BadZipFile) as exc:
        raise ModelUnavailableError(f"{path}: cannot load the AudioSet tagger weights ({_expected(expected_sha256)}; "
                                    f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise ModelUnavailableError(f"{path}: not a PyTorch state dict of tensors ({_expected(expected_sha256)})")
    state = {k: v.float() if v.is_floating_point() else v for k, v in state.items()}  # half-precision releases too
    try:
        module = build_tagger(state)
    except ParameterError as exc:
        raise ModelUnavailableError(f"{path}: {exc} ({_expected(expected_sha256)})") from None
    labels = audioset_labels()
    if len(labels) != module.shape.n_classes:
        raise ModelUnavailableError(f"{path}: the network has {module.shape.n_classes} outputs, AudioSet's index "
                                    f"{LABELS_CSV} has {len(labels)} classes ({_expected(expected_sha256)})")
    weights = TaggerWeights(name=path.name, sha256=digest, path=str(path),
                            shipped=path == SHIPPED_WEIGHTS.resolve(), channels=module.shape.last)
    return LoadedTagger(weights=weights, shape=module.shape, module=module, folded=FoldedTagger(module),
                        labels=labels)


@process_cache(1)
def audioset_labels() -> tuple[str, ...]:
    """Display names of AudioSet's 527 classes, in output order (:data:`LABELS_CSV`)."""
    with open(LABELS_CSV, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if [int(r["index"]) for r in rows] != list(range(len(rows))):
        raise ModelUnavailableError(f"{LABELS_CSV}: the class indices are not 0..{len(rows) - 1} in order")
    return tuple(r["display_name"] for r in rows)


def weights_of(params: TaggerParams) -> tuple[Path, str | None]:
    """The weights file ``params`` name (the shipped one for ``weights: null``) and its expected digest."""
    path = SHIPPED_WEIGHTS if params.weights is None else Path(params.weights).expanduser()
    return path, params.weights_sha256


def tagger_for(params: TaggerParams) -> LoadedTagger:
    """:func:`load_tagger` of the weights ``params`` name.

    Raises
    ------
    ModelUnavailableError
        As :func:`load_tagger`.
    """
    path, sha = weights_of(params)
    return load_tagger(path, expected_sha256=sha)


def with_tagger_weights(config: Config, path: str | Path | None) -> Config:
    """``config`` reading the tagger from ``path`` (``--tagger-weights``); unchanged for None.

    The configured digest belongs to the shipped file, so it is cleared: a file given on the
    command line is loaded without a digest check (its digest is recorded with the reading).
    """
    if path is None:
        return config
    return config.with_value("tagger.weights", str(path)).with_value("tagger.weights_sha256", None)


# ----------------------------------------------------------------------------- reading


def _grid(params: TaggerParams) -> tuple[int, int]:
    """Chunk and context lengths in columns (rounded up to whole columns)."""
    chunk = max(1, math.ceil(round(params.chunk_s / COLUMN_S, 9)))
    context = max(0, math.ceil(round(params.context_s / COLUMN_S, 9)))
    return chunk, context


@contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    if n != before:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if n != before:
            torch.set_num_threads(before)


def _resampled(blocks: Iterable[npt.ArrayLike], sr: float) -> Iterator[npt.NDArray[np.float32]]:
    """The blocks at :data:`MODEL_SR`, streamed (soxr's stream equals its one-shot resampling)."""
    import soxr

    stream = None if sr == MODEL_SR else soxr.ResampleStream(sr, MODEL_SR, 1, dtype="float32",
                                                             quality=RESAMPLE_QUALITY)
    for b in blocks:
        x = np.asarray(b, dtype=np.float32)
        if x.ndim != 1:
            raise ParameterError(f"the tagger reads mono samples (one dimension), got a block of shape {x.shape}")
        if not np.isfinite(x).all():
            raise ParameterError("the tagger's input holds non-finite samples (NaN or inf)")
        y = x if stream is None else stream.resample_chunk(x, last=False)
        if y.size:
            yield np.asarray(y, dtype=np.float32)
    if stream is not None:
        tail = stream.resample_chunk(np.zeros(0, dtype=np.float32), last=True)
        if tail.size:
            yield np.asarray(tail, dtype=np.float32)


def tagger_blocks(blocks: Iterable[npt.ArrayLike], sr: float, params: TaggerParams, *,
                  n_samples: int | None = None) -> TaggerColumns:
    """:func:`tagger_columns` of a signal given as consecutive blocks (e.g. read from a file).

    Only the current window of the signal is held (resampled), so memory does not grow with
    the input beyond the outputs.

    Parameters
    ----------
    blocks : iterable of array_like, each shape (m,)
        Consecutive mono blocks of the signal, any lengths.
    sr : float
        Sample rate of the blocks in Hz.
    params : TaggerParams
    n_samples : int, optional
        The signal's length in samples when known (e.g. from the file's header): the outputs
        are then allocated once.

    Returns
    -------
    columns : TaggerColumns

    Raises
    ------
    ParameterError
        If ``sr`` is not positive, a block is not mono or not finite, or the signal is shorter
        than the front end's reflection padding (16 ms).
    ModelUnavailableError
        If the weights cannot be loaded (see :func:`load_tagger`).
    """
    if not (math.isfinite(sr) and sr > 0):
        raise ParameterError(f"sr: the sample rate must be positive, got {sr!r}")
    tagger = tagger_for(params)
    chunk, context = _grid(params)
    width = chunk + 2 * context  # a window's columns
    with _torch_threads(params.threads):
        logits, emb = _read(_resampled(blocks, sr), tagger, chunk=chunk, context=context, width=width,
                            capacity=_expected_columns(n_samples, sr))
    n = logits.shape[1]
    return TaggerColumns(times=COLUMN_S * np.arange(n, dtype=np.float64), logits=logits, embeddings=emb,
                         labels=tagger.labels, weights=tagger.weights)


class _Columns:
    """Output columns written chunk by chunk into one array per output (no copy at the end when
    the number of columns is known beforehand; else grown by doubling)."""

    def __init__(self, rows: tuple[int, int], capacity: int) -> None:
        self.rows, self.n = rows, 0
        self.arrays = [np.empty((r, max(capacity, 1)), dtype=np.float32) for r in rows]

    def add(self, *parts: npt.NDArray[np.float32]) -> None:
        m = parts[0].shape[1]
        if self.n + m > self.arrays[0].shape[1]:
            grown = max(self.n + m, 2 * self.arrays[0].shape[1])
            self.arrays = [np.concatenate([a[:, :self.n], np.empty((a.shape[0], grown - self.n), np.float32)], axis=1)
                           for a in self.arrays]
        for a, part in zip(self.arrays, parts, strict=True):
            a[:, self.n:self.n + m] = part
        self.n += m

    def result(self) -> list[npt.NDArray[np.float32]]:
        if self.arrays[0].shape[1] - self.n > 2:  # a loose estimate: do not keep its slack
            return [a[:, :self.n].copy() for a in self.arrays]
        return [a[:, :self.n] for a in self.arrays]


def _expected_columns(n_samples: int | None, sr: float) -> int:
    """Columns of a signal of ``n_samples`` at ``sr`` once resampled (an estimate, +1 for rounding)."""
    if n_samples is None:
        return 32
    m = math.ceil(n_samples * MODEL_SR / sr) + 1
    return -(-n_frames(m) // COLUMN_FRAMES) + 1


def _read(stream: Iterator[npt.NDArray[np.float32]], tagger: LoadedTagger, *, chunk: int, context: int,
          width: int, capacity: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Chunk ``k`` (columns ``[k chunk, (k + 1) chunk)``) is read from the window of ``width``
    columns starting ``context`` columns before it, moved inside the signal at its edges (so a
    signal of at most ``width`` columns is one window). Every window starts on a column, so
    its columns are the one-pass columns where the context covers the receptive field."""
    out = _Columns((tagger.shape.n_classes, tagger.shape.last), capacity)
    buf = np.zeros(0, dtype=np.float32)
    buf_start = 0  # signal sample of buf[0] (a multiple of COLUMN_SAMPLES)
    k = 0
    last: tuple[tuple[int, int], tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]] | None = None

    def window(a: int, end: int) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        nonlocal last
        if last is not None and last[0] == (a, end):
            return last[1]
        y = buf[a * COLUMN_SAMPLES - buf_start:end - buf_start]
        got = _run_window(tagger, y)
        last = ((a, end), got)
        return got

    def emit(a: int, end: int, n_total: int | None) -> None:
        s = k * chunk
        lo, hi = window(a, end)
        stop = s + chunk if n_total is None else min(s + chunk, n_total)
        out.add(lo[:, s - a:stop - a], hi[:, s - a:stop - a])

    for block in stream:
        buf = np.concatenate([buf, block]) if buf.size else block
        while True:  # chunks whose whole window has arrived (their window cannot move with the end)
            a = max(0, k * chunk - context)
            if buf_start + buf.size < (a + width) * COLUMN_SAMPLES:
                break
            emit(a, (a + width) * COLUMN_SAMPLES, None)
            k += 1
            keep_from = a * COLUMN_SAMPLES  # later windows never start before this one
            if keep_from > buf_start:
                buf = buf[keep_from - buf_start:].copy()
                buf_start = keep_from
    total = buf_start + buf.size
    if total == 0:
        warnings.warn("the tagger got an empty signal: no columns", stacklevel=3)
    elif total < PAD + 2:
        raise ParameterError(f"the tagger needs at least {PAD + 2} samples at {MODEL_SR} Hz "
                             f"({(PAD + 2) / MODEL_SR * 1000:.0f} ms), got {total}")
    n_total = -(-n_frames(total) // COLUMN_FRAMES) if total else 0
    while k * chunk < n_total:  # the rest: windows that reach the signal's end
        a = min(max(0, k * chunk - context), max(0, total // COLUMN_SAMPLES - width))
        emit(a, total, n_total)
        k += 1
    logits, emb = out.result()
    return logits, emb


def _run_window(tagger: LoadedTagger, y: npt.NDArray[np.float32]
                ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Per-column logits ``(527, n)`` and embeddings ``(C, n)`` of one window at 32 kHz."""
    import torch

    mel = log_mel(y)
    with torch.inference_mode():
        fmap = tagger.folded.features(torch.from_numpy(mel)[None, None])
        logits, emb = tagger.folded.columns(fmap)
    return logits[0].numpy().copy(), emb[0].numpy().copy()


def tagger_columns(samples: npt.ArrayLike, sr: float, params: TaggerParams) -> TaggerColumns:
    """The tagger's logits and embeddings every 0.32 s of a signal.

    The signal is resampled to 32 kHz (soxr, very high quality), turned into the tagger's
    log-mel and read by the network window by window; the classifier is applied to each time
    column of the last feature map. Chunks of ``params.chunk_s`` are read with
    ``params.context_s`` either side, every window starting on a column, so the columns of a
    signal no longer than one window are those of one pass over it.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Mono signal (a memory-mapped array is read a block at a time).
    sr : float
        Its sample rate in Hz.
    params : TaggerParams
        Weights and chunking (``config.params.tagger``).

    Returns
    -------
    columns : TaggerColumns
        ``ceil(frames / 32)`` columns, ``frames = 1 + (m - 1) // 320`` for ``m`` samples at 32 kHz.

    Raises
    ------
    ParameterError
        If ``samples`` is not one-dimensional or not finite, ``sr`` is not positive, or the
        signal is shorter than 16 ms.
    ModelUnavailableError
        If the weights cannot be loaded (see :func:`load_tagger`).

    Warns
    -----
    UserWarning
        For an empty signal (no columns are returned).
    """
    x = samples if isinstance(samples, np.ndarray) else np.asarray(samples, dtype=np.float32)
    if x.ndim != 1:
        raise ParameterError(f"the tagger reads mono samples (one dimension), got shape {x.shape}")
    return tagger_blocks((x[i:i + _FEED_SAMPLES] for i in range(0, x.shape[0], _FEED_SAMPLES)), sr, params,
                         n_samples=int(x.shape[0]))


# ----------------------------------------------------------------------------- the bank


def bank_key(params: TaggerParams) -> str:
    """The bank memo key of :func:`bank_tagger`: the weights' digest, the chunking and the input level.

    Raises
    ------
    ModelUnavailableError
        If the weights file is missing, unreadable or does not match the expected digest.
    """
    path, sha = weights_of(params)
    chunk, context = _grid(params)
    level = params.audio.input_loud_level_dbfs
    return f"tagger:{_check_file(path, sha)[:16]}:chunk{chunk}:context{context}:level{level:g}"


def bank_tagger(bank: Any, params: TaggerParams) -> TaggerColumns:
    """:func:`tagger_columns` of a clip's feature bank (``bank.samples`` at ``bank.sr``, scaled so that
    the clip's loud level ``bank.loudness.loud_level_db`` sits at ``audio.input_loud_level_dbfs``:
    the tagger's log-mel front end is not gain-invariant), memoised in the bank and its cache under
    :func:`bank_key`.

    Raises
    ------
    ModelUnavailableError
        If the weights cannot be loaded (see :func:`load_tagger`).
    """
    def compute(b: Any) -> dict[str, Any]:
        return _to_entry(tagger_columns(at_level(b.samples, loud_db=float(b.loudness.loud_level_db),
                                                 target_db=params.audio.input_loud_level_dbfs), b.sr, params))

    return _from_entry(bank.derived(bank_key(params), compute))


def at_level(samples: npt.ArrayLike, *, loud_db: float, target_db: float) -> npt.NDArray[np.float32]:
    """``samples`` scaled by ``target_db - loud_db`` dB (unchanged when the loud level is not finite: silence).

    Parameters
    ----------
    samples : array_like, shape (n,)
        Mono signal.
    loud_db : float
        Its loud level in dBFS.
    target_db : float
        The level it is brought to, dBFS.

    Returns
    -------
    scaled : np.ndarray of float32, shape (n,)
    """
    x = np.asarray(samples, dtype=np.float32)
    if not math.isfinite(loud_db):
        return x
    return (x * np.float32(10.0 ** ((target_db - loud_db) / 20.0))).astype(np.float32)


def _to_entry(cols: TaggerColumns) -> dict[str, Any]:
    return {"times": cols.times, "logits": cols.logits, "embeddings": cols.embeddings, "labels": cols.labels,
            "weights": dict(cols.weights.__dict__)}


def _from_entry(entry: dict[str, Any]) -> TaggerColumns:
    return TaggerColumns(times=entry["times"], logits=entry["logits"], embeddings=entry["embeddings"],
                         labels=tuple(entry["labels"]), weights=TaggerWeights(**entry["weights"]))


def pooled_logits(columns: TaggerColumns, tagger: LoadedTagger, *, span_s: float) -> npt.NDArray[np.float64]:
    """The tagger's head applied to the column embeddings averaged over ``span_s`` seconds, per column.

    The head was trained on the time average of the feature map; reading it on the average
    of a few columns (centred, the edge columns repeated) is its own clip-level readout over a
    short window. ``span_s`` no longer than one column gives the columns' own logits.

    Parameters
    ----------
    columns : TaggerColumns
        A clip's columns (:func:`tagger_columns`).
    tagger : LoadedTagger
        The tagger that made them.
    span_s : float
        Length of the average in seconds (rounded to whole columns).

    Returns
    -------
    logits : np.ndarray of float64, shape (527, n_columns)
    """
    k = max(int(round(span_s / COLUMN_S)), 1)
    if k <= 1 or columns.times.size == 0:
        return np.asarray(columns.logits, dtype=np.float64)
    import torch
    from scipy.ndimage import uniform_filter1d

    emb = uniform_filter1d(np.asarray(columns.embeddings, dtype=np.float32), size=k, axis=1, mode="nearest")
    with torch.no_grad():
        out = tagger.folded.head(torch.from_numpy(np.ascontiguousarray(emb.T))).numpy().T
    return np.asarray(out, dtype=np.float64)
