"""The ``tagger`` family evidence: the AudioSet tagger, the render-trained network, or both, per family.

One clip's evidence under ``--family-evidence tagger`` (the default). Each family is judged by
the design ``evidence.design_by_family`` names for it:

- ``network``: the render-trained network's presence and change heads alone (the ``trained``
  backend's curves);
- ``tagger``: the AudioSet tagger's presence (the largest probability over the family's
  AudioSet classes, from the family registry) and its change probabilities
  (:mod:`timingbench.features.tagger_curves`);
- ``fusion``: the tagger's presence, and the larger of the tagger's and the network's change
  probabilities at each instant;
- ``head``: the presence of a small per-family head on the tagger's frozen column embeddings
  (:mod:`timingbench.evidence_net.tagger_heads`, trained on renders and real dev recordings)
  in place of the zero-shot class mapping, with its change probabilities read the same way;
- ``head_fusion``: the head's presence, and the larger of the head's and the network's change
  probabilities.

Every curve is read on the network's 46.4-ms output grid, so the identity rules
(:mod:`timingbench.identity`) read every family the same way whichever design judges it.
The tagger runs once per clip on the bank's decoded audio and is memoised in the bank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.convert import frame_period_s
from timingbench.errors import ConfigError, ModelUnavailableError
from timingbench.family_evidence import FamilyEvidence
from timingbench.features.tagger_curves import change_curves, frame_presence, group_presence

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank
    from timingbench.params.analysis import EvidenceParams
    from timingbench.params.tagger import TaggerParams

F64 = npt.NDArray[np.float64]
#: The designs a family can be judged by (``evidence.design_by_family``).
DESIGNS = ("network", "tagger", "fusion", "head", "head_fusion")
#: The design a family falls back to when the network cannot run (said in the evidence's ``note``).
NETWORK_FREE = {"network": "tagger", "tagger": "tagger", "fusion": "tagger", "head": "head", "head_fusion": "head"}


def check_designs(designs: Mapping[str, Any], families: Sequence[str]) -> dict[str, str]:
    """``evidence.design_by_family`` as a checked family -> design table (every family named once)."""
    out = {str(f): str(d) for f, d in dict(designs or {}).items()}
    bad = {f: d for f, d in out.items() if d not in DESIGNS}
    if bad:
        raise ConfigError(f"evidence.design_by_family: unknown design(s) {bad}; use one of {list(DESIGNS)}")
    unknown = sorted(set(out) - set(families))
    missing = [f for f in families if f not in out]
    if unknown or missing:
        raise ConfigError(f"evidence.design_by_family: families {unknown} are not instrument families; "
                          f"{missing} have no design")
    return out


def tagger_evidence(
    bank: FeatureBank,
    *,
    evidence_params: EvidenceParams,
    tagger_params: TaggerParams,
    classes: Mapping[str, Sequence[str]],
    nonmusic_classes: Sequence[str],
    exempt: Mapping[str, str],
) -> FamilyEvidence:
    """The clip's family evidence under ``--family-evidence tagger`` (module docstring).

    Parameters
    ----------
    bank : FeatureBank
        The clip's feature bank (its decoded samples feed the tagger, its log-mel the network).
    evidence_params : EvidenceParams
        The ``evidence`` section: the before/after convention (``context_s``, ``guard_s``),
        ``prob_clip``, ``tagger_rise_mid`` and ``design_by_family``.
    tagger_params : TaggerParams
        The ``tagger`` section (weights, chunking).
    classes : mapping of str to sequence of str
        Family -> its AudioSet class names (the family registry), in family order.
    nonmusic_classes : sequence of str
        AudioSet classes of sounds that are no family (speech, animals): their rise is taken
        off every family's.
    exempt : mapping of str to str
        Family -> the reason it is not judged.

    Returns
    -------
    evidence : FamilyEvidence
        ``backend='tagger'``; ``sources`` names each judged family's design, ``classes`` its
        AudioSet classes; ``tagger`` holds the tagger's presence of every family.

    Raises
    ------
    ModelUnavailableError
        If the tagger's weights are missing or corrupt (never a silent fallback).
    """
    from timingbench.evidence_net.infer import bank_outputs
    from timingbench.evidence_net.tagger import bank_tagger

    families = list(classes)
    designs = check_designs(evidence_params.design_by_family, families)
    cols = bank_tagger(bank, tagger_params)
    note = None
    try:
        net = bank_outputs(bank)
        times = np.asarray(net.times, dtype=np.float64)
        row = {f: i for i, f in enumerate(families)}
        net_presence = {f: np.asarray(net.presence[row[f]], dtype=np.float64) for f in families}
        net_entered = {f: np.asarray(net.entered[row[f]], dtype=np.float64) for f in families}
        net_left = {f: np.asarray(net.left[row[f]], dtype=np.float64) for f in families}
    except ModelUnavailableError as exc:
        # the network is gone (a broken installation): its families fall back to the tagger, said in `note`
        hop_s = frame_period_s(sr=bank.sr, hop=evidence_params.frame_stride * bank.hop)
        times = np.asarray(np.arange(int(np.floor(float(bank.duration_s) / hop_s)) + 1) * hop_s, dtype=np.float64)
        net_presence = net_entered = net_left = {}
        note = f"network evidence unavailable, tagger used for every family ({exc})"
    table = {f: list(classes[f]) for f in families}
    col_presence = group_presence(cols.logits, cols.labels, table, what="families.audioset_classes")
    nonmusic = group_presence(cols.logits, cols.labels, {"nonmusic": list(nonmusic_classes)},
                              what="families.nonmusic_classes")["nonmusic"] if nonmusic_classes else None

    def read(columns: dict[str, F64]) -> tuple[dict[str, F64], dict[str, F64], dict[str, F64]]:
        """Presence, entered and left on the grid, from per-column presence."""
        ent, lft = change_curves(columns, cols.times, times, context_s=evidence_params.context_s,
                                 guard_s=evidence_params.guard_s, prob_clip=evidence_params.prob_clip,
                                 rise_mid=evidence_params.tagger_rise_mid, nonmusic=nonmusic)
        return frame_presence(columns, cols.times, times), ent, lft

    tag_presence, tag_entered, tag_left = read(col_presence)
    head_frames: dict[str, F64] = {}
    head_entered: dict[str, F64] = {}
    head_left: dict[str, F64] = {}
    if any(designs[f].startswith("head") for f in families if f not in exempt):  # heads only when a family uses them
        from timingbench.evidence_net.tagger_heads import head_presence, load_heads

        heads = head_presence(cols.embeddings, load_heads())
        head_frames, head_entered, head_left = read({f: heads[f] for f in families})
    curves: dict[str, F64] = {}
    entered: dict[str, F64] = {}
    left: dict[str, F64] = {}
    sources: dict[str, str] = {}
    for f in families:
        if f in exempt:
            continue
        design = designs[f] if net_presence else NETWORK_FREE[designs[f]]
        sources[f] = design
        if design == "network":
            curves[f], entered[f], left[f] = net_presence[f], net_entered[f], net_left[f]
        elif design == "tagger":
            curves[f], entered[f], left[f] = tag_presence[f], tag_entered[f], tag_left[f]
        elif design == "head":
            curves[f], entered[f], left[f] = head_frames[f], head_entered[f], head_left[f]
        elif design == "head_fusion":
            curves[f] = head_frames[f]
            entered[f] = np.maximum(head_entered[f], net_entered[f])
            left[f] = np.maximum(head_left[f], net_left[f])
        else:
            curves[f] = tag_presence[f]
            entered[f] = np.maximum(tag_entered[f], net_entered[f])
            left[f] = np.maximum(tag_left[f], net_left[f])
    return FamilyEvidence(times=times, curves=curves, backend="tagger", exempt=dict(exempt),
                          window_s=float(times[1] - times[0]) if times.size > 1 else 0.0, note=note,
                          entered=entered, left=left, sources=sources,
                          classes={f: tuple(table[f]) for f in families}, tagger=tag_presence,
                          weights=f"{cols.weights.name} sha256:{cols.weights.digest}")
