"""The labelling page (paper Sec. IV-D, Fig. 3): a local web app to annotate clips.

``timingbench label CLIPS_DIR --prompts P.jsonl --out annotations.jsonl`` serves a page
that pairs an audio player with a zoomable log-mel spectrogram; clicking the spectrogram
sets an onset. Layer 1 (prompt adherence) and Layer 2 (observed events) are saved at once
as formats §5 rows (:mod:`timingbench.label.store`).
"""

from timingbench.label.server import LabelApp, LabelServer, make_server
from timingbench.label.store import LabelStore

__all__ = ["LabelApp", "LabelServer", "LabelStore", "make_server"]
