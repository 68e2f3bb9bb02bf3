"""Source separation backends: ``demucs`` (real hybrid transformer model) and ``dsp``.

``--separation`` chooses:

- ``demucs``: htdemucs, from whichever weights are present:

  - its PyTorch checkpoints (source ``pytorch``): ``htdemucs`` for drums / bass / vocals /
    other and ``htdemucs_6s`` when a piano or guitar stem is asked for, from
    ``--demucs-repo DIR`` (or the ``separation.demucs_repo`` constant: a folder in
    demucs's own layout, ``<model>.yaml`` listing signatures plus
    ``<sig>[-<checksum>].th`` files), or else from the torch hub cache
    (``$TORCH_HOME/hub/checkpoints``) where ``demucs`` itself stores downloads;
  - its 4-stem ONNX export (source ``onnx``, ``timingbench models fetch demucs``), run by
    onnxruntime (:mod:`timingbench.models.htdemucs_onnx`); piano and guitar then read the
    ``other`` stem, as the stem detector does whenever a stem is not available.

  The PyTorch checkpoints win when both are present: they are demucs's own code path and
  serve piano and guitar. Nothing is ever downloaded; missing weights raise
  :class:`~timingbench.errors.ModelUnavailableError` naming the places searched. Either
  way the file's own channels are separated (stereo, or mono duplicated), normalised as
  ``demucs.api.Separator`` does, in ``apply_model``'s overlapping segments.
- ``dsp``: a deterministic, coarse fallback built from the bank's own harmonic/percussive
  separation: percussive -> ``drums``, harmonic below ``separation.dsp_bass_cutoff_hz``
  -> ``bass``, the remaining harmonic part -> ``other``. It cannot isolate vocals, piano
  or guitar; asking for those raises ``ModelUnavailableError``.
- ``auto``: ``demucs`` when either kind of 4-stem weights is present, otherwise ``dsp``,
  with the reason recorded in ``FeatureBank.separation_note``.
- ``none``: no stems at all.

Only the leading analysis window is separated, only when a detector asks for a stem,
and the resulting stem features are cached next to the bank; the ONNX source's stems
themselves are cached too (:func:`cached_onnx_stems`), so a corpus is separated once.
"""

from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import yaml

from timingbench.choices import SEPARATIONS
from timingbench.config import Config
from timingbench.errors import ConfigError, ModelUnavailableError, ParameterError
from timingbench.memo import process_cache

STEMS_4 = ("drums", "bass", "vocals", "other")
STEMS_6_EXTRA = ("piano", "guitar")
ALL_STEMS = STEMS_4 + STEMS_6_EXTRA
DSP_STEMS = ("drums", "bass", "other")

_RUNS = {"demucs": 0, "dsp": 0}
_RUNS_LOCK = threading.Lock()


def separation_run_count(backend: str) -> int:
    """How many separations ``backend`` (``"demucs"`` | ``"dsp"``) has run in this process."""
    return _RUNS[backend]


def _count(backend: str) -> None:
    with _RUNS_LOCK:
        _RUNS[backend] += 1


@dataclass(frozen=True)
class Resolution:
    """The separation backend actually used for a bank.

    Attributes
    ----------
    requested : str
        ``auto`` | ``demucs`` | ``dsp`` | ``none``.
    backend : str
        ``demucs`` | ``dsp`` | ``none``.
    note : str or None
        Why the backend differs from the request (e.g. missing weights), else None.
    demucs_repo : Path or None
        The local model folder in use, when given.
    source : str or None
        The demucs weights in use: ``pytorch`` (checkpoints) or ``onnx`` (the export);
        None for ``dsp`` and ``none``.
    """

    requested: str
    backend: str
    note: str | None
    demucs_repo: Path | None
    source: str | None = None

    @property
    def label(self) -> str:
        """What summaries name: ``demucs (onnx)``, ``demucs (pytorch)``, ``dsp`` or ``none``."""
        return f"{self.backend} ({self.source})" if self.source else self.backend


