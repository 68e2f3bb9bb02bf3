"""The family evidence of one clip: each instrument family's curves over time.

What the identity rules (:mod:`timingbench.identity`) read, whichever backend made it
(:func:`timingbench.features.semantic.family_evidence`: the trained network, musicnn or CLAP).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from timingbench.memo import memo_on

_T = TypeVar("_T")


@dataclass(frozen=True)
class FamilyEvidence:
    """Windowed instrument-family evidence of one clip.

    Attributes
    ----------
    times : np.ndarray of float64, shape (n_windows,)
        Window centres in seconds.
    curves : dict of str to np.ndarray of float64, shape (n_windows,)
        Family -> evidence in [0, 1] per window, for every family the backend can judge.
    backend : str
        ``trained``, ``musicnn`` or ``clap``.
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
        trained only: probability that the family entered / left across each instant.
    """

    times: npt.NDArray[np.float64]
    curves: dict[str, npt.NDArray[np.float64]]
    backend: str
    exempt: dict[str, str]
    window_s: float
    note: str | None = None
    tag_curves: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    entered: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    left: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict, repr=False)
    _memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def memo(self, key: tuple[Any, ...], fn: Callable[[], _T]) -> _T:
        """``fn()`` once per evidence and ``key`` (statistics the gates re-read under many thresholds)."""
        if not memo_on():
            return fn()
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]  # type: ignore[no-any-return]

    def disclosure(self) -> dict[str, Any]:
        """The backend and the families it could not judge, for ``summary.json``."""
        return {"backend": self.backend, "exempt": dict(sorted(self.exempt.items())), "note": self.note}
