"""The pretrained AudioSet tagger's network: EfficientAT's MobileNetV3 at any width.

EfficientAT (Schmid, Koutini, Widmer, ICASSP 2023) distils a transformer ensemble into
MobileNetV3-Large (Howard et al., ICCV 2019) applied to a log-mel "image"
``(batch, 1, 128 mel, frames)``. The releases differ only in width (``mn04`` 0.4 ... ``mn40``
4.0), so the network is built from a state dict's key shapes (:meth:`TaggerShape.from_state_dict`):

- a stem: 3x3 convolution, stride 2, batch norm, Hardswish;
- the 15 inverted residual blocks of MobileNetV3-Large (:data:`MNV3_LARGE`): an optional 1x1
  expansion, a depthwise k x k convolution carrying the block's stride, an optional
  squeeze-excitation over channels (mean over frequency and time, Linear, ReLU, Linear,
  sigmoid: EfficientAT's gate, where torchvision's MobileNetV3 has a Hardsigmoid), a 1x1
  projection without activation; a residual where the shape allows;
- a 1x1 convolution to six times the last block's channels, batch norm, Hardswish;
- the head: mean over frequency and time (the embedding), Linear, Hardswish, Dropout, Linear
  (the logits of AudioSet's 527 classes).

Batch norms use eps 0.001. Kernels and squeeze widths are read from the weights; strides and
activations (which weights do not show) from the MobileNetV3-Large table, and the weights
must agree with the table where they do show it (kernels, where squeeze-excitation sits).

The last feature map ``(C, 4, ceil(frames / 32))`` keeps time at a stride of 32 frames
(0.32 s); :meth:`AudioTagger.columns` applies the head to each of its time columns.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass

import torch
import torch.nn.functional as F  # noqa: N812 (torch's own convention)
from torch import nn

from timingbench.errors import ParameterError

#: Batch-norm epsilon of the pretrained networks.
BN_EPS = 1e-3
#: Squeeze-excitation reduction: the squeeze has a quarter of the block's expanded channels.
SE_REDUCTION = 4
#: Channel counts are multiples of this.
CHANNEL_DIVISOR = 8


@dataclass(frozen=True)
class BlockSpec:
    """One row of the MobileNetV3-Large table at width 1.0.

    Attributes
    ----------
    kernel : int
        Depthwise kernel size.
    expanded, out : int
        Expanded and output channels at width 1.0.
    se : bool
        Whether the block has squeeze-excitation.
    hardswish : bool
        Hardswish (else ReLU) after the expansion and the depthwise convolution.
    stride : int
        Stride of the depthwise convolution (both axes).
    """

    kernel: int
    expanded: int
    out: int
    se: bool
    hardswish: bool
    stride: int


#: MobileNetV3-Large's inverted residual blocks (Howard et al. 2019, Table 1).
MNV3_LARGE: tuple[BlockSpec, ...] = (
    BlockSpec(3, 16, 16, False, False, 1),
    BlockSpec(3, 64, 24, False, False, 2),
    BlockSpec(3, 72, 24, False, False, 1),
    BlockSpec(5, 72, 40, True, False, 2),
    BlockSpec(5, 120, 40, True, False, 1),
    BlockSpec(5, 120, 40, True, False, 1),
    BlockSpec(3, 240, 80, False, True, 2),
    BlockSpec(3, 200, 80, False, True, 1),
    BlockSpec(3, 184, 80, False, True, 1),
    BlockSpec(3, 184, 80, False, True, 1),
    BlockSpec(3, 480, 112, True, True, 1),
    BlockSpec(3, 672, 112, True, True, 1),
    BlockSpec(5, 672, 160, True, True, 2),
    BlockSpec(5, 960, 160, True, True, 1),
    BlockSpec(5, 960, 160, True, True, 1),
)
#: Channels of the stem at width 1.0.
STEM_CHANNELS = 16
#: The last convolution has this many times the last block's channels.
LAST_CONV_FACTOR = 6
#: Hidden units of the head at width 1.0.
HEAD_HIDDEN = 1280
#: AudioSet's classes.
N_CLASSES = 527


def make_divisible(v: float, divisor: int = CHANNEL_DIVISOR) -> int:
    """``v`` rounded to the nearest multiple of ``divisor`` (at least ``divisor``), never
    more than 10 % below ``v`` (MobileNet's channel rounding)."""
    out = max(divisor, int(v + divisor / 2) // divisor * divisor)
    if out < 0.9 * v:
        out += divisor
    return out


@dataclass(frozen=True)
class BlockShape:
    """One inverted residual block as built.

    Attributes
    ----------
    inp, expanded, out : int
        Input, expanded and output channels (``expanded == inp`` means no expansion layer).
    kernel, stride : int
        Depthwise kernel size and stride.
    squeeze : int
        Squeeze-excitation bottleneck channels (0: no squeeze-excitation).
    hardswish : bool
        Activation of the expansion and depthwise layers (else ReLU).
    """

    inp: int
    expanded: int
    out: int
    kernel: int
    stride: int
    squeeze: int
    hardswish: bool

    @property
    def has_expansion(self) -> bool:
        """Whether the block has a 1x1 expansion layer."""
        return self.expanded != self.inp

    @property
    def residual(self) -> bool:
        """Whether the block adds its input to its output."""
        return self.stride == 1 and self.inp == self.out


@dataclass(frozen=True)
class TaggerShape:
    """Architecture of one tagger release.

    Attributes
    ----------
    stem : int
        Channels of the stem convolution.
    blocks : tuple of BlockShape
        The inverted residual blocks.
    last : int
        Channels of the last feature map (the embedding's size).
    hidden : int
        Hidden units of the head.
    n_classes : int
        Outputs (527 AudioSet classes).
    """

    stem: int
    blocks: tuple[BlockShape, ...]
    last: int
    hidden: int
    n_classes: int

    @classmethod
    def for_width(cls, width: float, *, n_classes: int = N_CLASSES) -> TaggerShape:
        """MobileNetV3-Large at a width multiplier (0.4 is mn04, 1.0 mn10, 2.0 mn20, 4.0 mn40)."""
        if not width > 0:
            raise ParameterError(f"width must be positive, got {width!r}")
        stem = make_divisible(STEM_CHANNELS * width)
        blocks, inp = [], stem
        for spec in MNV3_LARGE:
            exp, out = make_divisible(spec.expanded * width), make_divisible(spec.out * width)
            squeeze = make_divisible(exp / SE_REDUCTION) if spec.se else 0
            blocks.append(BlockShape(inp, exp, out, spec.kernel, spec.stride, squeeze, spec.hardswish))
            inp = out
        return cls(stem, tuple(blocks), LAST_CONV_FACTOR * inp, make_divisible(HEAD_HIDDEN * width), n_classes)

    @classmethod
    def from_state_dict(cls, state: Mapping[str, torch.Tensor]) -> TaggerShape:
        """The architecture a state dict's keys and shapes describe.

        Raises
        ------
        ParameterError
            If the keys do not describe MobileNetV3-Large (missing layers, another number of
            blocks, a kernel or a squeeze-excitation where the table has none).
        """

        def shape(key: str) -> tuple[int, ...]:
            try:
                return tuple(state[key].shape)
            except KeyError:
                raise ParameterError(f"the state dict has no {key!r}: not an EfficientAT MobileNet") from None

        n_blocks = len(MNV3_LARGE)
        found = {int(m.group(1)) for k in state if (m := re.match(r"features\.(\d+)\.block\.", k))}
        if found != set(range(1, n_blocks + 1)):
            raise ParameterError(f"the state dict has inverted residual blocks {sorted(found)}, "
                                 f"MobileNetV3-Large has 1..{n_blocks}")
        stem = shape("features.0.0.weight")
        if stem[1:] != (1, 3, 3):
            raise ParameterError(f"the stem convolution has shape {stem}, expected (C, 1, 3, 3)")
        blocks, inp = [], stem[0]
        for i, spec in enumerate(MNV3_LARGE, start=1):
            p = f"features.{i}.block"
            layers = sorted({int(m.group(1)) for k in state if (m := re.match(re.escape(p) + r"\.(\d+)\.", k))})
            se_layers = [j for j in layers if f"{p}.{j}.conc_se_layers.0.fc1.weight" in state]
            first = shape(f"{p}.0.0.weight")
            expanded = first[0] if first[2:] == (1, 1) else inp
            dw = shape(f"{p}.{1 if expanded != inp else 0}.0.weight")
            out = shape(f"{p}.{layers[-1]}.0.weight")[0]
            squeeze = shape(f"{p}.{se_layers[0]}.conc_se_layers.0.fc1.weight")[0] if se_layers else 0
            want = 2 + (expanded != inp) + bool(se_layers)
            if len(layers) != want or dw[1] != 1 or dw[0] != expanded or dw[2] != dw[3]:
                raise ParameterError(f"block {i} has layers {layers} and a depthwise kernel of shape {dw}: "
                                     "not a MobileNetV3 inverted residual")
            if dw[2] != spec.kernel or bool(se_layers) != spec.se:
                raise ParameterError(f"block {i} has a {dw[2]}x{dw[2]} kernel and {'' if se_layers else 'no '}"
                                     f"squeeze-excitation; MobileNetV3-Large's has {spec.kernel}x{spec.kernel} "
                                     f"and {'' if spec.se else 'no '}squeeze-excitation")
            blocks.append(BlockShape(inp, expanded, out, dw[2], spec.stride, squeeze, spec.hardswish))
            inp = out
        last = shape(f"features.{n_blocks + 1}.0.weight")
        hidden = shape("classifier.2.weight")
        classes = shape("classifier.5.weight")
        if last[1:] != (inp, 1, 1) or hidden[1] != last[0] or classes[1] != hidden[0]:
            raise ParameterError(f"the last convolution {last} and the head {hidden}, {classes} do not chain "
                                 f"onto the last block's {inp} channels")
        return cls(stem[0], tuple(blocks), last[0], hidden[0], classes[0])


class _ChannelSE(nn.Module):
    """Squeeze-excitation over channels: mean over frequency and time, Linear, ReLU, Linear, sigmoid."""

    def __init__(self, channels: int, squeeze: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(channels, squeeze)
        self.fc2 = nn.Linear(squeeze, channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = torch.sigmoid(self.fc2(F.relu(self.fc1(x.mean(dim=(2, 3))))))
        return x * s[:, :, None, None]


class _SqueezeExcitation(nn.Module):
    """The squeeze-excitation slot of a block (EfficientAT's key layout: one channel-wise layer)."""

    def __init__(self, channels: int, squeeze: int) -> None:
        super().__init__()
        self.conc_se_layers = nn.ModuleList([_ChannelSE(channels, squeeze)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conc_se_layers[0](x)  # type: ignore[no-any-return]


def _conv_bn(inp: int, out: int, kernel: int, *, stride: int = 1, groups: int = 1, act: nn.Module | None,
             eps: float) -> nn.Sequential:
    layers: list[nn.Module] = [nn.Conv2d(inp, out, kernel, stride=stride, padding=(kernel - 1) // 2, groups=groups,
                                         bias=False),
                               nn.BatchNorm2d(out, eps=eps)]
    if act is not None:
        layers.append(act)
    return nn.Sequential(*layers)


class _InvertedResidual(nn.Module):
    def __init__(self, s: BlockShape, *, eps: float) -> None:
        super().__init__()
        act: type[nn.Module] = nn.Hardswish if s.hardswish else nn.ReLU
        layers: list[nn.Module] = []
        if s.has_expansion:
            layers.append(_conv_bn(s.inp, s.expanded, 1, act=act(), eps=eps))
        layers.append(_conv_bn(s.expanded, s.expanded, s.kernel, stride=s.stride, groups=s.expanded, act=act(),
                               eps=eps))
        if s.squeeze:
            layers.append(_SqueezeExcitation(s.expanded, s.squeeze))
        layers.append(_conv_bn(s.expanded, s.out, 1, act=None, eps=eps))
        self.block = nn.Sequential(*layers)
        self.residual = s.residual

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.block(x)
        return x + y if self.residual else y


class AudioTagger(nn.Module):
    """EfficientAT's MobileNetV3 tagger of one :class:`TaggerShape`.

    Parameters
    ----------
    shape : TaggerShape
    bn_eps : float
        Batch-norm epsilon (the pretrained networks': :data:`BN_EPS`).
    """

    def __init__(self, shape: TaggerShape, *, bn_eps: float = BN_EPS) -> None:
        super().__init__()
        self.shape = shape
        layers: list[nn.Module] = [_conv_bn(1, shape.stem, 3, stride=2, act=nn.Hardswish(), eps=bn_eps)]
        layers += [_InvertedResidual(b, eps=bn_eps) for b in shape.blocks]
        layers.append(_conv_bn(shape.blocks[-1].out, shape.last, 1, act=nn.Hardswish(), eps=bn_eps))
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(1), nn.Linear(shape.last, shape.hidden),
                                        nn.Hardswish(), nn.Dropout(0.0), nn.Linear(shape.hidden, shape.n_classes))

    def head(self, embedding: torch.Tensor) -> torch.Tensor:
        """Logits of embeddings ``(..., C)`` -> ``(..., n_classes)`` (dropout is off at inference)."""
        return self.classifier[5](F.hardswish(self.classifier[2](embedding)))  # type: ignore[no-any-return]

    def forward(self, mel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Whole-input outputs.

        Parameters
        ----------
        mel : torch.Tensor, shape (batch, 1, 128, frames)
            The front end's log-mel (:func:`~timingbench.models.tagger_frontend.log_mel`).

        Returns
        -------
        logits : torch.Tensor, shape (batch, n_classes)
        embedding : torch.Tensor, shape (batch, C)
            The last feature map averaged over frequency and time.
        feature_map : torch.Tensor, shape (batch, C, 4, ceil(frames / 32))
        """
        fmap = self.features(mel)
        emb = fmap.mean(dim=(2, 3))
        return self.head(emb), emb, fmap

    def columns(self, feature_map: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The head applied to each time column of a last feature map.

        Parameters
        ----------
        feature_map : torch.Tensor, shape (batch, C, F, n)

        Returns
        -------
        logits : torch.Tensor, shape (batch, n_classes, n)
        embeddings : torch.Tensor, shape (batch, C, n)
            Each column averaged over frequency.
        """
        emb = feature_map.mean(dim=2)
        return self.head(emb.transpose(1, 2)).transpose(1, 2), emb


_Op = tuple[str, torch.Tensor, torch.Tensor, bool | None, int, int]


def _fold(layer: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    """Weight and bias of a convolution followed by an inference-mode batch norm, as one convolution."""
    conv = typing.cast(nn.Conv2d, typing.cast(nn.Sequential, layer)[0])
    bn = typing.cast(nn.BatchNorm2d, typing.cast(nn.Sequential, layer)[1])
    if bn.running_var is None or bn.running_mean is None:
        raise ParameterError("a batch norm without running statistics cannot be folded")
    scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
    return ((conv.weight * scale[:, None, None, None]).detach().clone(),
            (bn.bias - bn.running_mean * scale).detach().clone())


def _linear(layer: nn.Module) -> tuple[torch.Tensor, torch.Tensor]:
    lin = typing.cast(nn.Linear, layer)
    return lin.weight.detach().clone(), lin.bias.detach().clone()


class FoldedTagger:
    """The inference form of an :class:`AudioTagger`: the same outputs, about three times cheaper.

    Batch norms are folded into the convolutions before them; activations run in place; the
    feature maps are kept channels-last, so each 1x1 convolution is one matrix product over
    the channels and each depthwise convolution reads them without a copy. Outputs match the
    module's to float32 rounding (``tests/test_tagger.py`` checks both against the reference).

    Parameters
    ----------
    model : AudioTagger
        The network to fold (left unchanged).
    """

    def __init__(self, model: AudioTagger) -> None:
        self.shape = model.shape
        f = list(model.features)
        self._stem = _fold(f[0])
        self._blocks: list[tuple[list[_Op], bool]] = []
        for block, spec in zip(f[1:-1], model.shape.blocks, strict=True):
            ops: list[_Op] = []
            for layer in typing.cast(_InvertedResidual, block).block:
                if isinstance(layer, _SqueezeExcitation):
                    se = typing.cast(_ChannelSE, layer.conc_se_layers[0])
                    ops.append(("se", *_linear(se.fc1), None, 0, 0))
                    ops.append(("gate", *_linear(se.fc2), None, 0, 0))
                    continue
                seq = typing.cast(nn.Sequential, layer)
                w, b = _fold(seq)
                act = spec.hardswish if len(seq) > 2 else None
                if typing.cast(nn.Conv2d, seq[0]).groups == 1:
                    ops.append(("pointwise", w[:, :, 0, 0].contiguous(), b, act, 1, 0))
                else:
                    ops.append(("depthwise", w, b, act, spec.stride, (spec.kernel - 1) // 2))
            self._blocks.append((ops, spec.residual))
        w, b = _fold(f[-1])
        self._last = (w[:, :, 0, 0].contiguous(), b)
        self._hidden = _linear(model.classifier[2])
        self._out = _linear(model.classifier[5])

    @staticmethod
    def _act(x: torch.Tensor, hardswish: bool | None) -> torch.Tensor:
        if hardswish is None:
            return x
        return F.hardswish(x, inplace=True) if hardswish else F.relu_(x)

    def features(self, mel: torch.Tensor) -> torch.Tensor:
        """The last feature map ``(batch, C, 4, ceil(frames / 32))`` (channels-last strides)."""
        x = F.conv2d(mel, self._stem[0], self._stem[1], stride=2, padding=1)
        x = F.hardswish(x, inplace=True).permute(0, 2, 3, 1).contiguous()  # (batch, freq, time, channels)
        for ops, residual in self._blocks:
            inp = x
            squeezed = None
            for kind, w, b, act, stride, pad in ops:
                if kind == "pointwise":
                    x = self._act(F.linear(x, w, b), act)
                elif kind == "depthwise":
                    y = F.conv2d(x.permute(0, 3, 1, 2), w, b, stride=stride, padding=pad, groups=w.shape[0])
                    x = self._act(y.permute(0, 2, 3, 1), act)
                elif kind == "se":
                    squeezed = F.relu_(F.linear(x.mean(dim=(1, 2)), w, b))
                elif squeezed is not None:  # the gate, right after its squeeze
                    x = x * torch.sigmoid(F.linear(squeezed, w, b))[:, None, None, :]
            if residual:
                x = x + inp
        x = F.hardswish(F.linear(x, *self._last), inplace=True)
        return x.permute(0, 3, 1, 2)

    def head(self, embedding: torch.Tensor) -> torch.Tensor:
        """Logits of embeddings ``(..., C)`` -> ``(..., n_classes)``."""
        return F.linear(F.hardswish(F.linear(embedding, *self._hidden)), *self._out)

    def __call__(self, mel: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Whole-input outputs, as :meth:`AudioTagger.forward`."""
        fmap = self.features(mel)
        emb = fmap.mean(dim=(2, 3))
        return self.head(emb), emb, fmap

    def columns(self, feature_map: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per-column logits and embeddings, as :meth:`AudioTagger.columns`."""
        emb = feature_map.mean(dim=2)
        return self.head(emb.transpose(1, 2)).transpose(1, 2), emb


def build_tagger(state: Mapping[str, torch.Tensor], *, bn_eps: float = BN_EPS) -> AudioTagger:
    """An :class:`AudioTagger` in inference mode with the weights of ``state``.

    Raises
    ------
    ParameterError
        If the state dict does not describe an EfficientAT MobileNet (see
        :meth:`TaggerShape.from_state_dict`) or a tensor does not fit.
    """
    model = AudioTagger(TaggerShape.from_state_dict(state), bn_eps=bn_eps)
    try:
        model.load_state_dict(dict(state), strict=True)
    except RuntimeError as exc:
        raise ParameterError(f"the state dict does not fit the network it describes ({exc})".splitlines()[0]) from None
    return model.eval()