def configured_repo(cfg: Config, demucs_repo: str | Path | None) -> Path | None:
    """The demucs model folder: the explicit argument, else ``separation.demucs_repo``, else None."""
    if demucs_repo is not None:
        return Path(demucs_repo)
    v = cfg.params.separation.demucs_repo
    return Path(v) if v else None


def _hub_checkpoint_dir() -> Path:
    """torch.hub's checkpoint folder, found as ``torch.hub.get_dir`` finds it.

    Without importing torch when it is not loaded yet (then no ``torch.hub.set_dir`` can have
    moved it): ``$TORCH_HOME/hub``, ``$TORCH_HOME`` defaulting to ``$XDG_CACHE_HOME/torch``
    and that to ``~/.cache/torch``.
    """
    if "torch" in sys.modules:
        import torch.hub

        return Path(torch.hub.get_dir()) / "checkpoints"
    cache = os.getenv("XDG_CACHE_HOME", "~/.cache")
    return Path(os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))) / "hub" / "checkpoints"


def _remote_files() -> dict[str, str]:
    from demucs.pretrained import REMOTE_ROOT, _parse_remote_files

    return dict(_parse_remote_files(REMOTE_ROOT / "files.txt"))


def _bag_signatures(yaml_path: Path) -> list[str]:
    try:
        data = yaml.safe_load(yaml_path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ModelUnavailableError(f"{yaml_path}: unreadable demucs model description ({exc})") from None
    sigs = data.get("models") if isinstance(data, dict) else None
    if not isinstance(sigs, list) or not sigs:
        raise ModelUnavailableError(f"{yaml_path}: field 'models' must list model signatures")
    return [str(s) for s in sigs]


def find_demucs_weights(name: str, *, repo: Path | None) -> tuple[str, Path] | None:
    """Locate local weights of demucs model ``name`` without downloading anything.

    Parameters
    ----------
    name : str
        Model (bag) name, e.g. ``htdemucs``.
    repo : Path or None
        A demucs model folder; when None, the torch hub cache is searched.

    Returns
    -------
    found : (str, Path) or None
        ``("repo", folder)`` or ``("hub", checkpoint folder)``, or None when absent.
    """
    if repo is not None:
        yml = repo / f"{name}.yaml"
        if not yml.is_file():
            return None
        sigs = _bag_signatures(yml)
        present = {p.stem.split("-", 1)[0] for p in repo.glob("*.th")}
        return ("repo", repo) if all(s in present for s in sigs) else None
    ckpt = _hub_checkpoint_dir()
    if not any(ckpt.glob("*.th")):  # no checkpoint at all: demucs (and torch) need not be imported to say so
        return None
    from demucs.pretrained import REMOTE_ROOT

    yml = REMOTE_ROOT / f"{name}.yaml"
    if not yml.is_file():
        return None
    urls = _remote_files()
    for sig in _bag_signatures(yml):
        url = urls.get(sig)
        if url is None or not (ckpt / url.rsplit("/", 1)[-1]).is_file():
            return None
    return ("hub", ckpt)


def _where_searched(name: str, repo: Path | None) -> str:
    if repo is not None:
        return f"{repo} (needs {name}.yaml and its .th files)"
    return f"the torch hub cache {_hub_checkpoint_dir()} (pass --demucs-repo DIR for a local model folder)"


def resolve(choice: str, *, cfg: Config, demucs_repo: str | Path | None = None) -> Resolution:
    """Decide which separation backend a bank uses (cheap: only checks files).

    Parameters
    ----------
    choice : str
        ``auto`` | ``demucs`` | ``dsp`` | ``none``.
    cfg : Config
        Reads ``separation.model_4stem`` and ``separation.demucs_repo``.
    demucs_repo : str or Path, optional
        Local demucs model folder (``--demucs-repo``).

    Returns
    -------
    resolution : Resolution

    Raises
    ------
    ParameterError
        If ``choice`` is not one of the four choices.
    ModelUnavailableError
        If ``demucs`` is requested and neither its PyTorch checkpoints nor its ONNX export
        is present locally.
    """
    from timingbench.models import htdemucs_onnx

    if choice not in SEPARATIONS:
        raise ParameterError(f"separation must be one of {list(SEPARATIONS)}, got {choice!r}")
    repo = configured_repo(cfg, demucs_repo)
    if choice in ("dsp", "none"):
        return Resolution(choice, choice, None, repo)
    name = cfg.params.separation.model_4stem
    if find_demucs_weights(name, repo=repo) is not None:
        return Resolution(choice, "demucs", None, repo, "pytorch")
    if htdemucs_onnx.find_onnx() is not None:
        return Resolution(choice, "demucs", None, repo, "onnx")
    msg = (f"demucs weights for {name} not found in {_where_searched(name, repo)}, nor its ONNX export in "
           f"{htdemucs_onnx.onnx_dir()} (timingbench models fetch demucs)")
    if choice == "demucs":
        raise ModelUnavailableError(msg)
    return Resolution(choice, "dsp", f"{msg}; dsp fallback", repo)


# ----------------------------------------------------------------------------- demucs


def onnx_digest() -> str:
    """SHA-256 of the ONNX export the ``onnx`` source runs (checked when it is loaded)."""
    from timingbench.models.htdemucs_onnx import ONNX_SHA256

    return ONNX_SHA256


def source_licence(source: str) -> str:
    """The licence of the demucs weights of ``source`` (``pytorch`` | ``onnx``), in words."""
    from timingbench.models.htdemucs_onnx import LICENCE

    if source == "onnx":
        return LICENCE
    return "MIT (Meta Platforms, demucs: released under MIT, no other terms stated for its checkpoints)"


def source_disclosure(source: str | None, *, repo: Path | None) -> str | None:
    """The run note naming the demucs weights used and their licence (None for dsp / none)."""
    from timingbench.models import htdemucs_onnx

    if source == "onnx":
        return (f"demucs source: htdemucs ONNX export ({htdemucs_onnx.NPM_PACKAGE} {htdemucs_onnx.ONNX_FILE}, "
                f"sha256 {htdemucs_onnx.ONNX_SHA256[:16]}..., onnxruntime); weights licence: "
                f"{source_licence('onnx')}; 4 stems: guitar and piano read the 'other' stem")
    if source == "pytorch":
        where = str(repo) if repo is not None else str(_hub_checkpoint_dir())
        return f"demucs source: htdemucs PyTorch checkpoints ({where}); weights licence: {source_licence('pytorch')}"
    return None


def file_channels(path: Path, *, sr: int, n: int, audio: Any) -> npt.NDArray[np.float32]:
    """A file's own channels over its leading ``n`` samples at ``sr`` Hz, channels first.

    Decoded and resampled as :func:`timingbench.audio.load_clip` decodes the mono analysis
    window (soundfile, else ffmpeg; ``soxr`` VHQ), so that the channels' mean is that window.

    Parameters
    ----------
    path : Path
        The clip's file.
    sr : int
        Target rate, Hz (the bank's).
    n : int
        Samples to return (zero-padded when the file is shorter).
    audio : AudioParams
        Reads ``analysis_window_s``.

    Returns
    -------
    frames : np.ndarray of float32, shape (C, n)

    Raises
    ------
    ClipError
        If the file can no longer be decoded.
    """
    import soundfile as sf
    import soxr

    from timingbench.audio import RESAMPLE_MARGIN_S, _decode_ffmpeg, _decode_soundfile

    keep_s = float(audio.analysis_window_s) + RESAMPLE_MARGIN_S
    try:
        head = _decode_soundfile(path, keep_s)
    except (sf.LibsndfileError, RuntimeError, TypeError):
        head = _decode_ffmpeg(path, keep_s)
    x = np.asarray(head.data, dtype=np.float64)
    if head.sr != sr:
        x = soxr.resample(x, head.sr, sr, quality="VHQ")
    out = np.zeros((x.shape[1], n), dtype=np.float32)
    m = min(n, x.shape[0])
    out[:, :m] = x[:m].T
    return out

_MODEL_LOCK = threading.Lock()


@process_cache(maxsize=4)
def _load_cached(name: str, repo: str | None) -> Any:
    from demucs.pretrained import REMOTE_ROOT, _parse_remote_files
    from demucs.repo import AnyModelRepo, BagOnlyRepo, LocalRepo, RemoteRepo

    if repo is not None:
        model_repo: Any = LocalRepo(Path(repo))
        bag_repo = BagOnlyRepo(Path(repo), model_repo)
    else:
        # the legacy remote repo reads the torch hub cache and downloads only on a miss,
        # which find_demucs_weights has ruled out; the HuggingFace path is never taken
        model_repo = RemoteRepo(_parse_remote_files(REMOTE_ROOT / "files.txt"))
        bag_repo = BagOnlyRepo(REMOTE_ROOT, model_repo)
    model = AnyModelRepo(model_repo, bag_repo).get_model(name)
    model.eval()
    return model


def load_demucs_model(name: str, *, repo: Path | None) -> Any:
    """Load a demucs model (bag) from local files only.

    Parameters
    ----------
    name : str
        ``htdemucs`` | ``htdemucs_6s`` | any bag name present in ``repo``.
    repo : Path or None
        Local model folder; None searches the torch hub cache.

    Returns
    -------
    model : demucs model (``BagOfModels`` or ``HTDemucs``), in eval mode, cached per process.

    Raises
    ------
    ModelUnavailableError
        If the weights are absent or cannot be loaded.
    """
    if find_demucs_weights(name, repo=repo) is None:
        raise ModelUnavailableError(f"demucs weights for {name} not found in {_where_searched(name, repo)}")
    with _MODEL_LOCK:
        try:
            return _load_cached(name, str(repo) if repo is not None else None)
        except ModelUnavailableError:
            raise
        except Exception as exc:  # demucs raises ModelLoadingError, RuntimeError, KeyError ...
            raise ModelUnavailableError(f"demucs model {name} could not be loaded from "
                                        f"{repo or _hub_checkpoint_dir()}: {exc}") from None


def _resample(x: npt.NDArray[np.float32], src: int, dst: int) -> npt.NDArray[np.float32]:
    """Resample along the last axis (``soxr`` HQ), ``src`` -> ``dst`` Hz."""
    if src == dst:
        return x
    import soxr

    y = soxr.resample(np.ascontiguousarray(x.T), src, dst, quality="HQ")
    return np.ascontiguousarray(np.asarray(y, dtype=np.float32).T)


def model_input(samples: npt.NDArray[np.float32], *, sr: int, model_sr: int,
                channels: int) -> npt.NDArray[np.float32]:
    """The mix as a demucs model takes it: its channel count, at its rate.

    Channels as ``demucs.audio.convert_audio_channels``: mono is duplicated, more
    channels than the model's keep the first ones.

    Parameters
    ----------
    samples : np.ndarray of float32, shape (n,) or (C, n)
        Mono, or channels first.
    sr : int
        Their rate, Hz.
    model_sr : int
        The model's rate, Hz.
    channels : int
        The model's channel count.

    Returns
    -------
    wav : np.ndarray of float32, shape (channels, m)

    Raises
    ------
    ParameterError
        If ``samples`` is neither ``(n,)`` nor ``(C, n)``.
    """
    x = np.asarray(samples, dtype=np.float32)
    if x.ndim == 1:
        x = x[None]
    if x.ndim != 2 or x.shape[0] < 1:
        raise ParameterError(f"demucs needs mono (n,) or channels-first (C, n) samples, got shape {x.shape}")
    if x.shape[0] == 1 and channels > 1:
        x = np.repeat(x, channels, axis=0)
    elif x.shape[0] > channels:
        x = x[:channels] if channels > 1 else x.mean(axis=0, keepdims=True)
    elif x.shape[0] < channels:
        raise ParameterError(f"cannot make {channels} channels of {x.shape[0]} (demucs refuses it too)")
    return _resample(np.ascontiguousarray(x), sr, model_sr)


def _mono_stems(out: npt.NDArray[np.float32], sources: Any, *, model_sr: int, sr: int,
                n: int) -> dict[str, npt.NDArray[np.float32]]:
    """Each source of ``out`` (S, C, m) as a mono signal at ``sr`` of exactly ``n`` samples."""
    stems: dict[str, npt.NDArray[np.float32]] = {}
    for i, name in enumerate(sources):
        back = _resample(np.asarray(out[i], dtype=np.float32).mean(axis=0), model_sr, sr)
        fixed = np.zeros(n, dtype=np.float32)
        fixed[: min(n, back.size)] = back[:n]
        stems[str(name)] = fixed
    return stems


def separate_demucs(
    samples: npt.NDArray[np.float32],
    *,
    sr: int,
    model: Any,
    overlap: float,
    shifts: int,
    segment_s: float | None = None,
) -> dict[str, npt.NDArray[np.float32]]:
    """Separate a signal into the model's sources with ``demucs.apply.apply_model``.

    The signal is brought to the model's channels and rate (:func:`model_input`),
    normalised as ``demucs.api.Separator`` does (minus the mean, over the standard
    deviation, of the channels' mean), split into overlapping chunks of the model's
    segment length, separated, restored, and brought back to ``sr`` and mono with exactly
    as many samples as the input.

    Parameters
    ----------
    samples : np.ndarray of float32, shape (n,) or (C, n)
        Analysis window, mono or channels first.
    sr : int
        Its sample rate, Hz.
    model : demucs model
        ``HTDemucs`` or ``BagOfModels`` with ``sources``, ``samplerate``, ``audio_channels``.
    overlap : float
        Chunk overlap fraction in ``[0, 1)``.
    shifts : int
        Random-shift averaging (0 = deterministic).
    segment_s : float, optional
        Chunk length in seconds (default: the model's own segment).

    Returns
    -------
    stems : dict of str -> np.ndarray of float32, shape (n,)

    Raises
    ------
    ParameterError
        If the signal's shape is not ``(n,)`` or ``(C, n)`` or the overlap is out of range.
    """
    import torch
    from demucs.apply import apply_model

    if not 0.0 <= float(overlap) < 1.0:
        raise ParameterError(f"separation.demucs_overlap must lie in [0, 1), got {overlap!r}")
    n = np.shape(samples)[-1]
    model_sr = int(model.samplerate)
    wav = torch.from_numpy(model_input(samples, sr=sr, model_sr=model_sr, channels=int(model.audio_channels)))
    ref = wav.mean(0)
    mean = ref.mean()
    std = ref.std() + 1e-8
    with torch.inference_mode():
        out = apply_model(model, ((wav - mean) / std)[None], shifts=int(shifts), split=True,
                          overlap=float(overlap), progress=False, device="cpu", segment=segment_s)[0]
    out = out * std + mean
    _count("demucs")
    return _mono_stems(out.numpy(), model.sources, model_sr=model_sr, sr=sr, n=n)


def onnx_runtime_options(cfg: Config) -> Any:
    """The onnxruntime session options of the ``separation.onnx_*`` constants."""
    from timingbench.models.htdemucs_onnx import RuntimeOptions

    sp = cfg.params.separation
    return RuntimeOptions(threads=int(sp.onnx_threads), cpu_arena=bool(sp.onnx_cpu_arena),
                          memory_pattern=bool(sp.onnx_memory_pattern), spinning=bool(sp.onnx_spinning))


def separate_onnx(
    samples: npt.NDArray[np.float32],
    *,
    sr: int,
    model: Any,
    overlap: float,
    progress: Any = None,
) -> dict[str, npt.NDArray[np.float32]]:
    """Separate a signal with htdemucs's ONNX export, as :func:`separate_demucs` does with PyTorch.

    The same channels, rate, normalisation and segment loop (``shifts=0``), through
    :func:`timingbench.models.htdemucs_onnx.separate`.

    Parameters
    ----------
    samples : np.ndarray of float32, shape (n,) or (C, n)
        Analysis window, mono or channels first.
    sr : int
        Its sample rate, Hz.
    model : timingbench.models.htdemucs_onnx.OnnxHTDemucs
        The loaded export.
    overlap : float
        Segment overlap fraction in ``[0, 1)``.
    progress : callable, optional
        Called as ``progress(done, total)`` after each segment.

    Returns
    -------
    stems : dict of str -> np.ndarray of float32, shape (n,)

    Raises
    ------
    ParameterError
        If the signal's shape is not ``(n,)`` or ``(C, n)`` or the overlap is out of range.
    """
    from timingbench.models import htdemucs_onnx

    n = np.shape(samples)[-1]
    wav = model_input(samples, sr=sr, model_sr=model.samplerate, channels=model.audio_channels)
    out = htdemucs_onnx.separate(wav, model=model, overlap=overlap, progress=progress)
    _count("demucs")
    return _mono_stems(out, model.sources, model_sr=model.samplerate, sr=sr, n=n)


def onnx_stem_key(samples: npt.NDArray[np.float32], *, sr: int, cfg: Config) -> str:
    """Key of the ONNX source's stems of ``samples``: the audio, the model, onnxruntime, the segments.

    SHA-256 (first 32 hex digits) of the samples' bytes, shape and rate, the export's
    SHA-256, onnxruntime's version, the overlap and shifts, and the stems' format.
    """
    import hashlib

    import onnxruntime

    from timingbench.config import digest
    from timingbench.models import htdemucs_onnx

    x = np.ascontiguousarray(samples, dtype=np.float32)
    audio = hashlib.sha256(x.tobytes() + repr((x.shape, int(sr))).encode()).hexdigest()
    sp = cfg.params.separation
    return digest({"audio": audio, "model": htdemucs_onnx.ONNX_SHA256, "onnxruntime": onnxruntime.__version__,
                   "overlap": float(sp.demucs_overlap), "shifts": 0, "stems": "mono float32 at sr"}) + audio[:16]


def cached_onnx_stems(
    samples: npt.NDArray[np.float32], *, sr: int, cfg: Config, cache_dir: Path | None, progress: Any = None,
) -> dict[str, npt.NDArray[np.float32]]:
    """The ONNX source's stems of ``samples``, from ``cache_dir`` when separated before.

    The stems are written as one ``.npz`` per key (:func:`onnx_stem_key`), atomically,
    and always read back from what was written, so a fresh separation and a cached one
    give the same bytes.

    Parameters
    ----------
    samples : np.ndarray of float32, shape (n,) or (C, n)
        The analysis window, mono or channels first.
    sr : int
        Its rate, Hz.
    cfg : Config
        Reads the ``separation`` section.
    cache_dir : Path or None
        The stem cache folder; None: no persistent cache.
    progress : callable, optional
        As :func:`separate_onnx`.

    Returns
    -------
    stems : dict of str -> np.ndarray of float32, shape (n,)

    Raises
    ------
    ModelUnavailableError
        If the export is absent or cannot be loaded.
    """
    from timingbench.models import htdemucs_onnx

    path = None
    if cache_dir is not None:
        path = cache_dir / f"{onnx_stem_key(samples, sr=sr, cfg=cfg)}.npz"
        try:
            with np.load(path) as z:
                return {k: np.asarray(z[k], dtype=np.float32) for k in z.files}
        except (OSError, ValueError, KeyError, EOFError):
            pass  # absent or damaged: separate again
    model = htdemucs_onnx.load_onnx(onnx_runtime_options(cfg))
    stems = separate_onnx(samples, sr=sr, model=model, overlap=cfg.params.separation.demucs_overlap,
                          progress=progress)
    if path is not None:
        import tempfile

        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".stems-", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **stems)  # type: ignore[arg-type]
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
    return stems


