"""The family evidence of one clip: each instrument family's curves over time.

What the identity rules (:mod:`timingbench.identity.rules`) read, whichever backend made it
(:func:`timingbench.identity.providers.family_evidence`: the AudioSet tagger with the trained
network, the trained network alone, musicnn or CLAP).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from timingbench.choices import CHANGE_BACKENDS
from timingbench.identity.window import logit
from timingbench.memo import memo_on

_T = TypeVar("_T")
F64 = npt.NDArray[np.float64]


class LazyCurves(Mapping[str, F64]):
    """Family -> curve, each computed by ``compute(family)`` the first time it is read.

    The families (the keys) are fixed when it is made, so membership and iteration compute
    nothing: a clip whose events name no judged family never runs the models behind them.

    Parameters
    ----------
    families : sequence of str
        The families it holds, in order.
    compute : callable
        ``compute(family)`` -> the family's curve (float64, shape (n_windows,)).
    """

    def __init__(self, families: Sequence[str], compute: Callable[[str], F64]) -> None:
        self._families = tuple(families)
        self._compute = compute
        self._done: dict[str, F64] = {}

    def __getitem__(self, family: str) -> F64:
        if family not in self._families:
            raise KeyError(family)
        if family not in self._done:
            self._done[family] = self._compute(family)
        return self._done[family]

    def __contains__(self, family: object) -> bool:
        return family in self._families

    def __iter__(self) -> Iterator[str]:
        return iter(self._families)

    def __len__(self) -> int:
        return len(self._families)

    def computed(self) -> tuple[str, ...]:
        """The families whose curve has been computed so far."""
        return tuple(self._done)

    def __reduce__(self) -> tuple[Any, ...]:
        # sent to another process (a worker's evidence) or deep-copied: every curve computed, as a dict
        return (dict, (dict(self.items()),))


@dataclass(frozen=True)
class FamilyEvidence:
    """Windowed instrument-family evidence of one clip.

    Attributes
    ----------
    times : np.ndarray of float64, shape (n_windows,)
        Window centres in seconds.
    curves : mapping of str to np.ndarray of float64, shape (n_windows,)
        Family -> evidence in [0, 1] per window, for every family the backend can judge
        (the tagger backend's is a :class:`LazyCurves`: computed when read).
    backend : str
        ``tagger``, ``trained``, ``musicnn`` or ``clap``.
    exempt : dict of str to str
        Family -> reason it cannot be judged (``not_in_vocabulary``,
        ``unreliable_for_generated_audio``, ``model_unavailable``).
    window_s : float
        Length of each analysis window in seconds.
    note : str or None
        Why the backend could not run, when it could not.
    tag_curves : dict of str to np.ndarray
        musicnn only: every tag's probability per window.
    entered, left : dict of str to np.ndarray of float64, shape (n_windows,)
        tagger and trained: probability that the family entered / left across each instant.
    sources : dict of str to str
        tagger only: the design that judges each family (``network``, ``tagger``, ``fusion``).
    classes : dict of str to tuple of str
        tagger only: each family's AudioSet classes.
    tagger : dict of str to np.ndarray of float64, shape (n_windows,)
        tagger only: the tagger's presence of every family (exempt ones included), whatever
        design judges it.
    weights : str
        tagger only: the tagger's weights file and the start of its SHA-256.
    presence_times : mapping of str to np.ndarray of float64, shape (n_columns,)
        tagger only: family -> the centres (s) of the columns its :attr:`presence_logits` is
        read on (one grid for every family; a mapping so that it is computed when read).
    presence_logits : mapping of str to np.ndarray of float64, shape (n_columns,)
        tagger only: every family's presence in log-odds per tagger column (the largest
        logit over its AudioSet classes), exempt families included. The ``stems`` and
        ``singing`` evidences (:mod:`timingbench.identity.stem_evidence`) give theirs here
        too: a stem's level in dB re the mix's loud level, the singing log-odds.
    judges : mapping of str to tuple of FamilyEvidence
        Family -> the evidences that decide its events on this clip, as the family registry's
        ``judged_by`` says (:func:`timingbench.identity.stem_evidence.judging_evidence`); a
        family not in it is judged by this evidence itself, or not at all.
    licence : str or None
        The licence of the model(s) whose output this evidence is, when a verdict may use it.
    """

    times: npt.NDArray[np.float64]
    curves: Mapping[str, npt.NDArray[np.float64]]
    backend: str
    exempt: dict[str, str]
    window_s: float
    note: str | None = None
    tag_curves: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    entered: Mapping[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    left: Mapping[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    sources: dict[str, str] = field(default_factory=dict)
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    tagger: Mapping[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    weights: str = ""
    presence_times: Mapping[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    presence_logits: Mapping[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    judges: Mapping[str, tuple[FamilyEvidence, ...]] = field(default_factory=dict, repr=False, compare=False)
    licence: str | None = None
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def memo(self, key: tuple[Any, ...], fn: Callable[[], _T]) -> _T:
        """``fn()`` once per evidence and ``key`` (statistics the gates re-read under many thresholds)."""
        if not memo_on():
            return fn()
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]  # type: ignore[no-any-return]

    def presence_logit(self, family: str, *, prob_clip: float) -> tuple[F64, F64]:
        """The family's presence in log-odds and the times (s) it is read at: the provider protocol.

        The tagger's own logits on its columns where it gives them; otherwise the log-odds of
        the backend's presence probabilities (clipped to ``[prob_clip, 1 - prob_clip]``) on
        :attr:`times`.

        Raises
        ------
        KeyError
            If the backend has no curve of ``family``.
        """
        if family in self.presence_logits:
            return (np.asarray(self.presence_times[family], dtype=np.float64),
                    np.asarray(self.presence_logits[family], dtype=np.float64))
        return np.asarray(self.times, dtype=np.float64), logit(self.curves[family], prob_clip)

    @property
    def has_change_heads(self) -> bool:
        """True when the evidence answers "did the family enter / leave here" (tagger and trained backends)."""
        return self.backend in CHANGE_BACKENDS

    def disclosure(self) -> dict[str, Any]:
        """The backend and the families it could not judge, for ``summary.json``."""
        out: dict[str, Any] = {"backend": self.backend, "exempt": dict(sorted(self.exempt.items())), "note": self.note}
        if self.sources:
            out["designs"] = dict(sorted(self.sources.items()))
        if self.weights:
            out["tagger_weights"] = self.weights
        return out
