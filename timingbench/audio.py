"""Decode any audio file to 44.1 kHz mono float32 and cut the leading analysis window.

Formats: anything libsndfile reads (wav, flac, ogg, ...) is decoded with ``soundfile``;
mp3, m4a/aac and anything soundfile rejects are decoded by the ``ffmpeg`` command-line
tool, which the set-up installs. Resampling uses ``soxr`` (VHQ).
"""

from __future__ import annotations

import hashlib
import math
import numbers
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile as sf
import soxr

from timingbench.config import Config
from timingbench.errors import ClipError, ParameterError
from timingbench.params.analysis import AudioParams

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3", ".m4a", ".aac", ".opus", ".aiff", ".aif")
#: Sample rate in Hz madmom's networks (beats, downbeats, chords) are built for.
MADMOM_SR = 44100
#: Seconds decoded past the analysis window, so that the resampler's edge falls outside it.
RESAMPLE_MARGIN_S = 0.1


@dataclass(frozen=True)
class Clip:
    """A decoded clip.

    Attributes
    ----------
    path : Path
        The source file.
    samples : np.ndarray of float32, shape (n,)
        Mono signal at ``sr`` Hz, cut to the leading analysis window.
    sr : int
        Sample rate in Hz (the configured analysis rate).
    duration_s : float
        The true duration of the whole file in seconds (before cutting).
    source_sr : int
        The file's own sample rate in Hz.
    source_channels : int
        The file's channel count.
    content_hash : str
        SHA-256 (hex, first 16 digits) of the file bytes, for caches.
    """

    path: Path
    samples: npt.NDArray[np.float32]
    sr: int
    duration_s: float
    source_sr: int
    source_channels: int
    content_hash: str

    @property
    def window_s(self) -> float:
        """Length of the analysed window in seconds."""
        return len(self.samples) / float(self.sr)


