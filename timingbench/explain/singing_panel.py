"""The vocals presence panel of an explain plot: the singing detector's log-odds around a vocals event.

Drawn under the family evidence for every event whose family is vocals (scored or not, silent
audio excepted): singing log-odds per 10-ms frame (thin) and on the evidence grid (bold),
speech log-odds on the grid apart from it, the source it was read on (the mix or the vocals
stem) and the detector's file. It judges vocals where the registry's ``judged_by`` names ``singing``
(:mod:`timingbench.identity.stem_evidence`); the panel says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from timingbench.errors import TimingbenchError
from timingbench.identity.singing import VOCALS

if TYPE_CHECKING:
    from timingbench.explain.event import ExplainedEvent
    from timingbench.identity.singing import VocalsPresence

SINGING_COLOR = "#c1121f"
SINGING_FRAMES_COLOR = "#f4a3a8"
SPEECH_COLOR = "#1d3557"
#: Log-odds range drawn (the detector's outputs are clipped to about +-9.2).
YLIM = (-10.0, 10.0)


def panel_presence(x: ExplainedEvent) -> VocalsPresence | str | None:
    """The vocals presence to draw for ``x``, the reason it cannot be read, or None for no panel.

    None for events of other families and for silent audio (nothing is read in silence).
    """
    ev = x.prompt.events[x.index]
    if ev.family != VOCALS or x.silent:
        return None
    from timingbench.identity.singing import vocals_presence

    try:
        return vocals_presence(x.bank, x.inputs.config)
    except TimingbenchError as exc:
        return f"vocals presence unavailable: {exc}"


def draw_vocals_presence(ax: Any, presence: VocalsPresence | str) -> None:
    """Draw the panel on ``ax`` (its time axis shared with the plot's other panels).

    Parameters
    ----------
    ax : matplotlib.axes.Axes
    presence : VocalsPresence or str
        What :func:`panel_presence` returned (a string: why there is no curve).
    """
    ax.set_ylabel("vocals\npresence\n(log-odds)")
    ax.set_ylim(*YLIM)
    if isinstance(presence, str):
        ax.text(0.5, 0.5, presence, transform=ax.transAxes, ha="center", va="center", fontsize=8)
        return
    ax.axhline(0.0, color="#6c757d", lw=0.6, ls=":")
    ax.plot(presence.frame_times, np.clip(presence.frame_singing, *YLIM), lw=0.5, color=SINGING_FRAMES_COLOR,
            label="singing, every 10 ms", zorder=1)
    ax.plot(presence.times, presence.singing, lw=1.6, color=SINGING_COLOR, label="singing, evidence grid", zorder=3)
    ax.plot(presence.times, presence.speech, lw=1.0, color=SPEECH_COLOR, ls="--", label="speech, evidence grid",
            zorder=2)
    ax.legend(loc="upper right", fontsize=7, ncol=3,
              title=f"FireRedVAD AED on the {presence.source} ({presence.model}); "
                    "judges vocals where judged_by names singing",
              title_fontsize=7)
