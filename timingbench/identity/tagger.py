"""The ``tagger`` family evidence: the AudioSet tagger, the render-trained network, or both, per family.

One clip's evidence under ``--family-evidence tagger`` (the default). Each family is judged by
the design ``evidence.design_by_family`` names for it:

- ``network``: the render-trained network's presence and change heads alone (the ``trained``
  backend's curves);
- ``tagger``: the AudioSet tagger's presence (the largest probability over the family's
  AudioSet classes, from the family registry) and its change probabilities
  (:mod:`timingbench.identity.presence_curves`);
- ``fusion``: the tagger's presence, and the larger of the tagger's and the network's change
  probabilities at each instant.

Every curve is read on the network's 46.4-ms output grid, so the identity rules
(:mod:`timingbench.identity.rules`) read every family the same way whichever design judges it.
Each curve is computed when first read (:class:`~timingbench.identity.evidence.LazyCurves`): the
tagger and the network run at most once per clip, only when a curve that needs them is read
(the tagger's columns and the network's outputs are memoised in the bank).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from timingbench.errors import ConfigError, ModelUnavailableError
from timingbench.identity.evidence import FamilyEvidence, LazyCurves
from timingbench.identity.presence_curves import change_curves, frame_presence, group_logits, group_presence

if TYPE_CHECKING:
    from timingbench.features.bank import FeatureBank
    from timingbench.params.analysis import EvidenceParams
    from timingbench.params.tagger import TaggerParams

F64 = npt.NDArray[np.float64]
#: The designs a family can be judged by (``evidence.design_by_family``).
DESIGNS = ("network", "tagger", "fusion")
#: The design a family falls back to when the network cannot run (said in the evidence's ``note``).
NETWORK_FREE = {"network": "tagger", "tagger": "tagger", "fusion": "tagger"}
#: The designs that read the render-trained network.
NETWORK_DESIGNS = ("network", "fusion")


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
    from timingbench.models.family_net_infer import bank_outputs, clip_output_times, network_unavailable
    from timingbench.models.tagger import bank_tagger, tagger_for

    families = list(classes)
    designs = check_designs(evidence_params.design_by_family, families)
    loaded = tagger_for(tagger_params)  # loaded once per process: a missing or corrupt file stops here
    judged = [f for f in families if f not in exempt]
    # every curve is read on the network's grid, known without running it; what is read is
    # computed when first read (a clip whose events name only exempt families runs no model)
    times = clip_output_times(int(bank.logmel.shape[1]), stride=int(evidence_params.frame_stride), sr=bank.sr,
                              hop=bank.hop)
    unavailable = network_unavailable() if any(designs[f] in NETWORK_DESIGNS for f in judged) else None
    note = None if unavailable is None else \
        f"network evidence unavailable, tagger used for every family ({unavailable})"
    sources = {f: designs[f] if unavailable is None else NETWORK_FREE[designs[f]] for f in judged}
    row = {f: i for i, f in enumerate(families)}
    table = {f: list(classes[f]) for f in families}
    once: dict[str, Any] = {}

    def memo(key: str, fn: Callable[[], Any]) -> Any:
        if key not in once:
            once[key] = fn()
        return once[key]

    def cols() -> Any:
        return memo("cols", lambda: bank_tagger(bank, tagger_params))

    def col_presence() -> dict[str, F64]:
        return memo("presence", lambda: group_presence(cols().logits, cols().labels, table,
                                                       what="families.audioset_classes"))

    def nonmusic() -> F64 | None:
        return memo("nonmusic", lambda: group_presence(cols().logits, cols().labels,
                                                       {"nonmusic": list(nonmusic_classes)},
                                                       what="families.nonmusic_classes")["nonmusic"]
                    if nonmusic_classes else None)

    def net() -> Any:
        def run() -> Any:
            out = bank_outputs(bank)
            if not np.array_equal(out.times, times):
                raise ModelUnavailableError(f"the network's output grid ({out.times.size} frames) is not the grid "
                                            f"the evidence is read on ({times.size} frames)")
            return out
        return memo("net", run)

    def changes(family: str) -> tuple[F64, F64]:
        """Entered and left of one family from the tagger's per-column presence."""
        def read() -> tuple[F64, F64]:
            ent, lft = change_curves({family: col_presence()[family]}, cols().times, times,
                                     context_s=evidence_params.context_s, guard_s=evidence_params.guard_s,
                                     prob_clip=evidence_params.prob_clip, rise_mid=evidence_params.tagger_rise_mid,
                                     nonmusic=nonmusic())
            return ent[family], lft[family]
        return memo(f"change:{family}", read)  # type: ignore[no-any-return]

    def presence(family: str) -> F64:
        return frame_presence({family: col_presence()[family]}, cols().times, times)[family]

    def network(what: str, family: str) -> F64:
        return np.asarray(getattr(net(), what)[row[family]], dtype=np.float64)

    tagger_presence = LazyCurves(families, presence)

    def pooled_logits() -> Any:
        from timingbench.models.tagger import pooled_logits as pool

        return memo("pooled", lambda: pool(cols(), loaded, span_s=tagger_params.presence_pool_s))

    def family_logits(family: str) -> F64:
        return group_logits(pooled_logits(), cols().labels, {family: table[family]},
                            what="families.audioset_classes")[family]

    def curve(family: str) -> F64:
        design = sources[family]
        return network("presence", family) if design == "network" else tagger_presence[family]

    def change(family: str, side: int) -> F64:
        design = sources[family]
        what = ("entered", "left")[side]
        if design == "network":
            return network(what, family)
        own = changes(family)[side]
        return own if design == "tagger" else np.maximum(own, network(what, family))  # fusion

    return FamilyEvidence(times=times, curves=LazyCurves(judged, curve), backend="tagger", exempt=dict(exempt),
                          window_s=float(times[1] - times[0]) if times.size > 1 else 0.0, note=note,
                          entered=LazyCurves(judged, lambda f: change(f, 0)),
                          left=LazyCurves(judged, lambda f: change(f, 1)), sources=sources,
                          classes={f: tuple(table[f]) for f in families},
                          tagger=tagger_presence,
                          weights=f"{loaded.weights.name} sha256:{loaded.weights.digest}",
                          presence_times=LazyCurves(families, lambda f: np.asarray(cols().times, dtype=np.float64)),
                          presence_logits=LazyCurves(families, family_logits))