# ----------------------------------------------------------------------------- dsp


def _bin_freqs(n_bins: int, *, sr: int, n_fft: int) -> npt.NDArray[np.floating]:
    """Frequency of each STFT bin, Hz."""
    return np.arange(n_bins) * (sr / n_fft)


def _check_route(margin: float, lo_hz: float, hi_hz: float, *, lo_name: str, hi_name: str) -> None:
    """Raise ConfigError unless ``margin >= 1`` and ``0 <= lo_hz < hi_hz``, all finite (names as ``percussion.*``)."""
    for name, v in (("route_margin", margin), (lo_name, lo_hz), (hi_name, hi_hz)):
        if v is None or not np.isfinite(float(v)):
            raise ConfigError(f"percussion.{name} must be a finite number, got {v!r}")
    if float(margin) < 1.0:
        raise ConfigError(f"percussion.route_margin must be >= 1, got {margin!r}")
    if not 0.0 <= float(lo_hz) < float(hi_hz):
        raise ConfigError(f"percussion.{lo_name} and {hi_name} must satisfy 0 <= {lo_name} < {hi_name}, "
                          f"got {lo_hz!r}, {hi_hz!r}")


def _soft_route(harmonic_power: npt.ArrayLike, percussive_power: npt.ArrayLike, *, sr: int, n_fft: int, margin: float,
                bands: tuple[tuple[float, float], ...]) -> npt.NDArray[np.float64]:
    """Soft percussive-over-harmonic mask applied to the power of the bins in ``bands``.

    ``bands`` holds ``[lo, hi)`` edges in Hz; bins outside every band are zero. The constants
    are checked by the caller (:func:`_check_route`).
    """
    h = np.asarray(harmonic_power, dtype=np.float64)
    p = np.asarray(percussive_power, dtype=np.float64)
    if h.shape != p.shape or h.ndim != 2:
        raise ParameterError(f"harmonic and percussive power must share a (n_bins, n_frames) shape, "
                             f"got {h.shape} and {p.shape}")
    freqs = _bin_freqs(h.shape[0], sr=sr, n_fft=n_fft)
    keep = np.zeros(freqs.shape, dtype=bool)
    for lo, hi in bands:
        keep |= (freqs >= lo) & (freqs < hi)
    # the Wiener masks give P/H = (pmed/hmed)**4 per bin; compare it with margin**4
    hs, ps = h[keep], p[keep]
    total = hs + ps
    m4 = float(margin) ** 4
    with np.errstate(divide="ignore", invalid="ignore"):
        w = np.where(total > 0, ps / (ps + m4 * hs), 0.0)
    out = np.zeros_like(h)
    out[keep] = total * w
    return out


