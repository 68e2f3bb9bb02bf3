"""AudioRAG scoring: judged accuracy averaged over runs, per source, with error types.

Ground truth is the public release's ``metadata/metadata.jsonl`` (one row per question:
``audio_path``, ``data_source``, ``attributes``, ``question``, ``answer``, ...). An answer
row (formats §7) has ``id`` (the 0-based row index in the metadata file, or the row's
``audio_path`` when that path is unique), ``answer`` and ``run``.

Modules: :mod:`~timingbench.suites.audiorag.io`, :mod:`~timingbench.suites.audiorag.audio_files`,
:mod:`~timingbench.suites.audiorag.judges`, :mod:`~timingbench.suites.audiorag.evaluate`.

Flow: :func:`load_metadata` -> :func:`load_answers` -> :func:`resolve_audio` (report
only; scoring does not need the audio) -> :func:`score_audiorag` with a judge
(:class:`OfflineRagJudge` or :class:`LlmRagJudge`).

The paper (AudioRAG, Sec. 4.3-4.4, Appendix B) judges each answer with an LLM, averages
accuracy over three runs and sorts wrong answers into four error types: a) reasoning,
b) audio processing, c) knowledge, d) invalid answer. A missing or empty answer is
decided without the judge: wrong, type d.
"""

from timingbench.suites.audiorag.audio_files import AudioResolution, default_audio_root, resolve_audio
from timingbench.suites.audiorag.evaluate import score_audiorag
from timingbench.suites.audiorag.io import DEFAULT_RUN, RagAnswer, RagItem, RagMetadata, load_answers, load_metadata
from timingbench.suites.audiorag.judges import Judgement, LlmRagJudge, OfflineRagJudge, RagJudge

__all__ = [
    "DEFAULT_RUN", "RagItem", "RagMetadata", "RagAnswer", "load_metadata", "load_answers", "AudioResolution",
    "default_audio_root", "resolve_audio", "Judgement", "RagJudge", "OfflineRagJudge", "LlmRagJudge",
    "score_audiorag",
]
