"""The pretrained musicnn MagnaTagATune tagger (Pons & Serra), ported to torch.

The weights (``timingbench/data/musicnn/mtt_musicnn.npz``, ISC licence beside them) were
converted once from the ``MTT_musicnn`` checkpoint of the ``musicnn`` 0.1.0 package by
``tools/convert_musicnn.py``; ``tests/test_musicnn.py`` checks that this port reproduces
the original TensorFlow graph's tag probabilities within 1e-4.

Architecture (``musicnn/models.py``, ``build_musicnn`` with 1.6x front-end filters, 64
mid-end filters, 200 back-end units):

- front end on a batch-normalised (n, 187, 96) log-mel patch: two timbral blocks
  (7 x 38 and 7 x 67 kernels, 204 filters each, time zero-padded by 3) and three temporal
  blocks (128 x 1, 64 x 1, 32 x 1 kernels, 51 filters each, TensorFlow ``same`` padding);
  each block is conv -> ReLU -> batch norm -> max over frequency; concatenated to 561
  channels;
- mid end: three 7-frame 1-D convolutions (64 filters; conv -> ReLU -> batch norm), the
  second and third with residual connections; the front-end output and the three mid-end
  outputs are concatenated to 753 channels;
- back end: max and mean over time, interleaved (``[max_0, mean_0, max_1, ...]``, the
  order of TensorFlow's concat + flatten) to 1506 values -> batch norm -> dense 200 ->
  ReLU -> batch norm -> dense 50 -> sigmoid.

Every batch norm runs in inference mode with its moving statistics (epsilon 1e-3,
TensorFlow's default, as in the shipped graph).

Preprocessing (``musicnn/extractor.py``, ``batch_data``): 16 kHz mono, power mel
spectrogram with librosa's defaults of the training era (n_fft 512, hop 256, periodic
Hann window, centred frames with reflect padding, 96 Slaney-normalised Slaney-scale mel
bands from 0 Hz to 8 kHz), cast to float16, then ``log10(10000 x + 1)``; 187-frame
(about 3 s) patches. These are properties of the trained model, not tunable thresholds,
so they live here and not in the configuration.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from timingbench.errors import ModelUnavailableError, ParameterError
from timingbench.memo import process_cache

if TYPE_CHECKING:
    import torch

#: Sample rate the model was trained on (Hz).
MODEL_SR = 16000
#: STFT size and hop (samples at MODEL_SR).
N_FFT = 512
HOP = 256
#: Mel bands.
N_MELS = 96
#: Frames per input patch (``librosa.time_to_frames(3 s) + 1``).
N_FRAMES = 187
#: Batch-norm epsilon of ``tf.compat.v1.layers.batch_normalization``.
BN_EPS = 1e-3

#: Time padding (top, bottom) of the five front-end blocks: the timbral blocks pad by 3
#: rows; the temporal blocks use TensorFlow 'same' padding of an even kernel (one more
#: row at the end).
_PADS = ((3, 3), (3, 3), (63, 64), (31, 32), (15, 16))

#: The packaged weights.
WEIGHTS_PATH = Path(__file__).resolve().parent.parent / "data" / "musicnn" / "mtt_musicnn.npz"


@process_cache(maxsize=1)
def _mel_basis() -> npt.NDArray[np.float32]:
    import librosa

    basis = librosa.filters.mel(sr=MODEL_SR, n_fft=N_FFT, n_mels=N_MELS, htk=False, norm="slaney")
    return np.asarray(basis, dtype=np.float32)


def resample_to_model(samples: npt.ArrayLike, *, sr: int) -> npt.NDArray[np.float32]:
    """Resample mono audio to the model's 16 kHz.

    musicnn itself used ``librosa.load`` (resampy ``kaiser_best`` at the time); here the
    band-limited soxr ``VHQ`` resampler is used, an equally high-quality choice whose
    differences lie far below the model's sensitivity.

    Parameters
    ----------
    samples : array_like of float, shape (n,)
        Mono audio.
    sr : int
        Its sample rate in Hz.

    Returns
    -------
    y : np.ndarray of float32, shape (m,)
        Audio at 16 kHz.

    Raises
    ------
    ParameterError
        If the audio is not one-dimensional or ``sr`` is not positive.
    """
    y = np.asarray(samples, dtype=np.float32)
    if y.ndim != 1:
        raise ParameterError(f"samples must be mono with shape (n,), got shape {y.shape}")
    if int(sr) != sr or sr <= 0:
        raise ParameterError(f"sr must be a positive whole number of Hz, got {sr!r}")
    if sr == MODEL_SR:
        return y
    import soxr

    return np.asarray(soxr.resample(y, int(sr), MODEL_SR, quality="VHQ"), dtype=np.float32)


def log_mel(y16k: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """musicnn's input representation of 16 kHz audio.

    Parameters
    ----------
    y16k : array_like of float, shape (n,)
        Mono audio at 16 kHz.

    Returns
    -------
    logmel : np.ndarray of float32, shape (n_frames, 96)
        ``log10(10000 * float16(mel_power) + 1)``; frame ``k`` is centred on
        ``k * 256 / 16000`` s.

    Raises
    ------
    ParameterError
        If the audio is not one-dimensional, is shorter than one FFT, or is not finite.
    """
    y = np.asarray(y16k, dtype=np.float32)
    if y.ndim != 1:
        raise ParameterError(f"audio must be mono with shape (n,), got shape {y.shape}")
    if y.size <= N_FFT // 2:
        raise ParameterError(f"audio has {y.size} samples; musicnn needs more than {N_FFT // 2}")
    if not np.all(np.isfinite(y)):
        raise ParameterError("audio contains NaN or infinite samples")
    padded = np.pad(y, N_FFT // 2, mode="reflect")
    n_frames = 1 + (padded.size - N_FFT) // HOP
    frames = np.lib.stride_tricks.as_strided(
        padded, shape=(n_frames, N_FFT), strides=(padded.strides[0] * HOP, padded.strides[0])
    )
    window = np.hanning(N_FFT + 1)[:-1].astype(np.float32)  # periodic Hann
    spec = np.fft.rfft(frames * window, axis=1)
    power = (spec.real**2 + spec.imag**2).astype(np.float32)
    mel = power @ _mel_basis().T
    return np.log10(10000.0 * mel.astype(np.float16).astype(np.float32) + 1.0).astype(np.float32)


@dataclass(frozen=True)
class Taggram:
    """Tag probabilities of overlapping 187-frame patches.

    Attributes
    ----------
    times : np.ndarray of float64, shape (n_windows,)
        Patch centres in seconds from the start of the audio.
    probs : np.ndarray of float32, shape (n_windows, 50)
        Sigmoid tag probabilities.
    tags : tuple of str, length 50
        The MagnaTagATune labels, in column order.
    """

    times: npt.NDArray[np.float64]
    probs: npt.NDArray[np.float32]
    tags: tuple[str, ...]


class MusicnnTagger:
    """The MTT_musicnn network in inference mode.

    Build with :func:`load_musicnn`.
    """

    def __init__(self, weights: dict[str, npt.NDArray[np.float32]], tags: tuple[str, ...]) -> None:
        import torch

        self.tags = tags
        t = {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in weights.items()}

        def bn(name: str) -> tuple[torch.Tensor, torch.Tensor]:
            scale = t[f"{name}.gamma"] / torch.sqrt(t[f"{name}.moving_variance"] + BN_EPS)
            shift = t[f"{name}.beta"] - t[f"{name}.moving_mean"] * scale
            return scale, shift

        def conv2d(name: str) -> tuple[torch.Tensor, torch.Tensor]:
            return t[f"{name}.kernel"].permute(3, 2, 0, 1).contiguous(), t[f"{name}.bias"]

        def conv1d(name: str) -> tuple[torch.Tensor, torch.Tensor]:
            k = t[f"{name}.kernel"][:, :, 0, :]  # (7, in, out)
            return k.permute(2, 1, 0).contiguous(), t[f"{name}.bias"]

        self._bn = {f"batch_normalization{s}": bn(f"batch_normalization{s}") for s in
                    ["", *(f"_{i}" for i in range(1, 11))]}
        self._front = [conv2d(f"conv2d{s}") for s in ("", "_1", "_2", "_3", "_4")]
        self._mid = [conv1d(f"conv2d_{i}") for i in (5, 6, 7)]
        self._dense = [(t[f"{n}.kernel"], t[f"{n}.bias"]) for n in ("dense", "dense_1")]

    def logits(self, patches: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Pre-sigmoid tag scores of a batch of patches.

        Parameters
        ----------
        patches : array_like of float, shape (n, 187, 96)
            Log-mel patches (:func:`log_mel`).

        Returns
        -------
        logits : np.ndarray of float32, shape (n, 50)

        Raises
        ------
        ParameterError
            If the patches do not have shape (n, 187, 96).
        """
        import torch
        import torch.nn.functional as F

        x = np.asarray(patches, dtype=np.float32)
        if x.ndim != 3 or x.shape[1:] != (N_FRAMES, N_MELS):
            raise ParameterError(
                f"patches must have shape (n, {N_FRAMES}, {N_MELS}), got {x.shape}; "
                "build them with log_mel() and taggram()"
            )
        if x.shape[0] == 0:
            return np.zeros((0, len(self.tags)), dtype=np.float32)

        with torch.inference_mode():
            inp = self._chan_bn(torch.from_numpy(x).unsqueeze(1), "batch_normalization")
            front = []
            for i, (top, bottom) in enumerate(_PADS):
                w, b = self._front[i]
                v = F.conv2d(F.pad(inp, (0, 0, top, bottom)), w, b)
                front.append(self._bn_max_over_freq(v.amax(dim=3), v.amin(dim=3), i))
            out = self._after_frontend(front)
        return np.asarray(out.numpy(), dtype=np.float32)

    def logits_at(
        self, spec: npt.ArrayLike, starts: npt.ArrayLike, *, chunk: int = 16
    ) -> npt.NDArray[np.float32]:
        """Pre-sigmoid tag scores of the patches ``spec[s : s + 187]`` for ``s`` in ``starts``.

        Equal to ``logits(stack of patches)`` up to float summation order (tested to
        1e-5), but the two timbral convolutions, which carry most of the cost, run once
        over the whole spectrogram: a patch's interior rows do not see its zero padding and
        are shared between overlapping patches; only each patch's 3 first and 3 last rows
        are recomputed with the patch's own padding.

        Parameters
        ----------
        spec : array_like of float, shape (n_frames, 96)
            Log-mel spectrogram (:func:`log_mel`).
        starts : array_like of int, shape (n,)
            First frame of each patch, each ``<= n_frames - 187``.
        chunk : int
            Patches per pass through the per-patch layers (memory only).

        Returns
        -------
        logits : np.ndarray of float32, shape (n, 50)

        Raises
        ------
        ParameterError
            If the spectrogram has the wrong shape or a patch runs over its end.
        """
        import torch
        import torch.nn.functional as F

        x = np.asarray(spec, dtype=np.float32)
        idx = np.asarray(starts, dtype=np.int64)
        if x.ndim != 2 or x.shape[1] != N_MELS:
            raise ParameterError(f"spec must have shape (n_frames, {N_MELS}), got {x.shape}")
        if idx.size and (idx.min() < 0 or idx.max() + N_FRAMES > x.shape[0]):
            raise ParameterError(f"patch starts must lie in [0, {x.shape[0] - N_FRAMES}]")
        if idx.size == 0:
            return np.zeros((0, len(self.tags)), dtype=np.float32)
        e = 3  # timbral blocks pad time by 3
        out = np.zeros((idx.size, len(self.tags)), dtype=np.float32)
        with torch.inference_mode():
            full = self._chan_bn(torch.from_numpy(x)[None, None], "batch_normalization")  # (1,1,T,F)
            shared = []
            for w, b in self._front[:2]:
                g = F.conv2d(F.pad(full, (0, 0, e, e)), w, b)[0]  # (C, T, F')
                shared.append((g.amax(dim=2), g.amin(dim=2)))
                del g
            for c0 in range(0, idx.size, chunk):
                part = idx[c0 : c0 + chunk]
                patches = torch.stack([full[0, :, s : s + N_FRAMES] for s in part])  # (n,1,187,F)
                zeros = torch.zeros((part.size, 1, e, N_MELS))
                head = torch.cat([zeros, patches[:, :, : 2 * e]], dim=2)
                tail = torch.cat([patches[:, :, -2 * e :], zeros], dim=2)
                front = []
                for i, (top, bottom) in enumerate(_PADS):
                    w, b = self._front[i]
                    if i < 2:
                        hi = torch.stack([shared[i][0][:, s : s + N_FRAMES] for s in part])
                        lo = torch.stack([shared[i][1][:, s : s + N_FRAMES] for s in part])
                        for edge, rows in ((head, slice(0, e)), (tail, slice(N_FRAMES - e, N_FRAMES))):
                            v = F.conv2d(edge, w, b)
                            hi[:, :, rows], lo[:, :, rows] = v.amax(dim=3), v.amin(dim=3)
                    else:
                        v = F.conv2d(F.pad(patches, (0, 0, top, bottom)), w, b)
                        hi, lo = v.amax(dim=3), v.amin(dim=3)
                    front.append(self._bn_max_over_freq(hi, lo, i))
                out[c0 : c0 + part.size] = self._after_frontend(front).numpy()
        return out

    def _chan_bn(self, v: torch.Tensor, name: str) -> torch.Tensor:
        scale, shift = self._bn[name]
        shape = (1, -1) + (1,) * (v.dim() - 2)
        return v * scale.view(shape) + shift.view(shape)

    def _after_frontend(self, front: list[torch.Tensor]) -> torch.Tensor:
        """Mid end and back end: front-end blocks (n, C_i, time) -> logits (n, 50)."""
        import torch
        import torch.nn.functional as F

        fe = torch.cat(front, dim=1)  # (n, 561, time)
        mids = [fe]
        h = fe
        for j, (w, b) in enumerate(self._mid):
            v = F.conv1d(F.pad(h, (3, 3)), w, b)
            v = self._chan_bn(torch.relu(v), f"batch_normalization_{j + 6}")
            h = v if j == 0 else v + h
            mids.append(h)
        me = torch.cat(mids, dim=1)  # (n, 753, time)
        pooled = torch.stack([me.amax(dim=2), me.mean(dim=2)], dim=2).reshape(me.shape[0], -1)
        pooled = self._chan_bn(pooled, "batch_normalization_9")
        (w1, b1), (w2, b2) = self._dense
        d = self._chan_bn(torch.relu(pooled @ w1 + b1), "batch_normalization_10")
        return d @ w2 + b2

    def _bn_max_over_freq(self, hi: torch.Tensor, lo: torch.Tensor, block: int) -> torch.Tensor:
        """``max_f BN(ReLU(v))`` of front-end block ``block`` from ``max_f v`` and ``min_f v``.

        BN is a per-channel affine map ``scale * x + shift``; it is monotone, so the maximum
        over frequency is reached at the maximum of ``v`` where ``scale > 0`` and at its
        minimum where ``scale < 0`` (ReLU is monotone too). The selected element and the
        float operations applied to it are those of the direct computation, without a pass
        over every (time, frequency) element.

        Parameters
        ----------
        hi, lo : torch.Tensor, shape (n, C, time)
            Maximum and minimum over frequency of the block's convolution output.
        block : int
            Front-end block index (0-4).
        """
        import torch

        scale, shift = self._bn[f"batch_normalization_{block + 1}"]
        picked = torch.where((scale >= 0).view(1, -1, 1), torch.relu(hi), torch.relu(lo))
        return picked * scale.view(1, -1, 1) + shift.view(1, -1, 1)

    def predict(self, patches: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Tag probabilities of a batch of patches: the sigmoid of :meth:`logits` (same argument and errors).

        Returns
        -------
        probs : np.ndarray of float32, shape (n, 50)
            Sigmoid probabilities, columns in :attr:`tags` order.
        """
        z = self.logits(patches).astype(np.float64)
        return (1.0 / (1.0 + np.exp(-z))).astype(np.float32)


@process_cache(maxsize=2)
def load_musicnn(path: Path | None = None) -> MusicnnTagger:
    """Load the embedded MTT_musicnn weights (memoised).

    Parameters
    ----------
    path : Path, optional
        Weights file; the packaged ``mtt_musicnn.npz`` when omitted.

    Returns
    -------
    tagger : MusicnnTagger

    Raises
    ------
    ModelUnavailableError
        If the weights file is missing or unreadable (a broken installation: reinstall
        timingbench, or regenerate it with ``tools/convert_musicnn.py``).
    """
    p = WEIGHTS_PATH if path is None else Path(path)
    try:
        with np.load(p, allow_pickle=False) as z:
            tags = tuple(str(s) for s in z["tags"])
            weights = {k: np.asarray(z[k]) for k in z.files if k != "tags"}
    except (OSError, KeyError, ValueError) as exc:
        raise ModelUnavailableError(
            f"{p}: cannot read the musicnn weights ({exc}); reinstall timingbench or "
            "regenerate them with tools/convert_musicnn.py"
        ) from None
    return MusicnnTagger(weights, tags)


def patch_starts(n_frames: int, *, hop_frames: float) -> npt.NDArray[np.int64]:
    """First frames of the 187-frame patches laid over ``n_frames`` frames.

    Parameters
    ----------
    n_frames : int
        Log-mel frames available.
    hop_frames : float
        Patch hop in frames (fractional hops are rounded per patch, so the hop in
        seconds holds on average).

    Returns
    -------
    starts : np.ndarray of int64, shape (n_patches,)
        Empty when the audio is shorter than one patch.

    Raises
    ------
    ParameterError
        If ``hop_frames`` is not positive.
    """
    if not np.isfinite(hop_frames) or hop_frames <= 0:
        raise ParameterError(f"hop_frames must be positive, got {hop_frames!r}")
    last = n_frames - N_FRAMES
    if last < 0:
        return np.zeros(0, dtype=np.int64)
    k = np.arange(int(np.floor(last / hop_frames)) + 1)
    starts = np.round(k * hop_frames).astype(np.int64)
    return starts[starts <= last]


def taggram(
    samples: npt.ArrayLike, *, sr: int, hop_s: float, batch_size: int = 16, tagger: MusicnnTagger | None = None
) -> Taggram:
    """Tag probabilities in overlapping ~3 s windows across a clip.

    Parameters
    ----------
    samples : array_like of float, shape (n,)
        Mono audio.
    sr : int
        Its sample rate in Hz.
    hop_s : float
        Hop between window starts in seconds (rounded to the 16 ms frame grid per window).
    batch_size : int
        Patches per forward pass (memory only; results do not depend on it).
    tagger : MusicnnTagger, optional
        The model; the embedded one when omitted.

    Returns
    -------
    taggram : Taggram
        Empty (zero windows) when the audio is shorter than one 187-frame patch (~3 s).

    Raises
    ------
    ParameterError
        On malformed audio or a non-positive hop.
    ModelUnavailableError
        If the embedded weights cannot be read.
    """
    from timingbench.convert import frames_to_time

    if not np.isfinite(hop_s) or hop_s <= 0:
        raise ParameterError(f"hop_s must be a positive number of seconds, got {hop_s!r}")
    if int(batch_size) != batch_size or batch_size <= 0:
        raise ParameterError(f"batch_size must be a positive whole number, got {batch_size!r}")
    model = load_musicnn() if tagger is None else tagger
    y = resample_to_model(samples, sr=sr)
    spec = log_mel(y) if y.size > N_FFT // 2 else np.zeros((0, N_MELS), dtype=np.float32)
    starts = patch_starts(spec.shape[0], hop_frames=hop_s * MODEL_SR / HOP)
    z = model.logits_at(spec, starts, chunk=int(batch_size)).astype(np.float64)
    probs = (1.0 / (1.0 + np.exp(-z))).astype(np.float32)
    times = frames_to_time(starts + N_FRAMES // 2, sr=MODEL_SR, hop=HOP)
    return Taggram(times=times, probs=probs, tags=model.tags)