def separate_dsp(
    harmonic_power: npt.NDArray[np.floating],
    percussive_power: npt.NDArray[np.floating],
    *,
    sr: int,
    n_fft: int,
    bass_cutoff_hz: float,
) -> dict[str, npt.NDArray[np.floating]]:
    """Coarse deterministic stems as power spectrograms, from an HPSS split.

    Parameters
    ----------
    harmonic_power, percussive_power : np.ndarray, shape (n_bins, n_frames)
        ``|H|**2`` and ``|P|**2`` of the mix.
    sr : int
        Sample rate, Hz.
    n_fft : int
        STFT length.
    bass_cutoff_hz : float
        Harmonic bins below this frequency form the bass stem.

    Returns
    -------
    stems : dict ``drums`` / ``bass`` / ``other`` -> power spectrogram (n_bins, n_frames)

    Raises
    ------
    ConfigError
        If the cutoff is missing (disabled) or not positive.
    """
    if bass_cutoff_hz is None or not float(bass_cutoff_hz) > 0:
        raise ConfigError(f"separation.dsp_bass_cutoff_hz must be a positive frequency, got {bass_cutoff_hz!r}")
    freqs = _bin_freqs(harmonic_power.shape[0], sr=sr, n_fft=n_fft)
    low = (freqs < float(bass_cutoff_hz))[:, None]
    _count("dsp")
    return {
        "drums": percussive_power,
        "bass": np.where(low, harmonic_power, 0.0).astype(harmonic_power.dtype),
        "other": np.where(low, 0.0, harmonic_power).astype(harmonic_power.dtype),
    }