def file_hash(path: str | Path) -> str:
    """SHA-256 of a file's bytes (hex, first 16 digits)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


#: Frames read per block when a file must be streamed to count its length.
_BLOCK_FRAMES = 1 << 16
#: Bytes read per block from ffmpeg's output pipe.
_PIPE_BYTES = 1 << 20


@dataclass(frozen=True)
class _Head:
    """The leading frames of a file, its true length in frames, its rate and channel count."""

    data: npt.NDArray[np.float32]
    n_frames: int
    sr: int
    channels: int


def _count_rest(fh: sf.SoundFile, start: int) -> int:
    """Frames from ``start`` to the end, read in blocks (memory bounded by the block)."""
    fh.seek(start)
    n = start
    while True:
        block = fh.read(_BLOCK_FRAMES, dtype="float32", always_2d=True)
        if len(block) == 0:
            return n
        n += len(block)


def _decode_soundfile(path: Path, keep_s: float) -> _Head:
    """Read the leading ``keep_s`` seconds with libsndfile; the length comes from the header.

    A header that claims more frames than the file holds (a truncated or damaged file)
    is caught by reading the last claimed frame; the frames are then counted by streaming
    the rest of the file block by block.
    """
    with sf.SoundFile(str(path)) as fh:
        sr, channels, claimed = int(fh.samplerate), int(fh.channels), int(fh.frames)
        keep = int(np.ceil(keep_s * sr)) if sr > 0 else 0
        data = fh.read(keep, dtype="float32", always_2d=True)
        n_frames = claimed
        if len(data) < min(keep, claimed):
            n_frames = len(data)  # the header promised more than the file holds
        elif claimed > len(data):
            try:
                fh.seek(claimed - 1)
                last = fh.read(1, dtype="float32", always_2d=True)
            except (sf.LibsndfileError, RuntimeError):
                last = np.zeros((0, channels), dtype=np.float32)
            if len(last) != 1:
                n_frames = _count_rest(fh, len(data))
    return _Head(data, n_frames, sr, channels)


def _probe_ffmpeg(path: Path) -> tuple[int, int]:
    ffprobe = shutil.which("ffprobe")
    if ffprobe is None:
        raise ClipError(f"{path}: cannot decode this format without ffmpeg; run `make setup`")
    res = subprocess.run(
        [ffprobe, "-v", "error", "-select_streams", "a:0", "-show_entries",
         "stream=sample_rate,channels", "-of", "csv=p=0", str(path)],
        capture_output=True, text=True, check=False,
    )
    parts = res.stdout.strip().split(",")
    if res.returncode != 0 or len(parts) < 2 or not all(p.strip().isdigit() for p in parts[:2]):
        reason = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "no audio stream"
        raise ClipError(f"{path}: corrupt or unreadable audio ({reason})")
    return int(parts[0]), int(parts[1])


def _decode_ffmpeg(path: Path, keep_s: float) -> _Head:
    """Decode with ffmpeg, keeping the leading ``keep_s`` seconds.

    The whole file is decoded (compressed formats rarely state an exact length), but
    through a pipe read block by block: only the kept head is held in memory, the rest is
    counted and dropped.
    """
    sr, channels = _probe_ffmpeg(path)
    if channels <= 0 or sr <= 0:
        raise ClipError(f"{path}: corrupt audio ({channels} channels at {sr} Hz)")
    ffmpeg = shutil.which("ffmpeg")
    assert ffmpeg is not None  # _probe_ffmpeg found ffprobe from the same package
    frame_bytes = 4 * channels
    keep_bytes = int(np.ceil(keep_s * sr)) * frame_bytes
    head = bytearray()
    total = 0
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [ffmpeg, "-v", "error", "-nostdin", "-i", str(path), "-map", "0:a:0",
             "-f", "f32le", "-acodec", "pcm_f32le", "-"],
            stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
        with proc.stdout:
            while True:
                chunk = proc.stdout.read(_PIPE_BYTES)
                if not chunk:
                    break
                total += len(chunk)
                if len(head) < keep_bytes:
                    head += chunk[:keep_bytes - len(head)]
        rc = proc.wait()
        err.seek(0)
        reason = err.read().decode(errors="replace").strip().splitlines()
    if rc != 0:
        raise ClipError(f"{path}: corrupt audio ({reason[-1] if reason else 'ffmpeg failed'})")
    if total % frame_bytes:
        raise ClipError(f"{path}: corrupt audio (decoded sample count not a multiple of channels)")
    keep = len(head) - len(head) % frame_bytes
    data = np.frombuffer(bytes(head[:keep]), dtype="<f4").reshape(-1, channels).copy()
    return _Head(data, total // frame_bytes, sr, channels)


def _audio_params(config: Config) -> AudioParams:

    return config.params.audio


def load_clip(path: str | Path, config: Config, *, allow_silent: bool = False) -> Clip:
    """Decode ``path`` to mono float32 at the configured rate and cut the analysis window.

    Only the leading ``audio.analysis_window_s`` (plus 0.1 s for the resampler's edge) is
    held in memory, whatever the file's length: libsndfile formats are read up to there
    and their length taken from the header (checked, see :func:`_decode_soundfile`);
    other formats are streamed through ffmpeg and counted.

    Parameters
    ----------
    path : str or Path
        Audio file (wav/flac/ogg/mp3/m4a, any rate, any channel count).
    config : Config
        Reads ``audio.sample_rate_hz``, ``audio.analysis_window_s``,
        ``audio.silent_peak_dbfs`` and ``audio.min_duration_s``.
    allow_silent : bool
        Return a silent clip instead of raising (the scorer scores silence: nothing was
        delivered); :func:`is_silent` tells it apart.

    Returns
    -------
    clip : Clip

    Raises
    ------
    ClipError
        Naming the file and the reason: missing, empty, corrupt, sample rate below
        ``audio.min_sample_rate_hz``, too short, non-finite samples in the analysis
        window, or silent (unless ``allow_silent``).
    """
    p = Path(path)
    if not p.is_file():
        raise ClipError(f"{p}: file not found")
    if p.stat().st_size == 0:
        raise ClipError(f"{p}: empty file (0 bytes)")
    ap = _audio_params(config)
    try:
        head = _decode_soundfile(p, ap.analysis_window_s + RESAMPLE_MARGIN_S)
    except (sf.LibsndfileError, RuntimeError, TypeError):
        head = _decode_ffmpeg(p, ap.analysis_window_s + RESAMPLE_MARGIN_S)
    sr, n_frames = head.sr, head.n_frames
    min_sr = ap.min_sample_rate_hz
    if sr < min_sr:
        raise ClipError(f"{p}: sample rate {sr} Hz is below audio.min_sample_rate_hz ({min_sr} Hz)")
    if n_frames == 0 or len(head.data) == 0:
        raise ClipError(f"{p}: zero-length audio (no samples)")
    check_duration(n_frames, sr, ap, label=str(p))
    data = head.data
    if not np.all(np.isfinite(data)):
        bad = int(np.count_nonzero(~np.isfinite(data)))
        raise ClipError(f"{p}: {bad} non-finite samples (NaN or inf) in the analysis window")
    return clip_from_frames(data, sr, n_frames=n_frames, path=p, content_hash=file_hash(p), audio=ap,
                            allow_silent=allow_silent)


def head_length(sr: int, audio: AudioParams) -> int:
    """Frames of a ``sr``-Hz source that :func:`clip_from_frames` needs: the analysis window
    plus :data:`RESAMPLE_MARGIN_S` for the resampler's edge."""
    return int(np.ceil((audio.analysis_window_s + RESAMPLE_MARGIN_S) * sr))


def check_duration(n_frames: int, sr: int, audio: AudioParams, *, label: str) -> None:
    """Raise :class:`ClipError` (naming ``label``) when ``n_frames`` at ``sr`` Hz is shorter
    than ``audio.min_duration_s``."""
    duration_s = n_frames / float(sr)
    if duration_s < audio.min_duration_s:
        raise ClipError(f"{label}: too short to analyse ({n_frames} samples at {sr} Hz = "
                        f"{duration_s * 1000:.2f} ms; audio.min_duration_s is {audio.min_duration_s * 1000:g} ms)")


def clip_from_frames(
    frames: npt.NDArray[np.float32], sr: int, *, n_frames: int, path: Path, content_hash: str,
    audio: AudioParams, label: str | None = None, allow_silent: bool = False,
) -> Clip:
    """The :class:`Clip` of decoded frames: mono, resampled, cut to the analysis window.

    The one place a decoded source (a file by :func:`load_clip`, an array by
    :func:`timingbench.api.score_audio`) becomes the analysis signal.

    Parameters
    ----------
    frames : ndarray of float32, shape (n, channels)
        The source's leading frames (at least :func:`head_length` of them when it has that
        many), finite, full scale [-1, 1].
    sr : int
        Source sample rate, Hz.
    n_frames : int
        The source's whole length in frames (``duration_s = n_frames / sr``).
    path : Path
        The clip's path (or name); errors name it.
    content_hash : str
        Identity of the source's content (the feature cache's key).
    audio : AudioParams
        Reads ``sample_rate_hz``, ``analysis_window_s`` and ``silent_peak_dbfs``.
    label : str, optional
        What errors name (default: ``path``).
    allow_silent : bool
        Return a silent clip instead of raising.

    Raises
    ------
    ClipError
        If the analysis window is silent (unless ``allow_silent``).
    """
    target_sr = audio.sample_rate_hz
    mono = frames.mean(axis=1, dtype=np.float64)
    if sr != target_sr:
        mono = soxr.resample(mono, sr, target_sr, quality="VHQ")
    n_keep = min(len(mono), int(round(audio.analysis_window_s * target_sr)))
    mono32 = np.ascontiguousarray(mono[:n_keep], dtype=np.float32)
    if not allow_silent and is_silent(mono32, audio):
        silent_db = audio.silent_peak_dbfs
        raise ClipError(f"{label or path}: silent audio (peak below {silent_db:.0f} dBFS in the analysis window)")
    return Clip(path=path, samples=mono32, sr=target_sr, duration_s=n_frames / float(sr), source_sr=sr,
                source_channels=frames.shape[1], content_hash=content_hash)


def is_silent(samples: npt.NDArray[np.float32], audio: AudioParams) -> bool:
    """True when the peak of ``samples`` (full scale [-1, 1]) is at or below ``audio.silent_peak_dbfs``."""
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    return peak <= 10 ** (audio.silent_peak_dbfs / 20.0)


def level_normalised(
    samples: npt.NDArray[np.float32], *, sr: int, loud_dbfs: float, frame_s: float, percentile: float
) -> npt.NDArray[np.float32]:
    """Scale ``samples`` so that the clip's loud level sits at ``loud_dbfs``.

    Front ends that compress with ``log(a x + 1)`` (musicnn's tagger, madmom's beat
    network) are not gain-invariant, so their output would depend on mastering level;
    they are fed level-normalised audio. The loud level is the ``percentile`` percentile of
    the frame mean square over ``frame_s`` frames (hop a quarter frame), the statistic the
    feature bank uses (``audio.level_frame_s``, ``audio.level_percentile``: 2048 samples at
    44.1 kHz, 95th percentile). Silent input is returned unchanged.

    Parameters
    ----------
    samples : np.ndarray of float32, shape (n,)
        Mono audio.
    sr : int
        Sample rate in Hz.
    loud_dbfs : float
        Target loud level in dBFS.
    frame_s : float
        Frame length in seconds (at least 64 samples).
    percentile : float
        Percentile of the frame mean square taken as the loud level.

    Returns
    -------
    scaled : np.ndarray of float32, shape (n,)
    """
    x = np.asarray(samples, dtype=np.float32)
    frame = max(64, int(round(frame_s * sr)))
    hop = max(16, frame // 4)
    if x.size < frame:
        ms = np.array([float(np.mean(x.astype(np.float64) ** 2))]) if x.size else np.zeros(1)
    else:
        idx = np.arange(0, x.size - frame + 1, hop)
        c = np.concatenate(([0.0], np.cumsum(x.astype(np.float64) ** 2)))
        ms = (c[idx + frame] - c[idx]) / frame
    loud_ms = float(np.percentile(ms, percentile))
    if loud_ms <= 0:
        return x
    gain = 10 ** (loud_dbfs / 20) / np.sqrt(loud_ms)
    return (x * np.float32(gain)).astype(np.float32)


#: Channels a 2-D ``samples`` array may have; more means the axes are probably swapped.
MAX_CHANNELS = 64


def clip_from_array(samples: npt.ArrayLike, sr: int, *, config: Config, name: str = "<memory>") -> Clip:
    """Turn an array into the :class:`~timingbench.audio.Clip` that decoding a file of it gives.

    Checks the array as :func:`timingbench.audio.load_clip` checks a file, then hands its
    leading frames (as float32, what decoding gives) to the same
    :func:`timingbench.audio.clip_from_frames`, so that the array read back from a file
    scores exactly as the file does.

    Parameters
    ----------
    samples : array_like of float, shape (n,) or (n, channels)
        Audio in [-1, 1] full scale; 2-D arrays are frame-major, as ``soundfile.read``
        returns them (transpose a librosa-style ``(channels, n)`` array).
    sr : int
        Sample rate of ``samples`` in Hz.
    config : Config
        Reads the ``audio`` section.
    name : str
        Shown in error messages and used as the clip's path.

    Returns
    -------
    clip : Clip

    Raises
    ------
    ParameterError
        ``samples`` is not a 1-D or 2-D real array, or ``sr`` is not a whole number of Hz
        at or above ``audio.min_sample_rate_hz``.
    ClipError
        ``samples`` is empty, shorter than ``audio.min_duration_s`` or holds NaN or inf
        (silence is a clip: it is scored, nothing delivered).
    """

    ap = config.params.audio
    if isinstance(sr, bool) or not isinstance(sr, numbers.Integral | float) or isinstance(sr, float) and (
            not math.isfinite(sr) or sr != int(sr)):
        raise ParameterError(f"sr: expected a whole number of Hz, got {sr!r}")
    rate = int(sr)
    if rate < ap.min_sample_rate_hz:
        raise ParameterError(f"sr: {rate} Hz is below audio.min_sample_rate_hz ({ap.min_sample_rate_hz} Hz); "
                             "did you pass the rate in kHz?")
    try:
        arr = np.asarray(samples)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"samples: not an array of numbers ({exc})") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise ParameterError(f"samples: expected real numbers, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.integer):
        raise ParameterError(f"samples: expected floats in [-1, 1], got integer dtype {arr.dtype}; "
                             "divide by the full-scale value (e.g. 32768 for int16) first")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ParameterError(f"samples: expected shape (n,) or (n, channels), got {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ClipError(f"samples: empty array (shape {arr.shape}); nothing to score")
    if arr.shape[1] > MAX_CHANNELS and arr.shape[1] > arr.shape[0]:
        raise ParameterError(f"samples: shape {arr.shape} looks like (channels, n); pass samples.T "
                             "(the layout is (n, channels), as soundfile.read returns)")
    n_frames, channels = arr.shape
    check_duration(n_frames, rate, ap, label="samples")
    finite = np.isfinite(arr)
    if not finite.all():
        bad = int(np.count_nonzero(~finite))
        first = int(np.argmin(finite.all(axis=1)))
        raise ClipError(f"samples: {bad} non-finite values (NaN or inf), the first at frame {first} "
                        f"({first / rate:.3f} s)")
    head = np.asarray(arr[:head_length(rate, ap)], dtype=np.float32)
    digest = hashlib.sha256(np.ascontiguousarray(head).tobytes())
    digest.update(f"{rate}:{channels}:{n_frames}".encode())
    return clip_from_frames(head, rate, n_frames=n_frames, path=Path(name), content_hash=digest.hexdigest()[:16],
                            audio=ap, label="samples", allow_silent=True)
