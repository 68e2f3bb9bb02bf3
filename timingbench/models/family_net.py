"""The family evidence network.

A small convolutional-recurrent-free network on the feature bank's log-mel (128 mel bands,
512-sample hop at 44.1 kHz), trained from scratch. Two heads share one trunk:

- **presence** (design a/c): per output frame (every ``stride`` bank frames, 46.4 ms) and
  family, the log-odds that the family sounds;
- **change** (design b): per output frame and family, the log-odds of three answers to
  "against the ``context_s`` before this frame, did the family enter / leave / neither
  in the ``context_s`` after it?" The head reads the trunk's embeddings pooled over the
  context before and after the frame (``guard_s`` left out either side), as
  ``[after, after - before]``.

Input log-mels are dB re the clip maximum in ``[-db_range, 0]`` (``features.db_range``,
recorded in the shape); the network scales them to about ``[-1, 1]`` itself, so what it
sees is gain-invariant like the bank.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from timingbench.families import FAMILY_NAMES as FAMILIES

#: Answers of the change head, in output order.
CHANGES = ("entered", "left", "none")


@dataclass(frozen=True)
class NetShape:
    """Architecture of :class:`FamilyNet` (stored beside the weights)."""

    n_mels: int = 128
    n_families: int = len(FAMILIES)
    width: int = 12
    embed: int = 96
    stride: int = 4
    context_frames: int = 65  # output frames in the before/after context (3 s at 46.4 ms)
    guard_frames: int = 5  # output frames left out either side (0.25 s)
    #: dB range of the input log-mel (the bank's ``features.db_range`` it was trained on).
    #: None only in weights files written before it was recorded; :func:`load_weights`
    #: fills it in from the configuration.
    db_range: float | None = None
    #: Mel bands averaged before the first conv block (2: 64 bands; 1: all 128, twice the
    #: frequency resolution at about twice the trunk's cost).
    mel_pool: int = 2

    def as_dict(self) -> dict[str, Any]:
        """Plain dict for the weights file."""
        return {k: (None if v is None else float(v) if k == "db_range" else int(v)) for k, v in asdict(self).items()}


def _block(cin: int, cout: int, pool: tuple[int, int]) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.MaxPool2d(pool))


class FamilyNet(nn.Module):
    """Trunk plus presence and change heads (see module docstring)."""

    def __init__(self, shape: NetShape | None = None) -> None:
        super().__init__()
        s = shape or NetShape()
        self.shape = s
        w = s.width
        if s.stride != 4 or s.mel_pool not in (1, 2) or s.n_mels % (16 * s.mel_pool):
            raise ValueError("FamilyNet needs stride 4, mel_pool 1 or 2 and n_mels divisible by 16 * mel_pool")
        if s.db_range is None or s.db_range <= 0:
            raise ValueError(f"FamilyNet needs the input's positive dB range, got {s.db_range}")
        self._half_range = float(s.db_range) / 2.0
        self.conv = nn.Sequential(nn.AvgPool2d((s.mel_pool, 1)), _block(1, w, (2, 2)), _block(w, 2 * w, (2, 2)),
                                  _block(2 * w, 4 * w, (2, 1)), _block(4 * w, 4 * w, (2, 1)))
        bins = s.n_mels // (16 * s.mel_pool)
        self.proj = nn.Sequential(nn.Conv1d(4 * w * bins, s.embed, 1), nn.ReLU())
        self.tcn = nn.ModuleList([nn.Conv1d(s.embed, s.embed, 5, padding=2 * d, dilation=d) for d in (1, 2, 4)])
        self.presence = nn.Conv1d(s.embed, s.n_families, 1)
        self.change = nn.Sequential(nn.Conv1d(2 * s.embed, s.embed, 1), nn.ReLU(),
                                    nn.Conv1d(s.embed, s.n_families * len(CHANGES), 1))

    def embed(self, logmel: torch.Tensor) -> torch.Tensor:
        """Trunk embeddings, shape (batch, embed, n_frames // stride)."""
        x = (logmel.float() + self._half_range) / self._half_range
        x = self.conv(x.unsqueeze(1))
        b, c, f, t = x.shape
        h = self.proj(x.reshape(b, c * f, t))
        for conv in self.tcn:
            h = h + torch.relu(conv(h))
        return h

    def context_pool(self, h: torch.Tensor) -> torch.Tensor:
        """``[after, after - before]`` context means of the embeddings at every frame."""
        s = self.shape
        n = h.shape[-1]
        c = torch.nn.functional.pad(torch.cumsum(h, dim=-1), (1, 0))
        idx = torch.arange(n, device=h.device)

        def mean(lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:
            lo, hi = lo.clamp(0, n), hi.clamp(0, n)
            cnt = (hi - lo).clamp(min=1).to(h.dtype)
            return (c[..., hi] - c[..., lo]) / cnt

        before = mean(idx - s.guard_frames - s.context_frames, idx - s.guard_frames)
        after = mean(idx + s.guard_frames + 1, idx + s.guard_frames + 1 + s.context_frames)
        return torch.cat([after, after - before], dim=1)

    def forward(self, logmel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Presence logits (batch, families, T') and change logits (batch, families, 3, T')."""
        h = self.embed(logmel)
        pres = self.presence(h)
        ch = self.change(self.context_pool(h))
        b, _, t = ch.shape
        return pres, ch.reshape(b, self.shape.n_families, len(CHANGES), t)


class Ensemble(nn.Module):
    """Several :class:`FamilyNet` of one output geometry (stride, context, guard) read as one:
    the mean of their presence logits and of their change logits."""

    def __init__(self, members: list[FamilyNet]) -> None:
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one network")
        geo = {(m.shape.stride, m.shape.context_frames, m.shape.guard_frames, m.shape.n_mels) for m in members}
        if len(geo) != 1:
            raise ValueError(f"ensemble members differ in stride, context, guard or bands: {sorted(geo)}")
        self.members = nn.ModuleList(members)
        self.shape = members[0].shape

    def forward(self, logmel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean presence logits and mean change logits of the members."""
        outs = [m(logmel) for m in self.members]
        return (torch.stack([o[0] for o in outs]).mean(dim=0), torch.stack([o[1] for o in outs]).mean(dim=0))


#: What evaluation runs: one network or an ensemble of them.
EvidenceNet = FamilyNet | Ensemble


def n_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def save_weights(model: FamilyNet, path: Any, *, meta: dict[str, Any]) -> None:
    """Write the weights, the architecture and ``meta`` (licence, recipe digest, metrics) to ``path``."""
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    torch.save({"format": "timingbench-family-evidence-1", "shape": model.shape.as_dict(),
                "families": list(FAMILIES), "changes": list(CHANGES), "state": state, "meta": meta}, path)


def load_weights(path: Any, *, db_range: float | None = None) -> tuple[FamilyNet, dict[str, Any]]:
    """Load a weights file written by :func:`save_weights` (CPU, eval mode).

    ``db_range`` (dB) stands in for a file that does not record its input range; by
    default that is the packaged configuration's ``features.db_range``.
    """
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if blob.get("format") != "timingbench-family-evidence-1":
        raise ValueError(f"{path}: not a timingbench family evidence weights file")
    if list(blob["families"]) != list(FAMILIES):
        raise ValueError(f"{path}: trained for families {blob['families']}, expected {list(FAMILIES)}")
    shape = dict(blob["shape"])
    if shape.get("db_range") is None:
        if db_range is None:
            from timingbench.config import load_config

            db_range = float(load_config(None).params.features.db_range)
        shape["db_range"] = float(db_range)
    model = FamilyNet(NetShape(**shape))
    model.load_state_dict(blob["state"])
    model.eval()
    return model, dict(blob["meta"])