def route_percussion(
    harmonic_power: npt.NDArray[np.floating],
    percussive_power: npt.NDArray[np.floating],
    *,
    sr: int,
    n_fft: int,
    margin: float,
    sub_hz: float,
    high_hz: float,
) -> npt.NDArray[np.float64]:
    """The dsp drums route for percussion events: strict percussive power where drums live.

    The HPSS percussive part also carries the attacks of pitched instruments (piano,
    mallets, plucked strings), mostly between the sub band and a few kHz. This route keeps
    a time-frequency bin only as far as its percussive median dominates the harmonic one
    by ``margin`` (a soft mask, as ``librosa.decompose.hpss(margin=...)`` but soft), and
    only in the bands where drum kits live and tonal attacks do not: the sub band below
    ``sub_hz`` (kick, floor toms) and the noise-like band from ``high_hz`` up (cymbals,
    hats, snare wires).

    Parameters
    ----------
    harmonic_power, percussive_power : np.ndarray, shape (n_bins, n_frames)
        ``|H|**2`` and ``|P|**2`` of the mix from :func:`~timingbench.features.kernels.hpss_power`
        (Wiener masks, so they sum to ``|X|**2``).
    sr : int
        Sample rate, Hz.
    n_fft : int
        STFT length.
    margin : float
        Percussive-over-harmonic magnitude margin (>= 1; 1 keeps the plain soft mask's
        balance point).
    sub_hz, high_hz : float
        Band edges in Hz (``0 <= sub_hz < high_hz``).

    Returns
    -------
    power : np.ndarray of float64, shape (n_bins, n_frames)

    Raises
    ------
    ConfigError
        If a constant is missing (disabled) or out of range.
    """
    _check_route(margin, sub_hz, high_hz, lo_name="route_sub_hz", hi_name="route_high_hz")
    return _soft_route(harmonic_power, percussive_power, sr=sr, n_fft=n_fft, margin=margin,
                       bands=((0.0, float(sub_hz)), (float(high_hz), np.inf)))


