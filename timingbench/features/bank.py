"""The feature bank: every curve the detectors read, for one clip, on one frame grid.

A :class:`FeatureBank` is computed once per clip on the leading analysis window
(paper Sec. IV-A): mix RMS; full-band, harmonic and percussive onset strength from a
median-filtering harmonic/percussive separation; frequency-band envelopes; a
checkerboard-kernel novelty curve over timbre (MFCC) and harmony (chroma); a log-mel
spectrogram for the labelling page; loudness statistics that every detector threshold
is relative to; and, lazily, separated stems and their envelopes.

Grid: a centred STFT at the configured hop (512 samples at 44.1 kHz, about 11.6 ms);
frame ``k`` is the instant ``k * hop / sr`` (:mod:`timingbench.convert`).

Level-relativity: every dB curve is floored relative to the clip's own level, and every
spectral feature is either a dB difference (onsets), a cosine similarity (novelty) or a
dB level; a gain change therefore shifts the level curves and the loudness statistics by
the same constant and leaves onsets, novelty and ``level - loud_level`` unchanged.

Use :func:`get_bank` (disk-cached) in the pipeline; :func:`compute_bank` always computes.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import scipy.fft

from timingbench.audio import Clip
from timingbench.config import Config, digest
from timingbench.convert import frames_to_time, seconds_to_frame_count
from timingbench.curves import Grid
from timingbench.errors import ConfigError, ModelUnavailableError, ParameterError
from timingbench.features import cache as _cache
from timingbench.features import separation as _sep
from timingbench.features import spectral as _sp
from timingbench.features.kernels import checkerboard_novelty, hpss_power, weighted_row_sums
from timingbench.memo import LruTable, lru_table, memo_on
from timingbench.params.analysis import FeaturesParams
from timingbench.version import __version__

T = TypeVar("T")
F64 = npt.NDArray[np.float64]

_BUILD_LOCK = threading.Lock()
_BUILDS = 0


def bank_build_count() -> int:
    """Number of banks actually computed (not loaded from a cache) in this process."""
    return _BUILDS


# ----------------------------------------------------------------------------- parameters


# ----------------------------------------------------------------------------- value types


@dataclass(frozen=True)
class Loudness:
    """The clip's own level statistics (dBFS, from frame RMS); detector thresholds are relative to them.

    Attributes
    ----------
    loud_level_db : float
        ``features.loud_percentile`` (95th) percentile of ``rms_db``.
    median_db : float
        Median of ``rms_db``.
    floor_db : float
        Leading-window noise floor: ``features.floor_percentile`` (5th) percentile of ``rms_db``.
    peak_db : float
        Maximum of ``rms_db``.
    """

    loud_level_db: float
    median_db: float
    floor_db: float
    peak_db: float


@dataclass(frozen=True)
class Stem:
    """Features of one separated stem on the bank's grid.

    Attributes
    ----------
    name : str
        ``drums`` | ``bass`` | ``vocals`` | ``other`` | ``piano`` | ``guitar``.
    envelope_db : np.ndarray of float64, shape (n,)
        Stem RMS level in dBFS, floored relative to the *mix* maximum (a silent stem stays
        at the floor instead of inflating its own noise).
    onset : np.ndarray of float64, shape (n,)
        Spectral-flux onset strength of the stem (log-mel relative to the mix maximum).
    loud_level_db : float
        ``features.loud_percentile`` percentile of ``envelope_db``.
    floor_db : float
        ``features.floor_percentile`` percentile of ``envelope_db``.
    backend : str
        ``demucs`` | ``dsp``.
    model : str
        Separation model (``htdemucs``, ``htdemucs_6s``) or ``hpss`` for the dsp backend.
    """

    name: str
    envelope_db: F64
    onset: F64
    loud_level_db: float
    floor_db: float
    backend: str
    model: str


def _frozen(a: npt.ArrayLike, dtype: Any = np.float64) -> Any:
    arr = np.array(a, dtype=dtype, copy=True)
    arr.flags.writeable = False
    return arr


# ----------------------------------------------------------------------------- computation


def _percentile(x: F64, q: float) -> float:
    return float(np.percentile(x, q))


def _mel_and_db(power: npt.NDArray[np.floating], *, sr: int,
                p: FeaturesParams) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float32]]:
    """Mel power of an STFT power spectrogram and its log-mel (dB re its maximum)."""
    mel = np.asarray(_sp.mel_basis(sr=sr, n_fft=p.n_fft, n_mels=p.n_mels) @ power)
    return mel, _sp.log_mel_db(mel, db_range=p.db_range)


def log_mel(samples: npt.ArrayLike, *, sr: int, p: FeaturesParams) -> npt.NDArray[np.float32]:
    """The bank's log-mel of mono samples, exactly as :attr:`FeatureBank.logmel` holds it.

    Parameters
    ----------
    samples : array_like
        Mono audio (converted to float32, as a decoded clip is).
    sr : int
        Sample rate in Hz.
    p : FeaturesParams
        ``n_fft``, ``hop``, ``n_mels`` and ``db_range`` of the ``features`` section.

    Returns
    -------
    logmel : np.ndarray of float32, shape (n_mels, n_frames)
        dB relative to the maximum, in ``[-p.db_range, 0]``.
    """
    mag = grid_magnitude(samples, p=p)
    return _mel_and_db(mag * mag, sr=sr, p=p)[1]


def grid_magnitude(samples: npt.ArrayLike, *, p: FeaturesParams) -> npt.NDArray[np.float32]:
    """``|STFT|`` of mono samples on the bank's grid, as :meth:`FeatureBank.magnitude` holds it.

    Parameters
    ----------
    samples : array_like
        Mono audio (converted to float32, as a decoded clip is).
    p : FeaturesParams
        ``n_fft`` and ``hop`` of the ``features`` section.

    Returns
    -------
    magnitude : np.ndarray of float32, shape (n_fft // 2 + 1, n_frames)
    """
    return _sp.stft_magnitude(np.asarray(samples, dtype=np.float32), n_fft=p.n_fft, hop=p.hop)


def _core_features(samples: npt.NDArray[np.float32], *, sr: int, p: FeaturesParams) -> dict[str, Any]:
    """Compute the bank's core arrays from the analysis window (see module docstring)."""
    mag = _sp.stft_magnitude(samples, n_fft=p.n_fft, hop=p.hop)
    power = mag * mag
    n = mag.shape[1]

    rms = _sp.frame_rms(samples, n_fft=p.n_fft, hop=p.hop)
    ms_ref = float(np.max(rms)) ** 2
    rms_db = _sp.level_db(rms * rms, ref_ms=ms_ref, range_db=p.level_range_db)

    melfb = _sp.mel_basis(sr=sr, n_fft=p.n_fft, n_mels=p.n_mels)
    mel, mel_db = _mel_and_db(power, sr=sr, p=p)
    mel_ref = float(np.max(mel))
    onset_full = _sp.onset_from_log_mel(mel_db)

    hp, pp = hpss_power(mag, kernel_frames=p.hpss_kernel_frames, kernel_bins=p.hpss_kernel_bins,
                        power=p.hpss_mask_power)
    harmonic_db = _sp.log_mel_db(np.asarray(melfb @ hp), db_range=p.db_range)
    onset_h = _sp.onset_from_log_mel(harmonic_db)
    onset_p = _sp.onset_from_log_mel(_sp.log_mel_db(np.asarray(melfb @ pp), db_range=p.db_range))
    h_db = _sp.level_db(_sp.spectral_mean_square(hp, n_fft=p.n_fft), ref_ms=ms_ref, range_db=p.level_range_db)
    p_db = _sp.level_db(_sp.spectral_mean_square(pp, n_fft=p.n_fft), ref_ms=ms_ref, range_db=p.level_range_db)

    names, bmat = _sp.band_matrix(sr=sr, n_fft=p.n_fft, edges=p.bands)
    band_ms = weighted_row_sums(power, weights=bmat) * _sp.parseval_scale(p.n_fft)
    bands = {nm: _sp.level_db(band_ms[i], ref_ms=ms_ref, range_db=p.level_range_db)
             for i, nm in enumerate(names)}

    nov_t, nov_h = _novelty_pair(mel_db, power, sr=sr, p=p)
    edge = seconds_to_frame_count(p.novelty_half_s, sr=sr, hop=p.hop)
    nov_t, nov_h = _unit_max(nov_t, edge), _unit_max(nov_h, edge)
    both = _unit_max(0.5 * (nov_t + nov_h), edge)

    loud = Loudness(
        loud_level_db=_percentile(rms_db, p.loud_percentile),
        median_db=float(np.median(rms_db)),
        floor_db=_percentile(rms_db, p.floor_percentile),
        peak_db=float(np.max(rms_db)),
    )
    return {
        "_spectra": {_MAGNITUDE: mag, _HPSS: (hp, pp), _HARMONIC_LOGMEL: harmonic_db.astype(np.float32)},
        "n_frames": n, "rms": rms, "rms_db": rms_db, "onset_full": onset_full,
        "onset_harmonic": onset_h, "onset_percussive": onset_p,
        "harmonic_rms_db": h_db, "percussive_rms_db": p_db, "bands_db": bands,
        "novelty": both, "novelty_timbre": nov_t, "novelty_harmony": nov_h, "logmel": mel_db.astype(np.float32),
        "loudness": loud, "ms_ref": ms_ref, "mel_ref": mel_ref,
    }


def _unit_max(x: F64, edge: int) -> F64:
    # The clip's edges border zero-padded similarity and always look novel; scale by the
    # interior maximum (frames at least one kernel half-width from both ends) and clip.
    inner = x[edge:x.size - edge] if x.size > 2 * edge else x
    m = float(np.max(inner)) if inner.size else 0.0
    return np.minimum(x / m, 1.0) if m > 0 else np.zeros_like(x)


def timbre_features(mel_db: npt.NDArray[np.floating], *, n_mfcc: int) -> F64:
    """MFCC 1..n_mfcc-1 of a relative log-mel, z-scored per coefficient over the clip.

    Coefficient 0 (overall level) is dropped and the rest standardised, so the timbre
    description is independent of gain.

    Returns
    -------
    mfcc : np.ndarray of float64, shape (n_mfcc - 1, n_frames)
    """
    m = scipy.fft.dct(np.asarray(mel_db, dtype=np.float64), type=2, norm="ortho", axis=0)[1:n_mfcc]
    sd = m.std(axis=1, keepdims=True)
    return (m - m.mean(axis=1, keepdims=True)) / np.where(sd > 0, sd, 1.0)


def _novelty_pair(mel_db: npt.NDArray[np.floating], power: npt.NDArray[np.floating], *,
                  sr: int, p: FeaturesParams) -> tuple[F64, F64]:
    half = seconds_to_frame_count(p.novelty_half_s, sr=sr, hop=p.hop)
    mfcc = timbre_features(mel_db, n_mfcc=p.n_mfcc)
    chroma = _sp.chroma_basis(sr=sr, n_fft=p.n_fft, tuning=p.chroma_tuning) @ power
    nov_t = checkerboard_novelty(mfcc, half_frames=half, sigma_frac=p.novelty_taper_sigma)
    nov_h = checkerboard_novelty(chroma, half_frames=half, sigma_frac=p.novelty_taper_sigma)
    return nov_t, nov_h


def stem_from_power(
    name: str, power: npt.NDArray[np.floating], *, sr: int, p: FeaturesParams,
    ms_ref: float, mel_ref: float, backend: str, model: str,
) -> Stem:
    """Stem features from a stem's power spectrogram on the bank grid.

    Parameters
    ----------
    name : str
        Stem name.
    power : np.ndarray, shape (n_bins, n_frames)
        ``|X|**2`` of the stem.
    sr : int
        Sample rate, Hz.
    p : FeaturesParams
        Grid and level parameters.
    ms_ref : float
        The mix's maximum frame mean square (level floor reference).
    mel_ref : float
        The mix's maximum mel power (log-mel reference).
    backend, model : str
        Provenance recorded in the :class:`Stem`.

    Returns
    -------
    stem : Stem
    """
    env = _sp.level_db(_sp.spectral_mean_square(power, n_fft=p.n_fft), ref_ms=ms_ref,
                       range_db=p.level_range_db)
    melfb = _sp.mel_basis(sr=sr, n_fft=p.n_fft, n_mels=p.n_mels)
    onset = _sp.onset_from_log_mel(_sp.log_mel_db(np.asarray(melfb @ power), db_range=p.db_range,
                                                  ref_power=mel_ref))
    return Stem(name=name, envelope_db=_frozen(env), onset=_frozen(onset),
                loud_level_db=_percentile(env, p.loud_percentile),
                floor_db=_percentile(env, p.floor_percentile), backend=backend, model=model)


# ----------------------------------------------------------------------------- the bank

#: Kinds of a clip's spectrogram products, kept in memory only (never pickled or cached).
_MAGNITUDE, _HPSS, _HARMONIC_LOGMEL = "magnitude", "hpss", "harmonic_logmel"
_KINDS = (_MAGNITUDE, _HPSS, _HARMONIC_LOGMEL)
#: Banks whose spectrogram products the process keeps (a cache size, not a threshold):
#: the bank being scored, and one more. About 40 MB each for a 35 s window at 44.1 kHz.
SPECTRA_BANKS = 2


def _spectra() -> LruTable[tuple[str, str], Any]:
    return lru_table("bank-spectra", len(_KINDS) * SPECTRA_BANKS)

#: Stems whose separated signal a bank keeps in memory (:meth:`FeatureBank.stem_audio`).
AUDIO_STEMS = ("vocals",)

_ARRAY_FIELDS = ("rms", "rms_db", "onset_full", "onset_harmonic", "onset_percussive",
                 "harmonic_rms_db", "percussive_rms_db", "novelty", "novelty_timbre",
                 "novelty_harmony")


@dataclass(frozen=True, eq=False)
class FeatureBank:
    """All features of one clip on one frame grid; immutable (read-only arrays).

    Attributes
    ----------
    sr : int
        Sample rate, Hz.
    hop : int
        Hop length, samples.
    n_fft : int
        STFT window length, samples.
    n_frames : int
        Number of frames ``n``.
    times : np.ndarray of float64, shape (n,)
        Frame instants in seconds.
    duration_s : float
        Length of the analysed window, seconds.
    clip_duration_s : float
        Length of the whole file, seconds.
    samples : np.ndarray of float32, shape (n_samples,)
        The mono analysis window (kept for lazy stems; not stored in the cache).
    rms, rms_db : np.ndarray, shape (n,)
        Mix RMS (linear, full scale 1) and in dBFS (floored ``features.level_range_db``
        below its maximum).
    onset_full, onset_harmonic, onset_percussive : np.ndarray, shape (n,)
        Spectral-flux onset strength (mean positive log-mel rise, dB per frame) of the mix
        and of its harmonic and percussive components.
    harmonic_rms_db, percussive_rms_db : np.ndarray, shape (n,)
        Levels of the HPSS components, dBFS-comparable with ``rms_db``.
    bands_db : Mapping[str, np.ndarray]
        ``sub`` / ``low`` / ``mid`` / ``high`` band levels in dBFS (bounds
        ``features.band_edges_hz``), each shape (n,).
    novelty, novelty_timbre, novelty_harmony : np.ndarray, shape (n,)
        Checkerboard novelty over MFCC (timbre) and chroma (harmony), and their mean,
        each scaled so that its maximum away from the clip edges (one kernel half-width,
        ``features.novelty_half_s``) is 1 and clipped to ``[0, 1]``; the edges border
        zero-padded similarity and read as novel.
    logmel : np.ndarray of float32, shape (n_mels, n)
        Log-mel power in dB relative to the clip maximum, in ``[-features.db_range, 0]``.
    loudness : Loudness
        The clip's level statistics.
    separation_requested, separation_backend : str
        The ``--separation`` choice and the backend actually used.
    separation_note : str or None
        Why they differ (e.g. missing demucs weights), else None.
    content_hash, config_hash : str
        Identity of the audio and of the configuration the bank was computed with.
    """

    sr: int
    hop: int
    n_fft: int
    n_frames: int
    times: F64
    duration_s: float
    clip_duration_s: float
    samples: npt.NDArray[np.float32]
    rms: F64
    rms_db: F64
    onset_full: F64
    onset_harmonic: F64
    onset_percussive: F64
    harmonic_rms_db: F64
    percussive_rms_db: F64
    bands_db: Mapping[str, F64]
    novelty: F64
    novelty_timbre: F64
    novelty_harmony: F64
    logmel: npt.NDArray[np.float32]
    loudness: Loudness
    ms_ref: float
    mel_ref: float
    content_hash: str
    config_hash: str
    separation_requested: str
    separation_backend: str
    separation_note: str | None
    _config: Config = field(repr=False)
    _demucs_repo: Path | None = field(repr=False)
    _cache_base: Path | None = field(repr=False)
    _key: str = field(repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False)
    _separation_source: str | None = field(default=None, repr=False)
    _source_path: Path | None = field(default=None, repr=False)

    # -- construction ------------------------------------------------------------------

    @classmethod
    def _build(cls, core: Mapping[str, Any], *, clip: Clip, cfg: Config, p: FeaturesParams,
               resolution: _sep.Resolution, cache_base: Path | None, key: str) -> FeatureBank:
        n = int(core["n_frames"])
        samples = clip.samples.view()
        samples.flags.writeable = False
        bands = MappingProxyType({k: _frozen(v) for k, v in core["bands_db"].items()})
        arrays = {name: _frozen(core[name]) for name in _ARRAY_FIELDS}
        return cls(
            sr=int(clip.sr), hop=p.hop, n_fft=p.n_fft, n_frames=n,
            times=_frozen(frames_to_time(np.arange(n), sr=clip.sr, hop=p.hop)),
            duration_s=samples.size / float(clip.sr), clip_duration_s=float(clip.duration_s),
            samples=samples, bands_db=bands, logmel=_frozen(core["logmel"], np.float32),
            loudness=core["loudness"], ms_ref=float(core["ms_ref"]), mel_ref=float(core["mel_ref"]),
            content_hash=clip.content_hash, config_hash=cfg.content_hash,
            separation_requested=resolution.requested, separation_backend=resolution.backend,
            separation_note=resolution.note, _config=cfg, _demucs_repo=resolution.demucs_repo,
            _cache_base=cache_base, _key=key, _separation_source=resolution.source,
            _source_path=clip.path if clip.path.is_file() else None, **arrays,
        )

    def __setstate__(self, state: dict[str, Any]) -> None:
        # unpickled arrays are writeable again; re-freeze them
        for k, v in state.items():
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
            if k == "bands_db":
                for arr in v.values():
                    arr.flags.writeable = False
            object.__setattr__(self, k, v)

    def __reduce__(self) -> Any:
        state = {k: getattr(self, k) for k in self.__dataclass_fields__}
        state["bands_db"] = dict(self.bands_db)
        return (_restore_bank, (state,))

    # -- grid helpers ------------------------------------------------------------------

    @property
    def grid(self) -> Grid:
        """The bank's frame grid (seconds to frames and back; :class:`timingbench.curves.Grid`)."""
        return Grid(sr=self.sr, hop=self.hop, n_frames=self.n_frames)

    # -- lazy parts --------------------------------------------------------------------

    @property
    def params(self) -> FeaturesParams:
        """The validated ``features`` parameters the bank was computed with."""
        return self._config.params.features

    def require_params(self, features: FeaturesParams, *, reader: str) -> None:
        """Check that ``features``, handed to ``reader``, are the constants the bank was built with.

        Raises
        ------
        ParameterError
            If they differ (the bank's grid and levels would not be those ``reader`` assumes).
        """
        if features != self.params:
            raise ParameterError(f"{reader}: the features constants given differ from those the bank was built with")

    def magnitude(self) -> npt.NDArray[np.float32]:
        """``|STFT|`` of the bank's samples on its grid, shape ``(n_fft // 2 + 1, n_frames)``.

        Every consumer reads this one: kept from the build, or computed on first use, for
        the :data:`SPECTRA_BANKS` most recently used banks of the process (in memory only).
        """
        return self._spectrum(_MAGNITUDE, lambda: grid_magnitude(self.samples, p=self.params))  # type: ignore[no-any-return]

    def hpss(self) -> tuple[npt.NDArray[np.floating], npt.NDArray[np.floating]]:
        """``(|H|**2, |P|**2)``: the median-filtering harmonic/percussive split of :meth:`magnitude`.

        With the ``features.hpss_*`` kernels; kept as :meth:`magnitude` is.
        """
        p = self.params
        return self._spectrum(_HPSS, lambda: hpss_power(  # type: ignore[no-any-return]
            self.magnitude(), kernel_frames=p.hpss_kernel_frames, kernel_bins=p.hpss_kernel_bins,
            power=p.hpss_mask_power))

    def harmonic_logmel(self) -> npt.NDArray[np.float32]:
        """Log-mel of the harmonic part (:meth:`hpss`), shape ``(n_mels, n_frames)``, float32.

        dB relative to its own maximum in ``[-features.db_range, 0]``, as the harmonic onset
        curve reads it; kept as :meth:`magnitude` is.
        """
        def compute() -> npt.NDArray[np.float32]:
            p = self.params
            melfb = _sp.mel_basis(sr=self.sr, n_fft=p.n_fft, n_mels=p.n_mels)
            return _sp.log_mel_db(np.asarray(melfb @ self.hpss()[0]), db_range=p.db_range).astype(np.float32)

        return self._spectrum(_HARMONIC_LOGMEL, compute)  # type: ignore[no-any-return]

    def _spectrum(self, kind: str, compute: Callable[[], Any]) -> Any:
        # keyed by the bank's cache key (audio content and analysis constants): equal for
        # every bank of the same clip and constants, so a stale hit cannot exist
        table = _spectra()
        value = table.get((self._key, kind))
        if value is None:
            value = compute()
            table.put((self._key, kind), value)
        return value

    def memo(self, key: tuple[Any, ...], fn: Callable[[], T]) -> T:
        """Compute ``fn()`` once per bank and ``key``, in memory only (never written to the cache).

        For intermediate statistics a detector re-reads under many configurations (the
        sweep re-scores a corpus hundreds of times on the same banks); ``key`` must hold
        everything besides the bank that ``fn`` depends on.
        """
        if not memo_on():
            return fn()
        memo_key = ("memo", *key)
        if memo_key in self._memo:
            return self._memo[memo_key]  # type: ignore[no-any-return]
        value = fn()
        self._memo[memo_key] = value
        return value

    def derived(self, key: str, fn: Callable[[FeatureBank], T]) -> T:
        """Compute ``fn(self)`` once per bank, memoised and persisted next to the cached bank.

        Parameters
        ----------
        key : str
            Identifies the value; include anything besides the bank that ``fn`` depends on
            (model name, parameters), because a cached value is returned for the same key.
        fn : callable
            ``fn(bank) -> value``; the value must be picklable when the bank is cached.

        Returns
        -------
        value : T

        Raises
        ------
        ParameterError
            If ``key`` is empty or the value cannot be stored.
        """
        if not isinstance(key, str) or not key:
            raise ParameterError("derived() needs a non-empty string key")
        memo_key = "derived:" + key
        if memo_key in self._memo:
            return self._memo[memo_key]  # type: ignore[no-any-return]
        path = self._entry_path("derived-" + _cache.safe_name(key))
        if path is not None:
            entry = _cache.read_entry(path, key=self._key + "|" + key)
            if entry is not None:
                self._memo[memo_key] = entry["value"]
                return entry["value"]  # type: ignore[no-any-return]
        value = fn(self)
        if path is not None:
            _cache.write_entry(path, key=self._key + "|" + key, payload={"value": value})
        self._memo[memo_key] = value
        return value

    def _entry_path(self, suffix: str) -> Path | None:
        if self._cache_base is None:
            return None
        return self._cache_base / f"{self._key}.{suffix}.pkl"

    def stem(self, name: str) -> Stem:
        """Features of one separated stem, separating on first use (then memoised and cached).

        Parameters
        ----------
        name : str
            ``drums`` | ``bass`` | ``vocals`` | ``other`` | ``piano`` | ``guitar``.

        Returns
        -------
        stem : Stem

        Raises
        ------
        ParameterError
            If ``name`` is not a known stem.
        ModelUnavailableError
            If separation is ``none``, the dsp backend cannot isolate ``name`` (vocals,
            piano, guitar), or ``htdemucs_6s`` weights are needed and absent.
        """
        if name not in _sep.ALL_STEMS:
            raise ParameterError(f"unknown stem {name!r}; known stems are {list(_sep.ALL_STEMS)}")
        backend = self.separation_backend
        if backend == "none":
            raise ModelUnavailableError(f"stem {name!r} requested but separation is 'none'")
        if backend == "dsp":
            if name not in _sep.DSP_STEMS:
                why = f" ({self.separation_note})" if self.separation_note else ""
                raise ModelUnavailableError(
                    f"the dsp separation fallback cannot isolate {name!r}{why}; "
                    "use --separation demucs with local htdemucs weights")
            group = self._stem_group("dsp", "hpss")
        else:
            sep = self._config.params.separation
            key = "separation.model_4stem" if name in _sep.STEMS_4 else "separation.model_6stem"
            model = sep.model_4stem if name in _sep.STEMS_4 else sep.model_6stem
            if not model:
                raise ConfigError(f"{self._config.source}: '{key}' is empty; cannot separate {name!r}")
            group = self._stem_group("demucs", str(model))
        if name not in group:
            raise ModelUnavailableError(f"separation model did not produce a {name!r} stem "
                                        f"(sources: {sorted(group)})")
        return group[name]  # type: ignore[no-any-return]

    def stem_audio(self, name: str) -> npt.NDArray[np.float32]:
        """A demucs stem's separated signal: mono, at the bank's rate, as long as :attr:`samples`.

        For the models that read a stem's signal (the singing detector reads the vocals stem).
        Kept in memory from the separation that made the stem's features; separated again
        when those came from the cache, which holds features, not signals.

        Parameters
        ----------
        name : str
            One of :data:`AUDIO_STEMS`.

        Returns
        -------
        signal : np.ndarray of float32, shape (n_samples,)
            Read-only.

        Raises
        ------
        ParameterError
            If ``name`` is not one of :data:`AUDIO_STEMS`.
        ModelUnavailableError
            If the bank's separation backend is not ``demucs`` (as :meth:`stem`).
        """
        if name not in AUDIO_STEMS:
            raise ParameterError(f"stem {name!r}: only the signals of {list(AUDIO_STEMS)} are kept")
        stem = self.stem(name)
        if stem.backend != "demucs":
            raise ModelUnavailableError(f"stem {name!r}: the {stem.backend} backend separates no signal")
        key = f"stem-audio:{stem.model}:{name}"
        if key not in self._memo:
            self._separate("demucs", stem.model)
        return self._memo[key]  # type: ignore[no-any-return]

    def stems_available(self) -> tuple[str, ...]:
        """Stem names this bank's backend can deliver (6-stem names need htdemucs_6s weights)."""
        if self.separation_backend == "none":
            return ()
        if self.separation_backend == "dsp":
            return _sep.DSP_STEMS
        if self._separation_source == "onnx":  # the 4-stem export: piano and guitar read "other"
            return _sep.STEMS_4
        six = self._config.params.separation.model_6stem
        has6 = bool(six) and _sep.find_demucs_weights(str(six), repo=self._demucs_repo) is not None
        return _sep.ALL_STEMS if has6 else _sep.STEMS_4

    @property
    def separation_source(self) -> str | None:
        """The demucs weights this bank separates with: ``pytorch``, ``onnx``, or None (dsp, none)."""
        return self._separation_source

    @property
    def separation_disclosure(self) -> str | None:
        """The run note naming the demucs weights this bank separates with and their licence."""
        return _sep.source_disclosure(self._separation_source, repo=self._demucs_repo)

    def separation_input(self) -> npt.NDArray[np.float32]:
        """What demucs separates: the file's own channels over the analysis window, ``(C, n)`` at
        :attr:`sr`; the mono :attr:`samples` ``(1, n)`` when the clip has no file (an array)."""
        if self._source_path is None:
            return np.asarray(self.samples)[None]
        x = _sep.file_channels(self._source_path, sr=self.sr, n=int(self.samples.size),
                               audio=self._config.params.audio)
        # samples scaled after decoding (the gain check's clips): the channels at the same gain, so
        # demucs separates the audio the bank analyses (the least-squares gain; 1 for a clip as decoded)
        mono = x.mean(axis=0, dtype=np.float64)
        energy = float(np.dot(mono, mono))
        gain = float(np.dot(np.asarray(self.samples, dtype=np.float64), mono)) / energy if energy > 0 else 1.0
        return x if abs(gain - 1.0) <= 1e-3 else (x * np.float32(gain)).astype(np.float32)

    def _stem_group(self, backend: str, model: str) -> dict[str, Stem]:
        where = "hub" if self._demucs_repo is None or backend == "dsp" else str(self._demucs_repo)
        if backend == "demucs" and self._separation_source == "onnx":
            where = "onnx-" + _sep.onnx_digest()[:16]
        group_id = f"{backend}-{model}-{where}"
        memo_key = "stems:" + group_id
        if memo_key in self._memo:
            return self._memo[memo_key]  # type: ignore[no-any-return]
        path = self._entry_path("stems-" + _cache.safe_name(group_id))
        entry_key = self._key + "|" + group_id
        if path is not None:
            entry = _cache.read_entry(path, key=entry_key)
            if entry is not None:
                stems = {k: _restore_stem(v) for k, v in entry["stems"].items()}
                self._memo[memo_key] = stems
                return stems
        stems = self._separate(backend, model)
        if path is not None:
            _cache.write_entry(path, key=entry_key,
                               payload={"stems": {k: _stem_state(v) for k, v in stems.items()}})
        self._memo[memo_key] = stems
        return stems

    def _separate(self, backend: str, model_name: str) -> dict[str, Stem]:
        p = self.params

        def make(name: str, power: npt.NDArray[np.floating], backend: str) -> Stem:
            return stem_from_power(name, power, sr=self.sr, p=p, ms_ref=self.ms_ref,
                                   mel_ref=self.mel_ref, backend=backend, model=model_name)

        if backend == "dsp":
            hp, pp = self.hpss()
            powers = _sep.separate_dsp(hp, pp, sr=self.sr, n_fft=p.n_fft,
                                       bass_cutoff_hz=self._config.params.separation.dsp_bass_cutoff_hz)
            return {k: make(k, v, "dsp") for k, v in powers.items()}
        if self._separation_source == "onnx":
            stems_dir = None if self._cache_base is None else self._cache_base.parent / "stems"
            audio = _sep.cached_onnx_stems(self.separation_input(), sr=self.sr, cfg=self._config,
                                           cache_dir=stems_dir)
        else:
            model = _sep.load_demucs_model(model_name, repo=self._demucs_repo)
            audio = _sep.separate_demucs(
                self.separation_input(), sr=self.sr, model=model,
                overlap=self._config.params.separation.demucs_overlap,
                shifts=self._config.params.separation.demucs_shifts)
        for k in AUDIO_STEMS:  # kept for the models that read a stem's signal (stem_audio)
            if k in audio:
                self._memo[f"stem-audio:{model_name}:{k}"] = _frozen(audio[k], np.float32)
        out = {}
        for k, y in audio.items():
            mag = _sp.stft_magnitude(y, n_fft=p.n_fft, hop=p.hop)
            out[k] = make(k, mag * mag, "demucs")
        return out


def _stem_state(s: Stem) -> dict[str, Any]:
    return {"name": s.name, "envelope_db": np.asarray(s.envelope_db), "onset": np.asarray(s.onset),
            "loud_level_db": s.loud_level_db, "floor_db": s.floor_db, "backend": s.backend,
            "model": s.model}


def _restore_stem(d: Mapping[str, Any]) -> Stem:
    return Stem(name=d["name"], envelope_db=_frozen(d["envelope_db"]), onset=_frozen(d["onset"]),
                loud_level_db=float(d["loud_level_db"]), floor_db=float(d["floor_db"]),
                backend=d["backend"], model=d["model"])


def _restore_bank(state: dict[str, Any]) -> FeatureBank:
    bank = object.__new__(FeatureBank)
    state = dict(state)
    state["bands_db"] = MappingProxyType(dict(state["bands_db"]))
    bank.__setstate__(state)
    return bank


# ----------------------------------------------------------------------------- entry points

#: Banks kept in memory per process (a cache size, not a threshold).
_MEMORY_SIZE = 8
#: Configuration sections the bank's content depends on (its cache key hashes only these).
BANK_SECTIONS = ("audio", "features", "separation")


def bank_params_digest(cfg: Config) -> str:
    """Digest of the parameter sets a bank depends on (``audio``, ``features``, ``separation``).

    Part of the bank's cache key, so that a detector constant never invalidates banks
    while any analysis constant does.
    """
    return digest({s: dataclasses.asdict(getattr(cfg.params, s)) for s in BANK_SECTIONS})


def _memory() -> LruTable[tuple[str, str, str, str, str], FeatureBank]:
    return lru_table("feature-banks", _MEMORY_SIZE)


def clear_memory_cache() -> None:
    """Forget the banks :func:`get_bank` keeps in memory (the disk cache stays)."""
    _memory().clear()


def _check_clip(clip: Clip, p: FeaturesParams) -> None:
    if clip.samples.ndim != 1 or clip.samples.size == 0:
        raise ParameterError(f"{clip.path}: the bank needs mono, non-empty samples (got shape {clip.samples.shape})")
    if not np.all(np.isfinite(clip.samples)):
        raise ParameterError(f"{clip.path}: samples contain NaN or inf")


def compute_bank(
    clip: Clip, cfg: Config, *, separation: str = "auto", demucs_repo: str | Path | None = None,
) -> FeatureBank:
    """Compute a clip's feature bank without any cache (stems stay in memory only).

    Parameters
    ----------
    clip : Clip
        From :func:`timingbench.audio.load_clip` (mono float32, analysis window).
    cfg : Config
        Reads the ``features`` and ``separation`` sections.
    separation : str
        ``auto`` | ``demucs`` | ``dsp`` | ``none`` (used when a stem is asked for).
    demucs_repo : str or Path, optional
        Local demucs model folder.

    Returns
    -------
    bank : FeatureBank

    Raises
    ------
    ParameterError
        If the samples are not mono and finite or ``separation`` is unknown.
    ConfigError
        If a ``features`` constant is missing or invalid.
    ModelUnavailableError
        If ``separation="demucs"`` and no local weights exist.
    """
    resolution, key = _identity(clip, cfg, separation=separation, demucs_repo=demucs_repo)
    return _bank(clip, cfg, resolution=resolution, key=key, cache_base=None)


def get_bank(
    clip: Clip, cfg: Config, *, separation: str = "auto", demucs_repo: str | Path | None = None,
    cache_dir: str | Path | None = None,
) -> FeatureBank:
    """The clip's feature bank, from the cache when present, else computed and cached.

    The cache key is the audio content hash, the configuration content hash and the
    package version; stem features are cached per separation backend and model next to
    the bank, and :meth:`FeatureBank.derived` values per key.

    Parameters
    ----------
    clip : Clip
        The decoded clip.
    cfg : Config
        The configuration.
    separation : str
        ``auto`` | ``demucs`` | ``dsp`` | ``none``.
    demucs_repo : str or Path, optional
        Local demucs model folder.
    cache_dir : str or Path, optional
        Cache folder (default ``~/.cache/timingbench``).

    Returns
    -------
    bank : FeatureBank

    Raises
    ------
    ParameterError, ConfigError, ModelUnavailableError
        As :func:`compute_bank`.
    """
    resolution, key = _identity(clip, cfg, separation=separation, demucs_repo=demucs_repo)
    root = Path(cache_dir) if cache_dir is not None else _cache.default_cache_dir()
    base = root / "banks"
    mem_key = (key, str(base), resolution.requested, resolution.backend,
               f"{resolution.demucs_repo}|{resolution.source}")
    hit = _memory().get(mem_key)
    if hit is not None and hit.samples.size == clip.samples.size:
        return hit
    bank = _bank(clip, cfg, resolution=resolution, key=key, cache_base=base)
    _memory().put(mem_key, bank)
    return bank


def _identity(clip: Clip, cfg: Config, *, separation: str,
              demucs_repo: str | Path | None) -> tuple[_sep.Resolution, str]:
    """The separation backend a bank of ``clip`` uses, and the bank's cache key."""
    resolution = _sep.resolve(separation, cfg=cfg, demucs_repo=demucs_repo)
    key = _cache.bank_key(clip_hash=clip.content_hash, config_hash=bank_params_digest(cfg),
                          package_version=__version__)
    return resolution, key


def _bank(clip: Clip, cfg: Config, *, resolution: _sep.Resolution, key: str, cache_base: Path | None) -> FeatureBank:
    """The one bank builder of :func:`compute_bank` and :func:`get_bank`.

    Reads the core from ``cache_base`` when it holds this clip's entry, else computes it
    (and writes it there); a freshly computed bank keeps its spectrogram in memory and, on
    the dsp backend, separates its stems from the same HPSS at once.
    """
    global _BUILDS
    p = cfg.params.features
    path = None if cache_base is None else cache_base / f"{key}.pkl"
    entry = None if path is None else _cache.read_entry(path, key=key)
    spectra = None
    if entry is not None and entry["core"].get("n_samples") == clip.samples.size:
        core = entry["core"]
    else:
        _check_clip(clip, p)
        core = _core_features(clip.samples, sr=int(clip.sr), p=p)
        spectra = core.pop("_spectra")
        with _BUILD_LOCK:
            _BUILDS += 1
        core["n_samples"] = int(clip.samples.size)
        if path is not None:
            _cache.write_entry(path, key=key, payload={"core": core})
    bank = FeatureBank._build(core, clip=clip, cfg=cfg, p=p, resolution=resolution, cache_base=cache_base, key=key)
    if spectra is not None:
        for kind, value in spectra.items():
            _spectra().put((key, kind), value)
        if bank.separation_backend == "dsp":
            bank._stem_group("dsp", "hpss")
    return bank
