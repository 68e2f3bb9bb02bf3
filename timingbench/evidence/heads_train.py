"""Training and measuring the family heads on cached tagger columns (``timingbench evidence train-heads``).

Each family's head is an L2-penalised logistic regression on the standardised embedding,
fitted by L-BFGS from a seeded start. The loss is class-balanced per family: positives and
negatives weigh half each, and columns whose label is unknown weigh nothing. All eleven
heads are fitted together as one sum of independent losses (one optimiser run, a
(F, C + 1) parameter matrix). The fit reads only the cached columns
(:mod:`timingbench.evidence.tagger_cache`), so a rebuild takes seconds.

Metrics per family on held-out columns: frame AUC (Mann-Whitney, ties half) and average
precision (the step-wise area under precision-recall, sklearn's definition).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.evidence.metrics import auc, round4
from timingbench.evidence.programs import FAMILIES
from timingbench.evidence.tagger_cache import ColumnSet
from timingbench.evidence_net.tagger_heads import FamilyHeads, head_logits

F64 = npt.NDArray[np.float64]
#: Floor of a standardisation scale (an embedding channel that never varies).
MIN_SCALE = 1e-6


@dataclass(frozen=True)
class FitParams:
    """How the heads are fitted.

    Attributes
    ----------
    l2 : float
        L2 penalty per unit weight (``heads.l2``).
    max_iter : int
        L-BFGS iterations (``heads.max_iter``).
    share : float
        A column is a positive when the family's share exceeds this (``heads.label_present_share``).
    seed : int
        Seed of the starting weights.
    """

    l2: float
    max_iter: int
    share: float
    seed: int


def class_weights(present: npt.NDArray[np.bool_], known: npt.NDArray[np.bool_]) -> F64:
    """Per row and family, the loss weight: positives share 1/2, negatives 1/2, unknown 0.

    Parameters
    ----------
    present, known : np.ndarray of bool, shape (N, F)

    Returns
    -------
    weights : np.ndarray of float64, shape (N, F)

    Raises
    ------
    ParameterError
        If a family has no known positive or no known negative row.
    """
    pos = present & known
    neg = ~present & known
    n_pos, n_neg = pos.sum(axis=0), neg.sum(axis=0)
    bad = [FAMILIES[f] if present.shape[1] == len(FAMILIES) else str(f)
           for f in range(present.shape[1]) if n_pos[f] == 0 or n_neg[f] == 0]
    if bad:
        raise ParameterError(f"no positive or no negative training column for {', '.join(bad)}; train on data "
                             "where every family both sounds and is silent")
    return pos * (0.5 / np.maximum(n_pos, 1)) + neg * (0.5 / np.maximum(n_neg, 1))


def fit_heads(data: ColumnSet, params: FitParams, *, families: tuple[str, ...] = FAMILIES,
              info: dict[str, Any] | None = None) -> FamilyHeads:
    """Fit one class-balanced logistic head per family.

    Parameters
    ----------
    data : ColumnSet
        Training columns (embeddings, shares, known masks).
    params : FitParams
    families : tuple of str
        Names of the label columns, in order.
    info : dict, optional
        Stored in the heads' ``info`` (with the fit's parameters and result added).

    Returns
    -------
    heads : FamilyHeads

    Raises
    ------
    ParameterError
        If the set is empty, the label columns do not match ``families``, or a family has no
        positive or no negative column.
    """
    from scipy.optimize import minimize

    if len(data) == 0:
        raise ParameterError("no training columns")
    if data.shares.shape[1] != len(families):
        raise ParameterError(f"labels have {data.shares.shape[1]} families, expected {len(families)}")
    x = data.embeddings.astype(np.float64)
    mean = x.mean(axis=0)
    scale = np.maximum(x.std(axis=0), MIN_SCALE)
    z = (x - mean) / scale
    y = data.present(params.share).astype(np.float64)
    a = class_weights(data.present(params.share), data.known)
    n_f, n_c = y.shape[1], z.shape[1]
    rng = np.random.default_rng(params.seed)
    theta0 = np.concatenate([rng.normal(0.0, 0.01, (n_f, n_c)), np.zeros((n_f, 1))], axis=1).ravel()
    l2 = float(params.l2)

    def loss(theta: F64) -> tuple[float, F64]:
        t = theta.reshape(n_f, n_c + 1)
        w, b = t[:, :n_c], t[:, n_c]
        s = z @ w.T + b
        # softplus(s) - y s, stable
        val = float(np.sum(a * (np.logaddexp(0.0, s) - y * s))) + 0.5 * l2 * float(np.sum(w * w))
        r = a * (0.5 * (1.0 + np.tanh(0.5 * s)) - y)
        g = np.concatenate([r.T @ z + l2 * w, r.sum(axis=0)[:, None]], axis=1)
        return val, g.ravel()

    res = minimize(loss, theta0, jac=True, method="L-BFGS-B",
                   options={"maxiter": int(params.max_iter), "maxcor": 20, "ftol": 0.0, "gtol": 1e-10})
    t = res.x.reshape(n_f, n_c + 1)
    rec = dict(info or {})
    rec["fit"] = {"l2": l2, "max_iter": int(params.max_iter), "label_present_share": float(params.share),
                  "seed": int(params.seed), "iterations": int(res.nit), "loss": round(float(res.fun), 6),
                  "n_columns": len(data), "positives": {f: int(v) for f, v in
                                                        zip(families, (y * data.known).sum(axis=0), strict=True)}}
    return FamilyHeads(families=tuple(families), mean=mean.astype(np.float32), scale=scale.astype(np.float32),
                       weights=t[:, :n_c].astype(np.float32), bias=t[:, n_c].astype(np.float32), info=rec)


# ----------------------------------------------------------------------------- metrics


def average_precision(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float | None:
    """Average precision: ``sum_k (R_k - R_{k-1}) P_k`` over distinct score thresholds.

    Returns None when there is no positive.
    """
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    n_pos = int(y.sum())
    if n_pos == 0:
        return None
    order = np.argsort(-s, kind="mergesort")
    s, y = s[order], y[order]
    last = np.r_[np.nonzero(np.diff(s))[0], s.size - 1]  # the last row of each distinct score
    tp = np.cumsum(y)[last]
    precision = tp / (last + 1.0)
    recall = tp / n_pos
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def head_metrics(heads: FamilyHeads, data: ColumnSet, *, share: float) -> dict[str, Any]:
    """Per family: frame AUC, average precision, positives and negatives (known columns).

    Returns
    -------
    metrics : dict
        ``families``: family -> ``{"auc", "ap", "n_pos", "n_neg"}`` (AUC and AP None when a
        class is missing); ``macro_auc`` and ``macro_ap`` over families that have both.
    """
    lg = head_logits(data.embeddings.T, heads)
    present = data.present(share)
    out: dict[str, Any] = {}
    for k, fam in enumerate(heads.families):
        m = data.known[:, k]
        pos, neg = lg[k, m & present[:, k]], lg[k, m & ~present[:, k]]
        a = auc(pos, neg)
        out[fam] = {"auc": round4(a), "ap": round4(average_precision(lg[k, m], present[m, k]) if a is not None
                                                   else None), "n_pos": int(pos.size), "n_neg": int(neg.size)}
    aucs = [v["auc"] for v in out.values() if v["auc"] is not None]
    aps = [v["ap"] for v in out.values() if v["ap"] is not None]
    return {"families": out, "macro_auc": round4(float(np.mean(aucs))) if aucs else None,
            "macro_ap": round4(float(np.mean(aps))) if aps else None}


def format_metrics(named: dict[str, dict[str, Any]]) -> str:
    """A text table: one row per family, AUC / AP columns per named metric set."""
    names = list(named)
    head = f"{'family':<11}" + "".join(f"{n[:22]:>24}" for n in names)
    sub = f"{'':<11}" + "".join(f"{'AUC   AP   pos/neg':>24}" for _ in names)
    lines = [head, sub]
    fams = list(next(iter(named.values()))["families"]) if named else []

    def cell(v: dict[str, Any]) -> str:
        if v["auc"] is None:
            return f"{'-':>5} {'-':>5} {v['n_pos']:>5}/{v['n_neg']:<6}"
        return f"{v['auc']:>5.3f} {v['ap']:>5.3f} {v['n_pos']:>5}/{v['n_neg']:<6}"

    for fam in fams:
        lines.append(f"{fam:<11}" + "".join(f"{cell(named[n]['families'][fam]):>24}" for n in names))
    lines.append(f"{'macro':<11}" + "".join(
        f"{(str(named[n]['macro_auc']) + ' ' + str(named[n]['macro_ap'])):>24}" for n in names))
    return "\n".join(lines)


# ----------------------------------------------------------------------------- the command


def build_heads(data: list[Path], real: Path | None, *, config: Config, seed: int, dev: list[Path] | None = None,
                l2: float | None = None, cache: Path | None = None) -> FamilyHeads:
    """Fit the heads on make-data folders plus the real corpus's dev split; measure held out.

    Parameters
    ----------
    data : list of Path
        make-data folders rendered with ``--tagger`` (training soundfonts only).
    real : Path or None
        The real corpus rendered with ``--stems``; its ``dev`` rows are trained on, its
        ``validation`` rows only measured. None trains on the renders alone.
    config : Config
        ``tagger``, ``heads``, ``evidence`` and ``features`` sections.
    seed : int
        Seed of the fit.
    dev : list of Path, optional
        make-data folders of another seed, measured only.
    l2 : float, optional
        Penalty instead of ``heads.l2`` (for choosing it on ``dev``).
    cache : Path, optional
        Folder of the real corpus's column cache (default: the corpus folder).

    Returns
    -------
    heads : FamilyHeads
        ``info`` records the data (recipes, seeds, sound sets; no paths, so the same data
        give the same file), the tagger weights, the fit, and ``metrics`` per held-out set.

    Raises
    ------
    ParameterError
        If a folder is of another recipe, was rendered with the held-out soundfont, lacks
        tagger columns, or the real corpus lacks stems.
    """
    from timingbench.evidence.dataset import training_sources
    from timingbench.evidence.tagger_cache import concat, real_columns, render_columns
    from timingbench.evidence_net.tagger import tagger_for

    hp = config.params.heads
    dev = list(dev or [])
    sources = training_sources([*data, *dev])
    train_sets = [render_columns(f, config=config) for f in data]
    real_dev = None if real is None else real_columns(real, split="dev", config=config, cache=cache)
    params = FitParams(l2=float((hp.l2 or 0.0) if l2 is None else l2), max_iter=int(hp.max_iter),
                       share=float(hp.label_present_share), seed=int(seed))

    def record(src: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in src.items() if k != "folder"}

    info = {"licence": "MIT (timingbench); trained on renders of the sound sets listed in data and on the real "
                       "corpus's dev recordings, whose licences timingbench/data/tagger/PROVENANCE.md lists",
            "tagger": tagger_for(config.params.tagger).weights.disclosure(),
            "data": [record(s) for s in sources[:len(data)]],
            "real": None if real_dev is None else {"split": "dev", "clips": int(real_dev.clip.max()) + 1,
                                                   "columns": len(real_dev)},
            "config_version": config.version}
    heads = fit_heads(concat([*train_sets, *([] if real_dev is None else [real_dev])]), params, info=info)
    metrics: dict[str, Any] = {}
    for f, src in zip(dev, sources[len(data):], strict=True):
        metrics[f"make-data seed {src['seed']}"] = head_metrics(heads, render_columns(f, config=config),
                                                                share=params.share)
    if real is not None:
        metrics["real validation"] = head_metrics(heads, real_columns(real, split="validation", config=config,
                                                                      cache=cache), share=params.share)
    heads.info["metrics"] = metrics
    return heads