def route_percussion_low(
    harmonic_power: npt.NDArray[np.floating],
    percussive_power: npt.NDArray[np.floating],
    *,
    sr: int,
    n_fft: int,
    margin: float,
    lo_hz: float,
    hi_hz: float,
) -> npt.NDArray[np.float64]:
    """The dsp low-band drums route: strict percussive power between ``lo_hz`` and ``hi_hz``.

    Kick drums, toms and timpani put their body in the low band, where the sub/high route
    of :func:`route_percussion` reads mostly bleed from other drums. The same soft
    percussive-over-harmonic mask is applied; bass-instrument attacks also pass it, so
    this route carries no identity on its own (the detector asks the family gate).

    Parameters
    ----------
    harmonic_power, percussive_power, sr, n_fft, margin
        As :func:`route_percussion`.
    lo_hz, hi_hz : float
        Band edges in Hz (``0 <= lo_hz < hi_hz``).

    Returns
    -------
    power : np.ndarray of float64, shape (n_bins, n_frames)
        Zero outside ``[lo_hz, hi_hz)``.

    Raises
    ------
    ConfigError
        If a constant is missing (disabled) or out of range.
    """
    _check_route(margin, lo_hz, hi_hz, lo_name="route_low_hz", hi_name="route_low_top_hz")
    return _soft_route(harmonic_power, percussive_power, sr=sr, n_fft=n_fft, margin=margin,
                       bands=((float(lo_hz), float(hi_hz)),))
