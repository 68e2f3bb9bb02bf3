"""The vocals presence: the singing detector's log-odds of singing and of speech on the evidence grid.

The singing detector (:mod:`timingbench.models.singing`, FireRedVAD AED) gives P(speech),
P(singing) and P(music) every 10 ms. A clip's **vocals presence** is its singing log-odds, and
apart from it its speech log-odds (speech is its own class: a spoken voice is not singing),
read

- on the **vocals stem** when the clip's separation backend is ``demucs`` (every demucs model
  has one), scaled by the gain that brings the mix's loud level to
  ``audio.input_loud_level_dbfs`` (so a stem holding only separation residue stays quiet);
- on the **mix** otherwise, brought to that loud level (the detector's log-mel front end
  reads int16-scaled samples and is not gain-invariant).

The 10-ms frames are memoised in the clip's feature bank (and so in the feature cache)
under a key holding both files' digests, the input level and the source; the presence is
also given on the evidence grid the identity code reads the family evidence on (the trained
network's output grid, ``evidence.frame_stride`` bank frames, 46.4 ms at 44.1 kHz): each
grid instant holds the mean log-odds of the 10-ms frames centred within half a grid step of
it (the nearest frame where none is).

It is read only for clips whose prompt has a vocals event (:func:`needs_vocals_presence`)
and judges vocals where the registry's ``judged_by`` names ``singing``
(:mod:`timingbench.identity.stem_evidence`); it is drawn by ``explain --plot`` and the report, named in
``summary.json``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.identity.window import logit

if TYPE_CHECKING:
    from timingbench.config import Config
    from timingbench.features.bank import FeatureBank

F64 = npt.NDArray[np.float64]
#: The family whose presence this is.
VOCALS = "vocals"
#: The stem the presence is read on when separation gives one.
VOCALS_STEM = "vocals"


@dataclass(frozen=True)
class VocalsPresence:
    """One clip's vocals presence (module docstring).

    Attributes
    ----------
    times : np.ndarray of float64, shape (n,)
        The evidence grid (s).
    singing, speech : np.ndarray of float64, shape (n,)
        Log-odds of singing and of speech at ``times``.
    frame_times : np.ndarray of float64, shape (m,)
        Centres (s) of the detector's 10-ms frames.
    frame_singing, frame_speech, frame_music : np.ndarray of float64, shape (m,)
        Log-odds of singing, speech and music per 10-ms frame.
    source : str
        ``mix`` or ``vocals stem (demucs <model>)``.
    model : str
        The model file's name and the start of its SHA-256.
    level_dbfs : float
        The loud level the mix was brought to (``audio.input_loud_level_dbfs``).
    """

    times: F64
    singing: F64
    speech: F64
    frame_times: F64
    frame_singing: F64
    frame_speech: F64
    frame_music: F64
    source: str
    model: str
    level_dbfs: float

    def disclosure(self) -> dict[str, Any]:
        """What ``summary.json`` records of it: the detector, the source and the input level."""
        return {"detector": "fireredvad-aed", "model": self.model, "source": self.source,
                "input_loud_level_dbfs": self.level_dbfs}


def needs_vocals_presence(families: Iterable[str]) -> bool:
    """Whether a prompt whose events name ``families`` reads the vocals presence (it has a vocals event)."""
    return VOCALS in set(families)


def source_of(bank: FeatureBank) -> str | None:
    """The demucs model whose vocals stem the presence is read on, or None for the mix."""
    if bank.separation_backend != "demucs" or VOCALS_STEM not in bank.stems_available():
        return None
    return str(bank.stem(VOCALS_STEM).model)


def frames_key(bank: FeatureBank, config: Config, *, stem_model: str | None) -> str:
    """The bank memo key of the 10-ms frames: both files' digests, the input level, the source.

    Raises
    ------
    ModelUnavailableError
        If the model or its statistics are missing or corrupt.
    """
    from timingbench.models.singing import CMVN_PATH, MODEL_PATH, checked_file

    p = config.params.singing
    model = checked_file(MODEL_PATH, p.model_sha256, what="ONNX model")[:16]
    cmvn = checked_file(CMVN_PATH, p.cmvn_sha256, what="CMVN statistics")[:16]
    where = "mix" if stem_model is None else f"stem-{VOCALS_STEM}-{stem_model}"
    level = config.params.audio.input_loud_level_dbfs
    return f"singing:{model}:{cmvn}:level{level:g}:{where}"


def bank_singing(bank: FeatureBank, config: Config) -> dict[str, Any]:
    """The detector's 10-ms frames of the clip (module docstring), memoised in the bank and its cache.

    Returns
    -------
    entry : dict
        ``times`` (s, shape (m,)), ``probs`` (float32, shape (m, 3): speech, singing, music),
        ``model`` (file name and SHA-256 prefix) and ``source``.

    Raises
    ------
    ModelUnavailableError
        If the model cannot be read, or the vocals stem cannot be separated.
    """
    from timingbench.models.singing import MODEL_PATH, singing_frames
    from timingbench.models.tagger import at_level

    stem_model = source_of(bank)
    target = float(config.params.audio.input_loud_level_dbfs)
    params = config.params.singing

    def compute(b: FeatureBank) -> dict[str, Any]:
        signal = b.samples if stem_model is None else b.stem_audio(VOCALS_STEM)
        x = at_level(signal, loud_db=float(b.loudness.loud_level_db), target_db=target)
        frames = singing_frames(x, b.sr, params)
        return {"times": frames.times, "probs": frames.probs,
                "model": f"{MODEL_PATH.name} sha256:{frames.model_sha256[:16]}",
                "source": "mix" if stem_model is None else f"vocals stem (demucs {stem_model})"}

    return bank.derived(frames_key(bank, config, stem_model=stem_model), compute)


def evidence_grid(bank: FeatureBank, config: Config) -> F64:
    """The evidence grid of a clip (s): the trained network's output instants on the bank's log-mel."""
    from timingbench.models.family_net_infer import clip_output_times

    return clip_output_times(int(bank.logmel.shape[1]), stride=int(config.params.evidence.frame_stride),
                             sr=bank.sr, hop=bank.hop)


def on_grid(frame_times: npt.ArrayLike, values: npt.ArrayLike, grid: npt.ArrayLike) -> F64:
    """Per-frame values on a coarser grid: the mean of the frames centred within half a grid step.

    Parameters
    ----------
    frame_times : array_like, shape (m,)
        Frame centres (s), increasing.
    values : array_like, shape (m,)
        One value per frame (log-odds).
    grid : array_like, shape (n,)
        Grid instants (s), increasing and evenly spaced.

    Returns
    -------
    out : np.ndarray of float64, shape (n,)
        The mean over ``[t - step / 2, t + step / 2)`` of each grid instant ``t``; the nearest
        frame's value where no frame is centred there (the clip's edges); zeros without frames.
    """
    ft = np.asarray(frame_times, dtype=np.float64)
    v = np.asarray(values, dtype=np.float64)
    g = np.asarray(grid, dtype=np.float64)
    if ft.size == 0:
        return np.zeros(g.size)
    if g.size == 0:
        return np.zeros(0)
    half = 0.5 * float(g[1] - g[0]) if g.size > 1 else 0.5 * float(ft[-1] - ft[0] + 1.0)
    lo = np.searchsorted(ft, np.round(g - half, 9), side="left")
    hi = np.searchsorted(ft, np.round(g + half, 9), side="left")
    csum = np.concatenate([[0.0], np.cumsum(v)])
    n = hi - lo
    mean = (csum[hi] - csum[lo]) / np.maximum(n, 1)
    near = np.interp(g, ft, v)
    return np.where(n > 0, mean, near)


def vocals_presence(bank: FeatureBank, config: Config) -> VocalsPresence:
    """The clip's vocals presence (module docstring).

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank (its samples, its vocals stem when separated by demucs).
    config : Config
        Reads ``singing``, ``audio.input_loud_level_dbfs`` and ``evidence.frame_stride``.

    Returns
    -------
    presence : VocalsPresence

    Raises
    ------
    ModelUnavailableError
        If the detector's files are missing or corrupt (never a silent fallback).
    """
    from timingbench.models.singing import CLASSES

    entry = bank_singing(bank, config)
    clip = config.params.singing.prob_clip
    probs = np.asarray(entry["probs"], dtype=np.float64)
    z = {name: logit(probs[:, i], clip) if probs.size else np.zeros(0) for i, name in enumerate(CLASSES)}
    ft = np.asarray(entry["times"], dtype=np.float64)
    grid = evidence_grid(bank, config)
    return VocalsPresence(times=grid, singing=on_grid(ft, z["singing"], grid), speech=on_grid(ft, z["speech"], grid),
                          frame_times=ft, frame_singing=z["singing"], frame_speech=z["speech"],
                          frame_music=z["music"], source=str(entry["source"]), model=str(entry["model"]),
                          level_dbfs=float(config.params.audio.input_loud_level_dbfs))


def prompt_presence(bank: FeatureBank, families: Iterable[str], config: Config) -> dict[str, Any] | None:
    """The vocals presence's disclosure for a scored clip, computed (and cached) only when it has a vocals event.

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank.
    families : iterable of str
        The families its prompt's events name.
    config : Config

    Returns
    -------
    disclosure : dict or None
        :meth:`VocalsPresence.disclosure`; None when no event names vocals (nothing is run).
    """
    if not needs_vocals_presence(families):
        return None
    return vocals_presence(bank, config).disclosure()


def summary_of(parts: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """``summary.json``'s ``vocals_presence``: which clips the vocals presence was computed on, and how.

    Parameters
    ----------
    parts : iterable of dict
        The run's scored parts (their ``vocals_presence``: a disclosure, or absent).

    Returns
    -------
    summary : dict
        ``clips`` (how many), ``sources`` (``mix`` / ``vocals stem (...)`` -> clips), ``models``,
        ``input_loud_level_dbfs`` (levels used) and ``judges``: what it decides (nothing yet).
    """
    rows = [p["vocals_presence"] for p in parts if p.get("vocals_presence")]
    sources: dict[str, int] = {}
    for r in rows:
        sources[r["source"]] = sources.get(r["source"], 0) + 1
    return {"detector": "fireredvad-aed", "clips": len(rows), "sources": dict(sorted(sources.items())),
            "models": sorted({r["model"] for r in rows}),
            "input_loud_level_dbfs": sorted({r["input_loud_level_dbfs"] for r in rows}),
            "judges": "vocals where families.table judged_by names singing (family_evidence.judged_by: which clips)"}
