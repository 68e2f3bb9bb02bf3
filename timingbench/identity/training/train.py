"""Seeded, resumable training of the family evidence network (``timingbench evidence train``).

Loss: binary cross-entropy of the presence head against the frame shares of
:func:`~timingbench.identity.training.targets.presence_targets`, plus the class-weighted
cross-entropy of the change head against
:func:`~timingbench.identity.training.targets.change_targets` (ignored frames excluded). Each
step sees random crops of the training clips, shifted by a random level (the bank's
log-mel is relative to the whole clip's maximum, so a quiet passage sits below 0 dB) and
with random frequency masks. The dev set (training soundfonts, other seed) selects the
epoch whose summed dev loss is lowest; the held-out soundfont is never read here.

Data come as an :class:`~timingbench.identity.training.arrays.ArraySet` (memory-mapped arrays
written once by ``make-data`` / ``cache-arrays``). Every random draw of an epoch (batch
order, crops, level shifts, masks) is made up front from one seeded generator; a
background thread assembles the next batch from those draws while torch trains on the
current one, so the result does not depend on the thread's timing.

After every epoch a checkpoint holds the model, optimiser and scheduler states, the
random generators' states (numpy, torch, python), the epoch, the best-so-far weights and
the curve; :func:`train_model` given it continues the run exactly where it stopped (same
torch thread count: reductions may sum in another order on another count).
"""

from __future__ import annotations

import pickle
import random
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import numpy.typing as npt
import torch

from timingbench.config import Config
from timingbench.errors import ParameterError
from timingbench.identity.training.arrays import ArraySet, TargetParams
from timingbench.identity.training.metrics import auc
from timingbench.identity.training.programs import FAMILIES
from timingbench.identity.training.targets import IGNORE
from timingbench.models.family_net import CHANGES, FamilyNet, NetShape, n_parameters

if TYPE_CHECKING:
    pass

#: Format tag of a training checkpoint.
CHECKPOINT_FORMAT = "timingbench-evidence-checkpoint-1"
#: Settings that may differ between a run and its resumption (they change no result).
RESUMABLE_CHANGES = ("stop_after", "prefetch")


@dataclass(frozen=True)
class TrainParams:
    """Optimiser settings of one training run.

    ``threads`` is torch's intra-op thread count; ``prefetch`` assembles the next batch
    on a background thread; ``stop_after`` ends this sitting after that epoch (the
    checkpoint continues it).
    """

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
    mel_pool: int = 2
    prefetch: bool = True
    stop_after: int | None = None


def shape_from_config(cfg: Config, *, n_mels: int, width: int = 12, embed: int = 96, mel_pool: int = 2) -> NetShape:
    """The network shape implied by the configuration's stride, context, guard and log-mel
    range (``evidence.frame_stride``, ``context_s``, ``guard_s``, ``features.hop``,
    ``features.db_range``)."""
    tp = TargetParams.from_config(cfg)
    return NetShape(n_mels=n_mels, width=width, embed=embed, stride=tp.stride, context_frames=tp.context_frames,
                    guard_frames=tp.guard_frames, mel_pool=mel_pool,
                    db_range=float(cfg.params.features.db_range))


