"""The evidences that judge the stem-isolable families: a demucs stem's level, and the singing presence.

Two providers behind the :class:`~timingbench.identity.evidence.FamilyEvidence` protocol
(:meth:`~timingbench.identity.evidence.FamilyEvidence.presence_logit`), both on the evidence
grid (the trained network's output grid, ``evidence.frame_stride`` bank frames: 46.4 ms at
44.1 kHz, as :mod:`timingbench.identity.singing`):

- ``stems``: a family's presence is the level of its own demucs stem (the registry row's
  ``stem``: drums, bass, vocals) in dB **relative to the mix's own loud level**
  (``features.loud_percentile`` of the mix's frame RMS), each grid instant holding the mean
  of the stem's frame levels (dB) centred within half a grid step of it. A gain applied to
  the clip moves the stem and the mix's loud level together, so the presence does not move;
  the thresholds (``presence.*_by_evidence.stems``) read the stem against the mix's and its
  own level, never an absolute one. Only with a ``demucs`` separation (the dsp fallback has
  no vocals stem, and its drums and bass are band splits, not sources).
- ``singing``: the vocals family's presence is the singing log-odds of
  :func:`timingbench.identity.singing.vocals_presence` (read on the vocals stem under demucs,
  else on the mix).

Which of them decide a family, on a clip with demucs stems and on one without, is the family
registry's ``judged_by`` (``families.table``); :func:`judging_evidence` builds the clip's table
of them (family -> evidences), which the runner attaches to the clip's family evidence
(:attr:`FamilyEvidence.judges`). The decisions live in :mod:`timingbench.identity.decide`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from timingbench.identity.evidence import FamilyEvidence, LazyCurves
from timingbench.identity.singing import evidence_grid, on_grid

if TYPE_CHECKING:
    from timingbench.config import Config
    from timingbench.features.bank import FeatureBank

F64 = npt.NDArray[np.float64]
#: The provider names (the ``backend`` of their evidence, the names ``judged_by`` lists).
STEMS = "stems"
SINGING = "singing"
#: The singing detector's licence (timingbench/data/singing/PROVENANCE.md).
SINGING_LICENCE = "Apache-2.0 (FireRedVAD)"


def has_demucs_stems(bank: FeatureBank) -> bool:
    """Whether the clip's stems come from demucs (the ``stems`` evidence needs them)."""
    return bank.separation_backend == "demucs"


def stem_level_curve(bank: FeatureBank, stem: str, grid: npt.ArrayLike) -> F64:
    """A demucs stem's level in dB re the mix's loud level, on ``grid`` (module docstring).

    Parameters
    ----------
    bank : FeatureBank
        The clip's bank, separated by demucs.
    stem : str
        The stem (``drums``, ``bass``, ``vocals``, ...).
    grid : array_like of float, shape (n,)
        The evidence grid (s).

    Returns
    -------
    level : np.ndarray of float64, shape (n,)
        dB relative to the mix's loud level (0: as loud as the mix's loud frames).

    Raises
    ------
    ModelUnavailableError
        If the bank cannot deliver the stem.
    """

    env = np.asarray(bank.stem(stem).envelope_db, dtype=np.float64)
    frame_t = np.arange(env.size, dtype=np.float64) * bank.hop / bank.sr
    return on_grid(frame_t, env - float(bank.loudness.loud_level_db), grid)


