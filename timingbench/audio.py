"""Decode any audio file to 44.1 kHz mono float32 and cut the leading analysis window.

Formats: anything libsndfile reads (wav, flac, ogg, ...) is decoded with ``soundfile``;
mp3, m4a/aac and anything soundfile rejects are decoded by the ``ffmpeg`` command-line
tool, which the set-up installs. Resampling uses ``soxr`` (VHQ).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
import soundfile as sf
import soxr

from timingbench.config import Config
from timingbench.errors import ClipError

AUDIO_EXTENSIONS = (".wav", ".flac", ".ogg", ".mp3", ".m4a", ".aac", ".opus", ".aiff", ".aif")


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


def _decode_soundfile(path: Path) -> tuple[npt.NDArray[np.float32], int]:
    data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return data, int(sr)


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


def _decode_ffmpeg(path: Path) -> tuple[npt.NDArray[np.float32], int]:
    sr, channels = _probe_ffmpeg(path)
    ffmpeg = shutil.which("ffmpeg")
    assert ffmpeg is not None  # _probe_ffmpeg found ffprobe from the same package
    res = subprocess.run(
        [ffmpeg, "-v", "error", "-nostdin", "-i", str(path), "-map", "0:a:0",
         "-f", "f32le", "-acodec", "pcm_f32le", "-"],
        capture_output=True, check=False,
    )
    if res.returncode != 0:
        reason = res.stderr.decode(errors="replace").strip().splitlines()
        raise ClipError(f"{path}: corrupt audio ({reason[-1] if reason else 'ffmpeg failed'})")
    data = np.frombuffer(res.stdout, dtype="<f4")
    if channels <= 0 or data.size % channels:
        raise ClipError(f"{path}: corrupt audio (decoded sample count not a multiple of channels)")
    return data.reshape(-1, channels).copy(), sr


def load_clip(path: str | Path, config: Config) -> Clip:
    """Decode ``path`` to mono float32 at the configured rate and cut the analysis window.

    Parameters
    ----------
    path : str or Path
        Audio file (wav/flac/ogg/mp3/m4a, any rate, any channel count).
    config : Config
        Reads ``audio.sample_rate_hz``, ``audio.analysis_window_s``,
        ``audio.silent_peak_dbfs`` and ``audio.min_duration_s``.

    Returns
    -------
    clip : Clip

    Raises
    ------
    ClipError
        Naming the file and the reason: missing, empty, corrupt, sample rate below
        ``audio.min_sample_rate_hz``, too short, non-finite samples, or silent.
    """
    p = Path(path)
    if not p.is_file():
        raise ClipError(f"{p}: file not found")
    if p.stat().st_size == 0:
        raise ClipError(f"{p}: empty file (0 bytes)")
    target_sr = int(config.value("audio.sample_rate_hz"))
    window_s = float(config.value("audio.analysis_window_s"))
    try:
        data, sr = _decode_soundfile(p)
    except (sf.LibsndfileError, RuntimeError, TypeError):
        data, sr = _decode_ffmpeg(p)
    min_sr = int(config.value("audio.min_sample_rate_hz"))
    if sr < min_sr:
        raise ClipError(f"{p}: sample rate {sr} Hz is below audio.min_sample_rate_hz ({min_sr} Hz)")
    n_frames, channels = data.shape
    if n_frames == 0:
        raise ClipError(f"{p}: zero-length audio (no samples)")
    duration_s = n_frames / float(sr)
    min_s = float(config.value("audio.min_duration_s"))
    if duration_s < min_s:
        raise ClipError(f"{p}: too short to analyse ({n_frames} samples at {sr} Hz = {duration_s * 1000:.2f} ms; "
                        f"audio.min_duration_s is {min_s * 1000:g} ms)")
    if not np.all(np.isfinite(data)):
        bad = int(np.count_nonzero(~np.isfinite(data)))
        raise ClipError(f"{p}: {bad} non-finite samples (NaN or inf)")
    # cut before resampling (plus a margin for the resampler's edge) to bound the cost
    keep = min(n_frames, int(np.ceil((window_s + 0.1) * sr)))
    mono = data[:keep].mean(axis=1, dtype=np.float64)
    if sr != target_sr:
        mono = soxr.resample(mono, sr, target_sr, quality="VHQ")
    n_keep = min(len(mono), int(round(window_s * target_sr)))
    mono32 = np.ascontiguousarray(mono[:n_keep], dtype=np.float32)
    peak = float(np.max(np.abs(mono32))) if mono32.size else 0.0
    silent_db = float(config.value("audio.silent_peak_dbfs"))
    if peak <= 10 ** (silent_db / 20.0):
        raise ClipError(f"{p}: silent audio (peak below {silent_db:.0f} dBFS in the analysis window)")
    return Clip(
        path=p,
        samples=mono32,
        sr=target_sr,
        duration_s=duration_s,
        source_sr=sr,
        source_channels=channels,
        content_hash=file_hash(p),
    )


def level_normalised(samples: npt.NDArray[np.float32], *, sr: int, loud_dbfs: float) -> npt.NDArray[np.float32]:
    """Scale ``samples`` so that the clip's loud level sits at ``loud_dbfs``.

    Front ends that compress with ``log(a x + 1)`` (musicnn's tagger, madmom's beat
    network) are not gain-invariant, so their output would depend on mastering level;
    they are fed level-normalised audio. The loud level is the 95th percentile of the
    frame RMS (2048-sample frames, hop 512) in dBFS, the same statistic the feature bank
    uses. Silent input is returned unchanged.

    Parameters
    ----------
    samples : np.ndarray of float32, shape (n,)
        Mono audio.
    sr : int
        Sample rate in Hz (frames are 2048 samples at 44.1 kHz, scaled with the rate).
    loud_dbfs : float
        Target loud level in dBFS.

    Returns
    -------
    scaled : np.ndarray of float32, shape (n,)
    """
    x = np.asarray(samples, dtype=np.float32)
    frame = max(64, int(round(2048 * sr / 44100)))
    hop = max(16, frame // 4)
    if x.size < frame:
        ms = np.array([float(np.mean(x.astype(np.float64) ** 2))]) if x.size else np.zeros(1)
    else:
        idx = np.arange(0, x.size - frame + 1, hop)
        c = np.concatenate(([0.0], np.cumsum(x.astype(np.float64) ** 2)))
        ms = (c[idx + frame] - c[idx]) / frame
    loud_ms = float(np.percentile(ms, 95))
    if loud_ms <= 0:
        return x
    gain = 10 ** (loud_dbfs / 20) / np.sqrt(loud_ms)
    return (x * np.float32(gain)).astype(np.float32)