def _losses(model: FamilyNet, x: torch.Tensor, pres: torch.Tensor, ch: torch.Tensor,
            cw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    p_logit, c_logit = model(x)
    n = min(p_logit.shape[-1], pres.shape[-1])
    lp = torch.nn.functional.binary_cross_entropy_with_logits(p_logit[..., :n], pres[..., :n])
    logits = c_logit[..., :n].permute(0, 1, 3, 2).reshape(-1, len(CHANGES))
    tgt = ch[..., :n].reshape(-1)
    keep = tgt != IGNORE
    if not bool(keep.any()):
        return lp, torch.zeros((), dtype=lp.dtype), p_logit[..., :n]
    lc = torch.nn.functional.cross_entropy(logits[keep], tgt[keep], weight=cw)
    return lp, lc, p_logit[..., :n]


@dataclass(frozen=True)
class _Draw:
    """The random draws of one batch."""

    idx: npt.NDArray[np.int64]
    start: int
    shift: npt.NDArray[np.float32]
    masks: list[tuple[int, int, int]]  # (clip in batch, first band, width)


def _plan_epoch(rng: np.random.Generator, n: int, *, batch: int, crop: int, n_frames: int, n_mels: int,
                stride: int, shift_db: float) -> list[_Draw]:
    """Every random draw of one epoch, in one fixed order."""
    order = rng.permutation(n)
    plan = []
    for b0 in range(0, n, batch):
        idx = order[b0 : b0 + batch]
        start = int(rng.integers(0, (n_frames - crop) // stride + 1)) * stride
        shift = rng.uniform(0.0, shift_db, size=(len(idx), 1, 1)).astype(np.float32)
        masks = []
        for i in range(len(idx)):  # one random frequency mask per clip, half of the time
            if rng.random() < 0.5:
                w = int(rng.integers(4, 16))
                masks.append((i, int(rng.integers(0, n_mels - w)), w))
        plan.append(_Draw(idx=idx, start=start, shift=shift, masks=masks))
    return plan


def _assemble(data: ArraySet, d: _Draw, *, crop: int, floor: float,
              tp: TargetParams) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Input crop and targets of one batch, from its draws."""
    x = data.take(0, d.idx, slice(d.start, d.start + crop)).astype(np.float32)
    x = x - d.shift
    x = np.maximum(x, floor)
    for i, f0, w in d.masks:
        x[i, f0 : f0 + w] = floor
    j0 = d.start // tp.stride
    pres = data.take(2, d.idx, slice(j0, j0 + crop // tp.stride)).astype(np.float32)
    return torch.from_numpy(x), torch.from_numpy(pres), torch.from_numpy(tp.change(pres))


def class_weights(data: ArraySet) -> torch.Tensor:
    """Change-head class weights: inverse frequencies over the training set, clipped to
    [0.2, 30] and scaled so the smallest is 1."""
    counts = data.counts(len(CHANGES))
    cw = np.clip(counts.sum() / np.maximum(counts, 1) / len(CHANGES), 0.2, 30.0)
    return torch.tensor(cw / cw.min(), dtype=torch.float32)


def _rng_state(rng: np.random.Generator) -> dict[str, Any]:
    return {"numpy": rng.bit_generator.state, "torch": torch.get_rng_state(), "python": random.getstate()}


def _set_rng_state(rng: np.random.Generator, state: dict[str, Any]) -> None:
    rng.bit_generator.state = state["numpy"]
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint written by :func:`train_model`.

    Raises
    ------
    ParameterError
        If the file is missing, unreadable or not a training checkpoint.
    """
    try:
        blob = torch.load(path, map_location="cpu", weights_only=False)
    except (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError) as exc:
        raise ParameterError(f"{path}: cannot read the training checkpoint ({exc})") from None
    if not isinstance(blob, dict) or blob.get("format") != CHECKPOINT_FORMAT:
        raise ParameterError(f"{path}: not a timingbench evidence training checkpoint")
    return blob


def _check_resume(ck: dict[str, Any], params: TrainParams, data_key: dict[str, Any], path: Path) -> None:
    old = {k: v for k, v in ck["params"].items() if k not in RESUMABLE_CHANGES}
    new = {k: v for k, v in asdict(params).items() if k not in RESUMABLE_CHANGES}
    diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    if diff:
        raise ParameterError(f"{path}: the checkpoint's run had other settings ({', '.join(diff)}: "
                             + ", ".join(f"{k} {old.get(k)!r}" for k in diff) + "); resume with the same ones")
    if ck["data"] != data_key:
        raise ParameterError(f"{path}: the checkpoint's run trained on other data ({ck['data']}, "
                             f"not {data_key})")


def train_model(train: ArraySet, dev: ArraySet, *, cfg: Config, params: TrainParams,
                checkpoint: Path | None = None, resume: Path | None = None,
                log: Callable[[str], None] | None = None,
                progress: Callable[[int, int, int, int, dict[str, Any] | None], None] | None = None,
                ) -> tuple[FamilyNet, dict[str, Any], bool]:
    """Train a :class:`FamilyNet`; returns it, its training curve and whether the run is complete.

    Parameters
    ----------
    train, dev : ArraySet
        Training clips and model-selection clips.
    cfg : Config
        Reads the ``evidence`` section (targets, stride, context) and ``features.db_range``.
    params : TrainParams
        Optimiser settings and the seed.
    checkpoint : Path, optional
        Written after every epoch (the state to continue from).
    resume : Path, optional
        A checkpoint of the same run (same settings and data) to continue.
    log : callable, optional
        Receives one line per epoch (default: stderr).
    progress : callable, optional
        ``progress(epoch, epochs, batch, n_batches, row)`` after every batch (``row`` None)
        and every epoch (``row`` the epoch's curve row).

    Returns
    -------
    model : FamilyNet
        The weights of the epoch with the lowest dev loss so far, in eval mode.
    curve : dict
        ``epochs``: per epoch ``train_loss``, ``dev_presence_loss``, ``dev_change_loss``,
        ``dev_auc`` (frame-level presence AUC, macro over families), ``seconds``;
        ``best_epoch``; ``parameters``; ``class_weights``.
    complete : bool
        False when ``params.stop_after`` ended the sitting before ``params.epochs``.

    Raises
    ------
    ParameterError
        If ``resume`` is not a checkpoint of this run.
    """
    say = log or (lambda s: print(s, file=sys.stderr, flush=True))
    torch.manual_seed(params.seed)
    random.seed(params.seed)
    torch.set_num_threads(params.threads)
    rng = np.random.default_rng(params.seed)
    tp = TargetParams.from_config(cfg)
    shape = shape_from_config(cfg, n_mels=train.n_mels, width=params.width, embed=params.embed,
                              mel_pool=params.mel_pool)
    floor = -float(cast(float, shape.db_range))
    model = FamilyNet(shape)
    cw = class_weights(train)
    opt = torch.optim.AdamW(model.parameters(), lr=params.lr, weight_decay=1e-4)
    n_batches = int(np.ceil(len(train) / params.batch))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=params.lr, total_steps=max(params.epochs * n_batches, 1))
    crop = min(params.crop_frames, train.n_frames) // shape.stride * shape.stride
    data_key = {"n_train": len(train), "n_dev": len(dev), "n_frames": train.n_frames, "n_mels": train.n_mels}
    curve: dict[str, Any] = {"epochs": [], "parameters": n_parameters(model),
                             "class_weights": dict(zip(CHANGES, [round(float(v), 3) for v in cw], strict=True))}
    best, best_state, first = np.inf, None, 0
    if resume is not None:
        ck = load_checkpoint(resume)
        _check_resume(ck, params, data_key, resume)
        model.load_state_dict(ck["model"])
        opt.load_state_dict(ck["optimizer"])
        sched.load_state_dict(ck["scheduler"])
        _set_rng_state(rng, ck["rng"])
        best, best_state, curve, first = ck["best"], ck["best_state"], ck["curve"], int(ck["epoch"])
        say(f"  resuming after epoch {first}/{params.epochs} from {resume}")
    last = params.epochs if params.stop_after is None else min(params.epochs, max(params.stop_after, first))
    pool = ThreadPoolExecutor(max_workers=1) if params.prefetch else None
    try:
        for epoch in range(first, last):
            model.train()
            t0 = time.perf_counter()
            plan = _plan_epoch(rng, len(train), batch=params.batch, crop=crop, n_frames=train.n_frames,
                               n_mels=train.n_mels, stride=shape.stride, shift_db=params.level_shift_db)

            def make(d: _Draw) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
                return _assemble(train, d, crop=crop, floor=floor, tp=tp)

            pending = pool.submit(make, plan[0]) if pool else None
            total = 0.0
            for k, d in enumerate(plan):
                x, pres, ch_t = pending.result() if pending is not None else make(d)
                if pool is not None and k + 1 < len(plan):
                    pending = pool.submit(make, plan[k + 1])
                lp, lc, _ = _losses(model, x, pres, ch_t, cw)
                loss = lp + params.change_weight * lc
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                total += float(loss.detach()) * len(d.idx)
                if progress is not None:
                    progress(epoch + 1, params.epochs, k + 1, len(plan), None)
            dlp, dlc, dauc = evaluate_loss(model, dev, cw, tp)
            row = {"epoch": epoch + 1, "train_loss": round(total / len(train), 4), "dev_presence_loss": round(dlp, 4),
                   "dev_change_loss": round(dlc, 4), "dev_auc": dauc, "seconds": round(time.perf_counter() - t0, 1)}
            curve["epochs"].append(row)
            say(f"  epoch {epoch + 1}/{params.epochs}: train {row['train_loss']:.4f}  dev presence "
                f"{dlp:.4f}  dev change {dlc:.4f}  dev AUC {dauc}  ({row['seconds']:.0f} s)")
            if dlp + params.change_weight * dlc < best:
                best = dlp + params.change_weight * dlc
                best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                curve["best_epoch"] = epoch + 1
            if progress is not None:
                progress(epoch + 1, params.epochs, len(plan), len(plan), row)
            if checkpoint is not None:
                _save_checkpoint(checkpoint, model=model, opt=opt, sched=sched, rng=rng, params=params,
                                 data_key=data_key, epoch=epoch + 1, best=best, best_state=best_state, curve=curve)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return model, curve, last >= params.epochs


def _save_checkpoint(path: Path, *, model: FamilyNet, opt: Any, sched: Any, rng: np.random.Generator,
                     params: TrainParams, data_key: dict[str, Any], epoch: int, best: float,
                     best_state: dict[str, Any] | None, curve: dict[str, Any]) -> None:
    """Write the state after ``epoch`` atomically (a killed write leaves the previous one)."""
    blob = {"format": CHECKPOINT_FORMAT, "params": asdict(params), "shape": model.shape.as_dict(),
            "data": data_key, "epoch": epoch, "model": model.state_dict(), "optimizer": opt.state_dict(),
            "scheduler": sched.state_dict(), "rng": _rng_state(rng), "best": best, "best_state": best_state,
            "curve": curve}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(blob, tmp)
    tmp.replace(path)


def evaluate_loss(model: FamilyNet, data: ArraySet, cw: torch.Tensor, tp: TargetParams,
                  batch: int = 32) -> tuple[float, float, float | None]:
    """Mean presence and change losses of ``model`` over a data set (eval mode, no grad), and
    the frame-level presence AUC (present share >= 0.5 against below), macro over families."""
    model.eval()
    lp_sum = lc_sum = 0.0
    scores: list[list[npt.NDArray[np.float32]]] = [[] for _ in FAMILIES]
    truth: list[list[npt.NDArray[np.bool_]]] = [[] for _ in FAMILIES]
    with torch.inference_mode():
        for b0 in range(0, len(data), batch):
            idx = np.arange(b0, min(b0 + batch, len(data)))
            x = torch.from_numpy(data.take(0, idx).astype(np.float32))
            pres = data.take(2, idx).astype(np.float32)
            ch = data.take(3, idx).astype(np.int64)
            lp, lc, logit = _losses(model, x, torch.from_numpy(pres), torch.from_numpy(ch), cw)
            lp_sum += float(lp) * len(idx)
            lc_sum += float(lc) * len(idx)
            n = logit.shape[-1]
            for k in range(len(FAMILIES)):
                scores[k].append(logit[:, k].numpy().reshape(-1))
                truth[k].append(pres[:, k, :n].reshape(-1) >= 0.5)
    aucs = []
    for s_list, y_list in zip(scores, truth, strict=True):
        s, y = np.concatenate(s_list), np.concatenate(y_list)
        a = auc(s[y], s[~y])
        if a is not None:
            aucs.append(a)
    return lp_sum / len(data), lc_sum / len(data), (round(float(np.mean(aucs)), 4) if aucs else None)


def plot_curve(curve: dict[str, Any], path: Path) -> None:
    """Write the training curve (losses and dev AUC per epoch) as a PNG (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = curve["epochs"]
    ep = [r["epoch"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    a.plot(ep, [r["train_loss"] for r in rows], label="train loss")
    a.plot(ep, [r["dev_presence_loss"] for r in rows], label="dev presence loss")
    a.plot(ep, [r["dev_change_loss"] for r in rows], label="dev change loss")
    if curve.get("best_epoch"):
        a.axvline(curve["best_epoch"], color="grey", ls=":", label=f"best epoch {curve['best_epoch']}")
    a.set_xlabel("epoch")
    a.set_ylabel("loss")
    a.legend(fontsize=8)
    b.plot(ep, [r.get("dev_auc") if r.get("dev_auc") is not None else np.nan for r in rows], color="C3")
    b.set_xlabel("epoch")
    b.set_ylabel("dev frame presence AUC (macro)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
