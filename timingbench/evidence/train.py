"""Seeded training of the family evidence network (``timingbench evidence train``).

Loss: binary cross-entropy of the presence head against the frame shares of
:func:`~timingbench.evidence.targets.presence_targets`, plus the class-weighted
cross-entropy of the change head against
:func:`~timingbench.evidence.targets.change_targets` (ignored frames excluded). Each
step sees random crops of the training clips, shifted by a random level (the bank's
log-mel is relative to the whole clip's maximum, so a quiet passage sits below 0 dB) and
with random frequency masks. The dev set (training soundfonts, other seed) selects the
epoch whose summed dev loss is lowest; the held-out soundfont is never read here.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import torch

from timingbench.config import Config
from timingbench.evidence.model import CHANGES, FamilyNet, NetShape, n_parameters
from timingbench.evidence.targets import IGNORE, change_targets, presence_targets

if TYPE_CHECKING:
    from timingbench.params.analysis import EvidenceParams


@dataclass(frozen=True)
class TrainParams:
    """Optimiser settings of one training run."""

    epochs: int = 24
    batch: int = 24
    lr: float = 2e-3
    crop_frames: int = 576
    level_shift_db: float = 20.0
    change_weight: float = 1.0
    seed: int = 0
    threads: int = 1
    width: int = 12
    embed: int = 96


def targets_for(labels: npt.NDArray[np.uint8], shape: NetShape,
                evidence: EvidenceParams) -> tuple[Any, Any]:
    """Presence shares and change targets of a batch of label arrays."""
    pres = presence_targets(labels, shape.stride)
    return pres, change_targets_for(pres, shape, evidence)


def change_targets_for(pres: npt.NDArray[np.float32], shape: NetShape,
                       evidence: EvidenceParams) -> npt.NDArray[np.int64]:
    """:func:`~timingbench.evidence.targets.change_targets` with the configured constants
    (``evidence.label_absent_max``, ``label_present_min``, ``label_near_min``)."""
    return change_targets(pres, context=shape.context_frames, guard=shape.guard_frames,
                          absent_max=float(evidence.label_absent_max),
                          present_min=float(evidence.label_present_min),
                          min_context=shape.context_frames // 3, near=2 * shape.guard_frames + 1,
                          near_min=float(evidence.label_near_min))


def shape_from_config(cfg: Config, *, n_mels: int, width: int = 12, embed: int = 96) -> NetShape:
    """The network shape implied by the configuration's stride, context and guard
    (``evidence.frame_stride``, ``evidence.context_s``, ``evidence.guard_s``, ``features.hop``)."""
    ev = cfg.params.evidence
    stride = int(ev.frame_stride)
    out_s = stride * int(cfg.params.features.hop) / 44100.0
    return NetShape(n_mels=n_mels, width=width, embed=embed, stride=stride,
                    context_frames=int(round(float(ev.context_s) / out_s)),
                    guard_frames=int(round(float(ev.guard_s) / out_s)))


def _losses(model: FamilyNet, x: torch.Tensor, pres: torch.Tensor, ch: torch.Tensor,
            cw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    p_logit, c_logit = model(x)
    n = min(p_logit.shape[-1], pres.shape[-1])
    lp = torch.nn.functional.binary_cross_entropy_with_logits(p_logit[..., :n], pres[..., :n])
    logits = c_logit[..., :n].permute(0, 1, 3, 2).reshape(-1, len(CHANGES))
    tgt = ch[..., :n].reshape(-1)
    keep = tgt != IGNORE
    if not bool(keep.any()):
        return lp, torch.zeros((), dtype=lp.dtype)
    lc = torch.nn.functional.cross_entropy(logits[keep], tgt[keep], weight=cw)
    return lp, lc


def train_model(train: tuple[Any, Any], dev: tuple[Any, Any], *, cfg: Config, params: TrainParams,
                log: Callable[[str], None] | None = None) -> tuple[FamilyNet, dict[str, Any]]:
    """Train a :class:`FamilyNet` from ``(logmel, labels)`` arrays; returns it and its training curve.

    Parameters
    ----------
    train, dev : tuple of np.ndarray
        ``logmel`` (n, n_mels, n_frames) float16 and ``labels`` (n, 11, n_frames) uint8.
    cfg : Config
        Reads the ``evidence`` section (targets, stride, context).
    params : TrainParams
        Optimiser settings and the seed.
    log : callable, optional
        Receives one line per epoch (default: stderr).

    Returns
    -------
    model : FamilyNet
        The weights of the epoch with the lowest dev loss, in eval mode.
    curve : dict
        ``epochs``: per epoch ``train_loss``, ``dev_presence_loss``, ``dev_change_loss``,
        ``seconds``; ``best_epoch``; ``parameters``; ``class_weights``.
    """
    say = log or (lambda s: print(s, file=sys.stderr, flush=True))
    torch.manual_seed(params.seed)
    torch.set_num_threads(params.threads)
    rng = np.random.default_rng(params.seed)
    xm, xl = train
    dm, dl = dev
    shape = shape_from_config(cfg, n_mels=int(xm.shape[1]), width=params.width, embed=params.embed)
    model = FamilyNet(shape)
    pres_all, ch_all = targets_for(xl, shape, cfg.params.evidence)
    counts = np.array([(ch_all == k).sum() for k in range(len(CHANGES))], dtype=np.float64)
    cw_np = np.clip(counts.sum() / np.maximum(counts, 1) / len(CHANGES), 0.2, 30.0)
    cw = torch.tensor(cw_np / cw_np.min(), dtype=torch.float32)
    dpres, dch = targets_for(dl, shape, cfg.params.evidence)
    opt = torch.optim.AdamW(model.parameters(), lr=params.lr, weight_decay=1e-4)
    steps = params.epochs * int(np.ceil(len(xm) / params.batch))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=max(steps, 1))
    crop = min(params.crop_frames, xm.shape[-1]) // shape.stride * shape.stride
    curve: dict[str, Any] = {"epochs": [], "parameters": n_parameters(model),
                             "class_weights": dict(zip(CHANGES, [round(float(v), 3) for v in cw], strict=True))}
    best, best_state = np.inf, None
    for epoch in range(params.epochs):
        model.train()
        t0 = time.perf_counter()
        order = rng.permutation(len(xm))
        total = 0.0
        for b0 in range(0, len(order), params.batch):
            idx = order[b0 : b0 + params.batch]
            start = int(rng.integers(0, (xm.shape[-1] - crop) // shape.stride + 1)) * shape.stride
            x = xm[idx, :, start : start + crop].astype(np.float32)
            x = x - rng.uniform(0.0, params.level_shift_db, size=(len(idx), 1, 1)).astype(np.float32)
            x = np.maximum(x, -80.0)
            for i in range(len(idx)):  # one random frequency mask per clip
                if rng.random() < 0.5:
                    w = int(rng.integers(4, 16))
                    f0 = int(rng.integers(0, x.shape[1] - w))
                    x[i, f0 : f0 + w] = -80.0
            j0 = start // shape.stride
            pres = torch.from_numpy(pres_all[idx, :, j0 : j0 + crop // shape.stride])
            ch_t = torch.from_numpy(change_targets_for(pres.numpy(), shape, cfg.params.evidence))
            lp, lc = _losses(model, torch.from_numpy(x), pres, ch_t, cw)
            loss = lp + params.change_weight * lc
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        dlp, dlc = evaluate_loss(model, dm, dpres, dch, cw)
        row = {"epoch": epoch + 1, "train_loss": round(total / len(xm), 4), "dev_presence_loss": round(dlp, 4),
               "dev_change_loss": round(dlc, 4), "seconds": round(time.perf_counter() - t0, 1)}
        curve["epochs"].append(row)
        say(f"  epoch {epoch + 1}/{params.epochs}: train {row['train_loss']:.4f}  dev presence "
            f"{dlp:.4f}  dev change {dlc:.4f}  ({row['seconds']:.0f} s)")
        if dlp + params.change_weight * dlc < best:
            best = dlp + params.change_weight * dlc
            best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            curve["best_epoch"] = epoch + 1
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return model, curve


def evaluate_loss(model: FamilyNet, logmel: Any, pres: Any, ch: Any, cw: torch.Tensor,
                  batch: int = 32) -> tuple[float, float]:
    """Mean presence and change losses of ``model`` over a data set (eval mode, no grad)."""
    model.eval()
    lp_sum = lc_sum = 0.0
    with torch.inference_mode():
        for b0 in range(0, len(logmel), batch):
            x = torch.from_numpy(logmel[b0 : b0 + batch].astype(np.float32))
            lp, lc = _losses(model, x, torch.from_numpy(pres[b0 : b0 + batch]),
                             torch.from_numpy(ch[b0 : b0 + batch]), cw)
            lp_sum += float(lp) * len(x)
            lc_sum += float(lc) * len(x)
    return lp_sum / len(logmel), lc_sum / len(logmel)
