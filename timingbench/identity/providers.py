"""Instrument-family evidence over time, for the semantic family gate and the timbre match.

Four backends behind one interface:

- ``tagger`` (default, embedded, offline): the AudioSet tagger pretrained on real recordings
  (:mod:`timingbench.models.tagger`) with the trained network below, per family as
  ``evidence.design_by_family`` says (:mod:`timingbench.identity.tagger`): the same
  presence and entered/left curves as ``trained``, read the same way by the identity rules.
- ``trained`` (embedded, offline): the project's own family evidence network
  (:mod:`timingbench.identity.training`), run on the bank's log-mel every 46.4 ms. Its curves are
  the presence probability per family; it also answers the gate's question directly
  ("did the family enter / leave across this instant?"). Families whose held-out entrance AUC is below the
  bar are exempt (the family registry, ``families.table``) and disclosed.
- ``musicnn`` (embedded, offline): the pretrained MagnaTagATune tagger of
  :mod:`timingbench.models.musicnn`, run on ~3 s windows every ``semantic.hop_s``
  seconds. A family's evidence in a window is the maximum probability over the tags that
  name one of its instruments (``semantic.musicnn_tag_families``). Families with no such
  tag (bass, brass, keys) are ``exempt`` with reason ``not_in_vocabulary``; families whose
  tags are silent on the dev renders (``semantic.musicnn_exempt_families``) are exempt
  with the configured reason.
- ``clap``: LAION-CLAP through ``transformers.ClapModel`` from a local checkpoint folder
  (``--clap-dir`` or ``semantic.clap_dir``; never downloaded). A family's evidence is the
  zero-shot softmax over one text per family (``semantic.clap_family_texts``). Without a
  checkpoint every family is ``exempt`` with reason ``model_unavailable``.

Families the paper exempts because embeddings are unreliable on generated audio
(``semantic.exempt_families``: synths) are exempt for every backend.

This module only computes the curves. Every decision made with them (the semantic
family gate, absence and persistence on the trained presence, the timbre match) lives in
:mod:`timingbench.identity.rules`.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from timingbench.audio import level_normalised
from timingbench.choices import FAMILY_EVIDENCE_BACKENDS
from timingbench.config import digest
from timingbench.convert import frame_period_s
from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.families import FAMILY_NAMES
from timingbench.identity.evidence import FamilyEvidence
from timingbench.memo import file_sha256
from timingbench.models.musicnn import WEIGHTS_PATH

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank
    from timingbench.params.analysis import AudioParams, EvidenceParams, SemanticParams
    from timingbench.params.families import FamiliesParams
    from timingbench.params.tagger import TaggerParams

_T = TypeVar("_T")


# --------------------------------------------------------------------------- backends


def _musicnn_raw(samples: npt.NDArray[np.float32], sr: int, hop_s: float) -> dict[str, Any]:
    from timingbench.models.musicnn import HOP, MODEL_SR, N_FRAMES, taggram

    tg = taggram(samples, sr=sr, hop_s=hop_s)
    return {"times": tg.times, "probs": tg.probs, "tags": list(tg.tags),
            "window_s": N_FRAMES * HOP / MODEL_SR}


def _clap_raw(
    samples: npt.NDArray[np.float32], sr: int, hop_s: float, window_s: float, clap_dir: Path,
    texts: Mapping[str, str],
) -> dict[str, Any]:
    try:
        import torch
        from transformers import ClapModel, ClapProcessor

        model = ClapModel.from_pretrained(str(clap_dir), local_files_only=True).eval()
        proc = ClapProcessor.from_pretrained(str(clap_dir), local_files_only=True)
    except (OSError, ValueError, ImportError) as exc:
        raise ModelUnavailableError(f"{clap_dir}: cannot load a CLAP checkpoint ({exc})") from None
    target_sr = int(proc.feature_extractor.sampling_rate)
    if sr != target_sr:
        import soxr

        y = np.asarray(soxr.resample(samples, sr, target_sr, quality="VHQ"), dtype=np.float32)
    else:
        y = np.asarray(samples, dtype=np.float32)
    win = int(round(window_s * target_sr))
    hop = hop_s * target_sr
    n = 0 if y.size < win else int(np.floor((y.size - win) / hop)) + 1
    starts = np.round(np.arange(n) * hop).astype(np.int64)
    starts = starts[starts + win <= y.size]
    families = list(texts)

    def _features(out: Any) -> torch.Tensor:
        t = out if isinstance(out, torch.Tensor) else out.pooler_output
        return torch.nn.functional.normalize(t, dim=-1)

    probs = np.zeros((starts.size, len(families)), dtype=np.float64)
    with torch.inference_mode():
        tin = proc(text=[texts[f] for f in families], return_tensors="pt", padding=True)
        temb = _features(model.get_text_features(input_ids=tin["input_ids"],
                                                 attention_mask=tin.get("attention_mask")))
        scale = float(model.logit_scale_a.exp())
        for i in range(0, starts.size, 16):
            chunk = [y[s : s + win] for s in starts[i : i + 16]]
            ain = proc(audio=chunk, sampling_rate=target_sr, return_tensors="pt")
            kwargs = {"input_features": ain["input_features"]}
            if "is_longer" in ain:
                kwargs["is_longer"] = ain["is_longer"]
            aemb = _features(model.get_audio_features(**kwargs))
            logits = scale * aemb @ temb.T
            probs[i : i + len(chunk)] = torch.softmax(logits, dim=-1).double().numpy()
    times = (starts + win / 2.0) / target_sr
    return {"times": times, "probs": probs, "tags": families, "window_s": win / target_sr}


# --------------------------------------------------------------------------- interface


def _unpack(samples_or_bank: Any, sr: int) -> tuple[Any, npt.NDArray[np.float32], int]:
    if hasattr(samples_or_bank, "derived") and hasattr(samples_or_bank, "samples"):
        bank = samples_or_bank
        return bank, np.asarray(bank.samples, dtype=np.float32), int(getattr(bank, "sr", sr))
    y = np.asarray(samples_or_bank, dtype=np.float32)
    if y.ndim != 1:
        raise ParameterError(f"samples must be mono with shape (n,), got shape {y.shape}")
    return None, y, sr


def with_registry_exemptions(evidence: FamilyEvidence, families: FamiliesParams) -> FamilyEvidence:
    """``evidence`` with every family the registry exempts added to its exempt table (a family the backend
    already cannot hear keeps the backend's reason)."""
    missing = {f: str(r) for f, r in dict(families.exempt).items() if f not in evidence.exempt}
    if not missing:
        return evidence
    return dataclasses.replace(evidence, exempt={**evidence.exempt, **missing})


def _registry_applied(provider: Callable[..., FamilyEvidence]) -> Callable[..., FamilyEvidence]:
    """``provider`` with the family registry's exemptions applied to what it returns (the one place)."""
    @functools.wraps(provider)
    def applied(*args: Any, **kwargs: Any) -> FamilyEvidence:
        return with_registry_exemptions(provider(*args, **kwargs), kwargs["evidence_params"].families)

    return applied


@_registry_applied
def family_evidence(
    samples_or_bank: Any,
    *,
    sr: int,
    semantic: SemanticParams,
    evidence_params: EvidenceParams,
    audio: AudioParams,
    backend: str = "musicnn",
    clap_dir: Path | None = None,
    tagger: TaggerParams | None = None,
) -> FamilyEvidence:
    """Windowed instrument-family evidence of a clip, the family registry's exemptions applied.

    Every provider returns through here: whatever a backend could hear, a family the registry
    (``evidence_params.families``) exempts is exempt with the registry's reason, so no backend
    judges a family the registry has not judged on real material.

    Parameters
    ----------
    samples_or_bank : array_like of float, shape (n,), or a feature bank
        Mono audio, or a feature bank exposing ``samples``, ``sr`` and
        ``derived(key, fn)``; with a bank the raw curves are memoised under
        ``semantic:<backend>:<version>:...``.
    sr : int
        Sample rate of the samples in Hz (a bank's own ``sr`` takes precedence).
    semantic, evidence_params, audio : SemanticParams, EvidenceParams, AudioParams
        The ``semantic`` and ``evidence`` sections, and the level normalisation of the
        tagger input (``audio.level_frame_s``, ``audio.level_percentile``).
    backend : str
        ``tagger`` (the embedded AudioSet tagger with the embedded network, per family as
        ``evidence.design_by_family`` says), ``trained`` (the embedded network alone),
        ``musicnn`` (embedded MagnaTagATune tagger) or ``clap``.
    clap_dir : Path, optional
        Local CLAP checkpoint folder; ``semantic.clap_dir`` when omitted.
    tagger : TaggerParams, optional
        The ``tagger`` section (``tagger`` backend only); the family registry it reads is
        ``evidence_params.families``.

    Returns
    -------
    evidence : FamilyEvidence
        With zero windows when the clip is shorter than one window. When the CLAP
        checkpoint is absent or unreadable, every family is exempt (``model_unavailable``)
        and ``note`` says why.

    Raises
    ------
    ParameterError
        On an unknown backend, non-mono samples or a non-positive sample rate.
    ModelUnavailableError
        If the embedded musicnn weights are missing (a broken installation).
    """
    if backend not in FAMILY_EVIDENCE_BACKENDS:
        raise ParameterError(f"unknown family-evidence backend {backend!r}; "
                             f"use one of {list(FAMILY_EVIDENCE_BACKENDS)}")
    bank, y, sr = _unpack(samples_or_bank, sr)
    if int(sr) != sr or sr <= 0:
        raise ParameterError(f"sr must be a positive whole number of Hz, got {sr!r}")
    if backend == "trained":
        return _trained(bank, evidence_params)
    if backend == "tagger":
        if bank is None:
            raise ParameterError("the tagger family evidence reads a feature bank; pass a bank, not samples")
        if tagger is None:
            raise ParameterError("the tagger family evidence needs the tagger section (tagger=)")
        from timingbench.identity.tagger import tagger_evidence

        classes, nonmusic, exempt = tagger_tables(evidence_params.families)
        return tagger_evidence(bank, evidence_params=evidence_params, tagger_params=tagger, classes=classes,
                               nonmusic_classes=nonmusic, exempt=exempt)
    sec = semantic
    hop_s = sec.hop_s
    y = level_normalised(y, sr=int(sr), loud_dbfs=sec.audio.input_loud_level_dbfs, frame_s=audio.level_frame_s,
                         percentile=audio.level_percentile)
    paper_exempt = dict(sec.exempt_families or {})
    # the raw curves depend on the whole semantic section (input level included), the
    # level normalisation and the model file: the cache key is their digest
    inputs = digest({"semantic": dataclasses.asdict(sec), "level": [audio.level_frame_s, audio.level_percentile]})

    if backend == "musicnn":
        key = f"semantic:musicnn:{inputs}:{_file_digest(WEIGHTS_PATH)}"
        raw = bank.derived(key, lambda *_: _musicnn_raw(y, sr, hop_s)) if bank is not None \
            else _musicnn_raw(y, sr, hop_s)
        table: dict[str, list[str]] = {f: list(t) for f, t in dict(sec.musicnn_tag_families).items()}
        col = {t: i for i, t in enumerate(raw["tags"])}
        for fam, tags in table.items():
            missing = [t for t in tags if t not in col]
            if fam not in FAMILY_NAMES or missing:
                raise ParameterError(
                    f"semantic.musicnn_tag_families: family {fam!r} / tags {missing} are not a formats §1 "
                    "family / MagnaTagATune tag"
                )
        probs = np.asarray(raw["probs"], dtype=np.float64)
        curves = {f: probs[:, [col[t] for t in tags]].max(axis=1) if probs.shape[0]
                  else np.zeros(0) for f, tags in table.items() if f not in paper_exempt}
        unjudged = dict(sec.musicnn_exempt_families or {})
        curves = {f: c for f, c in curves.items() if f not in unjudged}
        exempt = {f: "not_in_vocabulary" for f in FAMILY_NAMES if f not in table}
        exempt.update({str(f): str(r) for f, r in dict(sec.musicnn_exempt_families or {}).items()})
        exempt.update({f: r for f, r in paper_exempt.items()})
        tag_curves = {t: probs[:, i] for t, i in col.items()}
        return FamilyEvidence(times=np.asarray(raw["times"], dtype=np.float64), curves=curves,
                              backend="musicnn", exempt=exempt, window_s=float(raw["window_s"]),
                              tag_curves=tag_curves)

    directory = clap_dir if clap_dir is not None else sec.clap_dir
    window_s = sec.clap_window_s
    texts = {f: str(t) for f, t in dict(sec.clap_family_texts).items() if f in FAMILY_NAMES}
    if directory is None or not Path(directory).is_dir():
        why = "no CLAP checkpoint folder given (--clap-dir)" if directory is None \
            else f"CLAP checkpoint folder {directory} does not exist"
        return _unavailable(window_s, why)
    model = _folder_digest(Path(directory))
    key = f"semantic:clap:{inputs}:{model}"
    try:
        raw = bank.derived(key, lambda *_: _clap_raw(y, sr, hop_s, window_s, Path(directory), texts)) \
            if bank is not None else _clap_raw(y, sr, hop_s, window_s, Path(directory), texts)
    except ModelUnavailableError as exc:
        return _unavailable(window_s, str(exc))
    probs = np.asarray(raw["probs"], dtype=np.float64)
    curves = {f: probs[:, i] if probs.shape[0] else np.zeros(0)
              for i, f in enumerate(raw["tags"]) if f not in paper_exempt}
    exempt = {f: "not_in_vocabulary" for f in FAMILY_NAMES if f not in texts}
    exempt.update(paper_exempt)
    return FamilyEvidence(times=np.asarray(raw["times"], dtype=np.float64), curves=curves,
                          backend="clap", exempt=exempt, window_s=float(raw["window_s"]))


def tagger_tables(families: FamiliesParams) -> tuple[dict[str, tuple[str, ...]], tuple[str, ...], dict[str, str]]:
    """What the tagger evidence reads from the family registry.

    Parameters
    ----------
    families : FamiliesParams
        The family registry (``families`` section).

    Returns
    -------
    classes : dict of str to tuple of str
        Family -> its AudioSet classes, in registry order.
    nonmusic : tuple of str
        AudioSet classes of speech and animal sounds (negatives of every family).
    exempt : dict of str to str
        Family -> the reason its identity is not judged.
    """
    rows = list(families.rows)
    classes = {f.name: tuple(f.audioset_classes) for f in rows}
    nonmusic = tuple(families.speech_classes) + tuple(families.animal_classes)
    exempt = {f.name: str(f.exempt_reason) for f in rows if f.exempt_reason is not None}
    return classes, nonmusic, exempt


def _trained(bank: FeatureBank, sec: EvidenceParams) -> FamilyEvidence:
    """Evidence of the shipped family evidence network (needs a feature bank)."""
    from timingbench.families import FAMILY_NAMES as FAMILIES
    from timingbench.models.family_net_infer import bank_outputs

    if bank is None:
        raise ParameterError("the trained family evidence reads a feature bank's log-mel; pass a bank, not samples")
    hop_s = frame_period_s(sr=bank.sr, hop=sec.frame_stride * bank.hop)
    try:
        out = bank_outputs(bank)
    except ModelUnavailableError as exc:
        return FamilyEvidence(times=np.zeros(0), curves={}, backend="trained",
                              exempt={f: "model_unavailable" for f in FAMILY_NAMES},
                              window_s=hop_s, note=str(exc))
    exempt = dict(sec.families.exempt)
    row = {f: i for i, f in enumerate(FAMILIES)}
    judged = [f for f in FAMILY_NAMES if f not in exempt]
    return FamilyEvidence(times=np.asarray(out.times, dtype=np.float64),
                          curves={f: out.presence[row[f]] for f in judged}, backend="trained",
                          exempt=exempt, window_s=hop_s,
                          entered={f: out.entered[row[f]] for f in judged},
                          left={f: out.left[row[f]] for f in judged})


def _file_digest(path: Path) -> str:
    """Digest of a model file's bytes (memoised per path, size and mtime)."""
    return file_sha256(path)[:16]


def _folder_digest(folder: Path) -> str:
    """Digest of a model folder: its resolved path and every file's name and content digest."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    return digest([str(folder.resolve()), [(str(p.relative_to(folder)), _file_digest(p)) for p in files]])


def _unavailable(window_s: float, why: str) -> FamilyEvidence:
    return FamilyEvidence(times=np.zeros(0), curves={}, backend="clap",
                          exempt={f: "model_unavailable" for f in FAMILY_NAMES},
                          window_s=window_s, note=why)
