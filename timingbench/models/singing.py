"""The singing detector: FireRedVAD AED's speech, singing and music probabilities every 10 ms.

FireRedVAD's audio event detector (a DFSMN of about 0.59 M parameters, Apache-2.0, shipped
in ``timingbench/data/singing/`` with its model card ``PROVENANCE.md``) reads 80 Kaldi log-mel
filterbank bins every 10 ms, normalised by the global CMVN statistics it was trained with,
and gives three independent sigmoid outputs per frame: P(speech), P(singing), P(music).

The front end is the model's own (its upstream README's facts, reproduced, not copied):

- mono at 16 kHz (resampled with soxr, very high quality), samples on the int16 scale
  (a float signal in [-1, 1] times 32768);
- Kaldi fbank by ``kaldi-native-fbank``: 80 mel bins, 25-ms frames, 10-ms shift, dither 0,
  the Kaldi defaults otherwise (povey window, pre-emphasis 0.97, DC removal, log mel);
- CMVN from ``cmvn.ark`` (a Kaldi binary matrix, read by :func:`read_kaldi_matrix`):
  ``(fbank - mean) / sqrt(variance)``.

The whole signal is read in one pass (the upstream code does the same up to 300 s); the
per-frame probabilities are returned as they are, unsmoothed. Frame ``k`` spans input samples
``[160 k, 160 k + 400)`` at 16 kHz, so its centre is ``0.01 k + 0.0125`` s.

The front end is not gain-invariant (log mel of int16-scaled samples): callers bring the
input to one loud level first (:mod:`timingbench.identity.singing` does, at the tagger's
``audio.input_loud_level_dbfs``).

The model and the statistics are checked against their SHA-256 (``singing.model_sha256``,
``singing.cmvn_sha256``) before they are read; a missing or corrupt file raises
:class:`~timingbench.errors.ModelUnavailableError`. One onnxruntime session per process and
thread count, run with ``singing.threads`` intra-op threads and sequential execution, so
readings are deterministic.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.memo import file_sha256, process_cache
from timingbench.packaged import data_path

if TYPE_CHECKING:
    from timingbench.params.singing import SingingParams

F32 = npt.NDArray[np.float32]
F64 = npt.NDArray[np.float64]

#: The ONNX model and its CMVN statistics, shipped in the package.
MODEL_PATH = data_path("singing", "fireredvad_aed.onnx")
CMVN_PATH = data_path("singing", "cmvn.ark")
#: The model's sample rate (Hz) and its frame shift and length (samples at that rate).
MODEL_SR = 16000
FRAME_SHIFT = 160
FRAME_LENGTH = 400
#: Seconds between frames, and the centre of frame 0 (s).
FRAME_S = FRAME_SHIFT / MODEL_SR
FIRST_CENTRE_S = FRAME_LENGTH / 2 / MODEL_SR
#: Mel bins of the front end.
N_MELS = 80
#: The model's outputs, in order.
CLASSES = ("speech", "singing", "music")
#: Samples of a float signal in [-1, 1] are read on the int16 scale.
INT16_SCALE = 32768.0
#: Variance floor of the CMVN (the upstream front end's).
VARIANCE_FLOOR = 1e-20
#: Resampling quality (as the bank's other model inputs).
RESAMPLE_QUALITY = "VHQ"


@dataclass(frozen=True)
class SingingFrames:
    """The detector's reading of one signal.

    Attributes
    ----------
    times : np.ndarray of float64, shape (n,)
        Frame centres in seconds (``0.01 k + 0.0125``).
    probs : np.ndarray of float32, shape (n, 3)
        P(speech), P(singing), P(music) per frame (:data:`CLASSES`), each a sigmoid.
    model_sha256 : str
        SHA-256 of the model file read (64 hex digits).
    """

    times: F64
    probs: F32
    model_sha256: str


# ----------------------------------------------------------------------------- files


def checked_file(path: Path, expected_sha256: str | None, *, what: str) -> str:
    """The file's SHA-256, after checking it exists and matches ``expected_sha256`` (None: no check).

    Raises
    ------
    ModelUnavailableError
        If the file is missing, unreadable or another file than the one expected.
    """
    if not path.is_file():
        raise ModelUnavailableError(f"{path}: the singing detector's {what} is missing (reinstall timingbench; "
                                    f"expected sha256 {expected_sha256})")
    try:
        digest = file_sha256(path)
    except OSError as exc:
        raise ModelUnavailableError(f"{path}: cannot read the singing detector's {what} ({exc.strerror})") from None
    if expected_sha256 is not None and digest != expected_sha256:
        raise ModelUnavailableError(f"{path}: the singing detector's {what} is corrupt or another file: sha256 "
                                    f"{digest}, expected {expected_sha256} (reinstall timingbench)")
    return digest


def read_kaldi_matrix(data: bytes, *, what: str = "matrix") -> F64:
    """A Kaldi binary matrix (``FM`` float32 or ``DM`` float64), optionally after an archive key.

    Parameters
    ----------
    data : bytes
        The file's bytes: ``[key ]\\0B`` then ``FM `` / ``DM ``, the row and column counts
        (each a size byte 4 and a little-endian int32), then the values row by row.
    what : str
        Name of the source, for errors.

    Returns
    -------
    matrix : np.ndarray of float64, shape (rows, cols)

    Raises
    ------
    ModelUnavailableError
        If the bytes are not one binary Kaldi matrix.
    """
    at = data.find(b"\0B")
    if at < 0:
        raise ModelUnavailableError(f"{what}: not a binary Kaldi object (no '\\0B' header)")
    pos = at + 2
    token = data[pos:pos + 3]
    dtypes: dict[bytes, np.dtype[Any]] = {b"FM ": np.dtype("<f4"), b"DM ": np.dtype("<f8")}
    if token not in dtypes:
        raise ModelUnavailableError(f"{what}: not a Kaldi float or double matrix (token {token!r})")
    pos += 3
    dims = []
    for _ in range(2):
        if data[pos:pos + 1] != b"\x04" or len(data) < pos + 5:
            raise ModelUnavailableError(f"{what}: malformed Kaldi matrix header at byte {pos}")
        dims.append(struct.unpack("<i", data[pos + 1:pos + 5])[0])
        pos += 5
    rows, cols = dims
    dt = dtypes[token]
    size = rows * cols * dt.itemsize
    if rows < 0 or cols < 0 or len(data) < pos + size:
        raise ModelUnavailableError(f"{what}: a {rows} x {cols} Kaldi matrix needs {size} bytes of values, "
                                    f"the file holds {len(data) - pos}")
    return np.frombuffer(data, dtype=dt, count=rows * cols, offset=pos).astype(np.float64).reshape(rows, cols)


def cmvn_from_stats(stats: npt.ArrayLike) -> tuple[F64, F64]:
    """Mean and inverse standard deviation of Kaldi global CMVN statistics.

    Parameters
    ----------
    stats : array_like, shape (2, d + 1)
        Row 0: the sums of each dimension then the frame count; row 1: the sums of squares.

    Returns
    -------
    mean, inv_std : np.ndarray of float64, shape (d,)

    Raises
    ------
    ModelUnavailableError
        If the statistics are not ``2 x (d + 1)`` or count no frame.
    """
    s = np.asarray(stats, dtype=np.float64)
    if s.ndim != 2 or s.shape[0] != 2 or s.shape[1] < 2:
        raise ModelUnavailableError(f"CMVN statistics must be a 2 x (d + 1) matrix, got shape {s.shape}")
    count = float(s[0, -1])
    if not count > 0:
        raise ModelUnavailableError(f"CMVN statistics count {count!r} frames; need a positive count")
    mean = s[0, :-1] / count
    var = np.maximum(s[1, :-1] / count - mean * mean, VARIANCE_FLOOR)
    return mean, 1.0 / np.sqrt(var)


@dataclass(frozen=True)
class LoadedDetector:
    """A loaded singing detector: the session and the CMVN it reads with."""

    session: Any
    input_name: str
    mean: F32
    inv_std: F32
    model_sha256: str


def detector_for(params: SingingParams) -> LoadedDetector:
    """The shipped detector, loaded once per process and thread count, after its files are checked.

    Raises
    ------
    ModelUnavailableError
        If a file is missing or corrupt, or onnxruntime cannot load the model.
    """
    model_sha = checked_file(MODEL_PATH, params.model_sha256, what="ONNX model")
    cmvn_sha = checked_file(CMVN_PATH, params.cmvn_sha256, what="CMVN statistics")
    return _load(str(MODEL_PATH), model_sha, str(CMVN_PATH), cmvn_sha, int(params.threads))


@process_cache(4)
def _load(model: str, model_sha: str, cmvn: str, cmvn_sha: str, threads: int) -> LoadedDetector:
    import onnxruntime as ort

    mean, inv_std = cmvn_from_stats(read_kaldi_matrix(Path(cmvn).read_bytes(), what=cmvn))
    if mean.size != N_MELS:
        raise ModelUnavailableError(f"{cmvn}: CMVN statistics of {mean.size} bins, the front end gives {N_MELS}")
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.log_severity_level = 3
    try:
        session = ort.InferenceSession(model, sess_options=opts, providers=["CPUExecutionProvider"])
    except Exception as exc:  # onnxruntime raises its own exception types
        raise ModelUnavailableError(f"{model}: onnxruntime cannot load the singing detector "
                                    f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    return LoadedDetector(session=session, input_name=session.get_inputs()[0].name,
                          mean=mean.astype(np.float32), inv_std=inv_std.astype(np.float32), model_sha256=model_sha)


# ----------------------------------------------------------------------------- front end


def resample_to_model(samples: npt.ArrayLike, sr: float) -> F32:
    """Mono samples at :data:`MODEL_SR` (soxr, very high quality; unchanged when already there).

    Raises
    ------
    ParameterError
        If the signal is not one-dimensional and finite or ``sr`` is not positive.
    """
    x = np.asarray(samples, dtype=np.float32)
    if x.ndim != 1:
        raise ParameterError(f"the singing detector reads mono samples (one dimension), got shape {x.shape}")
    if not (math.isfinite(sr) and sr > 0):
        raise ParameterError(f"sr: the sample rate must be positive, got {sr!r}")
    if not np.isfinite(x).all():
        raise ParameterError("the singing detector's input holds non-finite samples (NaN or inf)")
    if sr == MODEL_SR:
        return x
    import soxr

    return np.asarray(soxr.resample(x, sr, MODEL_SR, quality=RESAMPLE_QUALITY), dtype=np.float32)


def fbank(pcm: npt.ArrayLike) -> F32:
    """Kaldi log-mel filterbank of 16-kHz samples on the int16 scale (the model's front end).

    Parameters
    ----------
    pcm : array_like, shape (n,)
        Samples at :data:`MODEL_SR` on the int16 scale (``[-32768, 32767]``; integers or floats).

    Returns
    -------
    fbank : np.ndarray of float32, shape (n_frames, 80)
        ``1 + (n - 400) // 160`` frames (none for fewer than 400 samples).
    """
    import kaldi_native_fbank as knf

    opts = knf.FbankOptions()
    opts.frame_opts.samp_freq = MODEL_SR
    opts.frame_opts.frame_shift_ms = 1000.0 * FRAME_SHIFT / MODEL_SR
    opts.frame_opts.frame_length_ms = 1000.0 * FRAME_LENGTH / MODEL_SR
    opts.frame_opts.dither = 0.0
    opts.frame_opts.snip_edges = True
    opts.mel_opts.num_bins = N_MELS
    opts.energy_floor = 0.0
    x = np.asarray(pcm, dtype=np.float32)
    online = knf.OnlineFbank(opts)
    online.accept_waveform(MODEL_SR, x.tolist())
    online.input_finished()
    n = online.num_frames_ready
    if n == 0:
        return np.zeros((0, N_MELS), dtype=np.float32)
    return np.stack([np.asarray(online.get_frame(i), dtype=np.float32) for i in range(n)])


def normalised(fb: npt.ArrayLike, detector: LoadedDetector) -> F32:
    """``fb`` after the detector's CMVN: ``(fbank - mean) / sqrt(variance)``, float32."""
    return ((np.asarray(fb, dtype=np.float32) - detector.mean) * detector.inv_std).astype(np.float32)


def run_network(feat: npt.ArrayLike, detector: LoadedDetector) -> F32:
    """The network's probabilities of CMVN-normalised features, shape ``(n_frames, 3)``, float32."""
    f = np.ascontiguousarray(np.asarray(feat, dtype=np.float32))
    if f.shape[0] == 0:
        return np.zeros((0, len(CLASSES)), dtype=np.float32)
    (probs,) = detector.session.run(None, {detector.input_name: f[None]})
    return np.asarray(probs[0], dtype=np.float32)


def frame_times(n_frames: int) -> F64:
    """Centres (s) of the detector's first ``n_frames`` frames."""
    return FIRST_CENTRE_S + FRAME_S * np.arange(int(n_frames), dtype=np.float64)


def singing_frames(samples: npt.ArrayLike, sr: float, params: SingingParams) -> SingingFrames:
    """The detector's speech, singing and music probabilities every 10 ms of a signal.

    Parameters
    ----------
    samples : array_like, shape (n,)
        Mono signal, full scale 1 (it is read as ``samples * 32768``, so its level matters:
        bring it to a fixed loud level first).
    sr : float
        Its sample rate, Hz.
    params : SingingParams
        The ``singing`` section (file digests, threads).

    Returns
    -------
    frames : SingingFrames
        No frame for a signal shorter than one 25-ms frame.

    Raises
    ------
    ParameterError
        If the signal is not mono and finite or ``sr`` is not positive.
    ModelUnavailableError
        If the model or its statistics are missing or corrupt.
    """
    detector = detector_for(params)
    pcm = resample_to_model(samples, sr) * np.float32(INT16_SCALE)
    fb = fbank(pcm)
    probs = run_network(normalised(fb, detector), detector)
    return SingingFrames(times=frame_times(probs.shape[0]), probs=probs, model_sha256=detector.model_sha256)