def stems_evidence(bank: FeatureBank, config: Config, families: Iterable[str]) -> FamilyEvidence:
    """The ``stems`` evidence of a clip: each family's stem level on the evidence grid, computed when read.

    Parameters
    ----------
    bank : FeatureBank
        The clip's bank, separated by demucs (:func:`has_demucs_stems`).
    config : Config
        Its registry gives each family's stem.
    families : iterable of str
        The families it holds (each with a stem the bank delivers).

    Returns
    -------
    evidence : FamilyEvidence
        Backend ``stems``; ``presence_logits`` holds the levels (dB), ``curves`` the same.
    """
    from timingbench.features import separation as sep

    reg = config.params.families
    grid = evidence_grid(bank, config)
    stem_of = {f: str(reg.family(f).stem) for f in families}  # type: ignore[union-attr]
    curves = LazyCurves(tuple(stem_of), lambda f: stem_level_curve(bank, stem_of[f], grid))
    source = bank.separation_source
    model = f"htdemucs {source or 'demucs'}"
    if source == "onnx":
        model += f" sha256:{sep.onnx_digest()[:16]}"
    return FamilyEvidence(times=grid, curves=curves, backend=STEMS, exempt={},
                          window_s=float(grid[1] - grid[0]) if grid.size > 1 else 0.0,
                          weights=model, presence_times={f: grid for f in stem_of}, presence_logits=curves,
                          licence=sep.source_licence(source) if source else None)


def singing_evidence(bank: FeatureBank, config: Config) -> FamilyEvidence:
    """The ``singing`` evidence of a clip: the vocals family's singing log-odds (computed when read).

    Parameters
    ----------
    bank : FeatureBank
        The clip's bank (its vocals stem under demucs, else its mix).
    config : Config

    Returns
    -------
    evidence : FamilyEvidence
        Backend ``singing``; ``presence_logits["vocals"]`` the singing log-odds on the evidence grid.
    """
    from timingbench.features import separation as sep
    from timingbench.identity.singing import VOCALS, source_of, vocals_presence

    grid = evidence_grid(bank, config)
    singing = LazyCurves((VOCALS,), lambda _f: np.asarray(vocals_presence(bank, config).singing, dtype=np.float64))
    stem_model = source_of(bank)
    licence = SINGING_LICENCE
    where = "mix"
    if stem_model is not None:
        where = f"vocals stem (demucs {stem_model})"
        if bank.separation_source:
            licence += f"; read on a stem of {sep.source_licence(bank.separation_source)}"
    return FamilyEvidence(times=grid, curves=singing, backend=SINGING, exempt={},
                          window_s=float(grid[1] - grid[0]) if grid.size > 1 else 0.0,
                          weights=f"fireredvad-aed on the {where}", presence_times={VOCALS: grid},
                          presence_logits=singing, licence=licence)


def judging_evidence(bank: FeatureBank, config: Config,
                     families: Iterable[str]) -> dict[str, tuple[FamilyEvidence, ...]]:
    """Family -> the evidences that decide its events on this clip (the registry's ``judged_by``).

    Parameters
    ----------
    bank : FeatureBank
        The clip's bank: ``judged_by.stems`` applies when it is separated by demucs,
        ``judged_by.mix`` otherwise.
    config : Config
        The family registry (``families.table``).
    families : iterable of str
        The families the prompt's events name (others are left out: nothing is computed for them).

    Returns
    -------
    judges : dict of str to tuple of FamilyEvidence
        Only the families some evidence judges here; a family whose row names ``stems`` while
        the bank cannot deliver its stem is left out (not judged).
    """
    reg = config.params.families
    stems = has_demucs_stems(bank)
    available = set(bank.stems_available()) if stems else set()
    wanted: dict[str, tuple[str, ...]] = {}
    for fam in dict.fromkeys(families):
        row = reg.family(fam)
        if row is None:
            continue
        names = row.judging_evidences(stems=stems)
        if not names or (STEMS in names and row.stem not in available):
            continue
        wanted[fam] = names
    if not wanted:
        return {}
    built: dict[str, FamilyEvidence] = {}
    if any(STEMS in n for n in wanted.values()):
        built[STEMS] = stems_evidence(bank, config, [f for f, n in wanted.items() if STEMS in n])
    if any(SINGING in n for n in wanted.values()):
        built[SINGING] = singing_evidence(bank, config)
    return {f: tuple(built[n] for n in names) for f, names in wanted.items()}
