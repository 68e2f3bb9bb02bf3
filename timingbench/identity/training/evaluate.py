"""Held-out evaluation of the family evidence designs on a labelled data set.

Every design answers "did family X enter (leave) at t?" with one score per probe of
:func:`timingbench.identity.training.metrics.probes_from_labels`:

- ``presence_rise``: design (a), frame presence: log-odds rise of the presence from the
  context before to the context after (median after, high percentile before);
- ``change``: design (b), the change head's probability of "entered" ("left") within
  ``evidence.gate_reach_s``;
- ``gate``: what the shipped gate decides on, ``min(change, 1 - quiet side presence)``.

Beside them, the frame-level presence AUC per family (design a read as a tagger: every
output frame, present against absent).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from timingbench.config import Config
from timingbench.identity.rules import array_side_levels, change_near, gate_score
from timingbench.identity.training.metrics import Probe, auc, auc_table, logit, probes_from_labels, round4
from timingbench.identity.training.programs import FAMILIES
from timingbench.identity.training.targets import presence_targets
from timingbench.models.family_net import EvidenceNet
from timingbench.models.family_net_infer import output_times


def predict(model: EvidenceNet, logmel: npt.NDArray[Any], batch: int = 16) -> dict[str, npt.NDArray[np.float64]]:
    """Presence, entered and left probabilities, shape (n_clips, 11, n_out), for a data set."""
    pres, ent, lef = [], [], []
    model.eval()
    with torch.inference_mode():
        for b0 in range(0, len(logmel), batch):
            p, c = model(torch.from_numpy(np.asarray(logmel[b0 : b0 + batch], dtype=np.float32)))
            pres.append(torch.sigmoid(p).double().numpy())
            sm = torch.softmax(c, dim=2).double().numpy()
            ent.append(sm[:, :, 0])
            lef.append(sm[:, :, 1])
    return {"presence": np.concatenate(pres), "entered": np.concatenate(ent), "left": np.concatenate(lef)}


def design_scores(pred: dict[str, npt.NDArray[np.float64]], times: npt.NDArray[np.float64],
                  cfg: Config) -> dict[str, Any]:
    """Score functions of every design over ``pred`` (see module docstring)."""
    ev = cfg.params.evidence
    ctx, guard, pct = float(ev.context_s), float(ev.guard_s), float(ev.quiet_percentile)
    reach = float(ev.gate_reach_s)

    def presence_rise(pr: Probe) -> float | None:
        curve = pred["presence"][pr.clip, FAMILIES.index(pr.family)]
        quiet = "before" if pr.kind == "entry" else "after"
        b, a = array_side_levels(curve, times, pr.time_s, context_s=ctx, guard_s=guard, pct=pct, quiet_side=quiet)
        if b is None or a is None:
            return None
        return logit(a) - logit(b) if pr.kind == "entry" else logit(b) - logit(a)

    def change(pr: Probe) -> float | None:
        key = "entered" if pr.kind == "entry" else "left"
        return change_near(pred[key][pr.clip, FAMILIES.index(pr.family)], times, pr.time_s, reach)

    def gate(pr: Probe) -> float | None:
        k = FAMILIES.index(pr.family)
        changes = pred["entered" if pr.kind == "entry" else "left"][pr.clip, k]
        return gate_score(pred["presence"][pr.clip, k], changes, times, pr.time_s, params=cfg.params.evidence,
                          kind=pr.kind)

    return {"presence_rise": presence_rise, "change": change, "gate": gate}


def evaluate_dataset(models: dict[str, EvidenceNet], logmel: npt.NDArray[Any], labels: npt.NDArray[np.uint8],
                     meta: list[dict[str, Any]], cfg: Config) -> dict[str, Any]:
    """AUC tables of every (model, design) pair on one labelled data set.

    Returns
    -------
    report : dict
        ``tables``: ``"<model>/<design>"`` -> :func:`~timingbench.identity.training.metrics.auc_table`;
        ``n_probes`` by kind and role.
    """
    first = next(iter(models.values()))
    stride = first.shape.stride
    pres_t = presence_targets(labels, stride)
    times = output_times(pres_t.shape[-1], stride=stride, sr=cfg.params.audio.sample_rate_hz,
                         hop=cfg.params.features.hop)
    ev = cfg.params.evidence
    probes = probes_from_labels(pres_t, times, meta, context=first.shape.context_frames,
                                guard=first.shape.guard_frames, absent_max=float(ev.label_absent_max),
                                present_min=float(ev.label_present_min))
    tables: dict[str, Any] = {}
    frame_auc: dict[str, Any] = {}
    for name, model in models.items():
        pred = predict(model, logmel)
        n = min(pred["presence"].shape[-1], times.size)
        pred = {k: v[..., :n] for k, v in pred.items()}
        per = {}
        for k, fam in enumerate(FAMILIES):
            y = pres_t[:, k, :n].reshape(-1) >= 0.5
            s = pred["presence"][:, k, :n].reshape(-1)
            per[fam] = round4(auc(s[y], s[~y]))
        vals = [v for v in per.values() if v is not None]
        frame_auc[name] = {"families": per, "macro": round4(float(np.mean(vals))) if vals else None}
        for design, fn in design_scores(pred, times[:n], cfg).items():
            if name.endswith("presence-only") and design != "presence_rise":
                continue
            tables[f"{name}/{design}"] = auc_table(probes, fn)
    counts: dict[str, int] = {}
    for pr in probes:
        counts[f"{pr.kind}/{pr.role}"] = counts.get(f"{pr.kind}/{pr.role}", 0) + 1
    return {"tables": tables, "n_probes": counts, "frame_presence_auc": frame_auc}
