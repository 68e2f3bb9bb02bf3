"""The public Python API: score audio in memory or a folder of clips, with typed results.

::

    import timingbench

    res = timingbench.score_audio(samples, 44100, prompt_row)   # no files are written
    res.events[0].outcome                                       # "on_time" | "off_time" | "none"
    res.to_dict(), [e.to_dict() for e in res.events]           # the clips.jsonl / events.jsonl rows

:func:`score_audio` runs the pipeline of ``timingbench score`` (decode -> feature bank ->
detectors -> gates -> scoring) on an array: the same rows, byte for byte once dumped as the
runner dumps them, as the command writes for a file holding that array. It writes nothing:
no ``.parts/``, no feature cache (unless ``cache_dir`` is given). :func:`score_folder`
scores a folder, in memory or, with ``out``, exactly as ``timingbench score`` does.

The result types are frozen dataclasses; :meth:`EventResult.to_dict` and
:meth:`ClipResult.to_dict` give the formats §3 rows, keys in the order the runner
writes them (keys a row has beyond the documented ones, such as a per-gate ``evidence`` object, are kept
in :attr:`EventResult.extra` and written back in place).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy.typing as npt

from timingbench.audio import clip_from_array
from timingbench.choices import DEFAULT_FAMILY_EVIDENCE, FAMILY_EVIDENCE_CHOICES, SEPARATIONS
from timingbench.config import Config, load_config
from timingbench.errors import ParameterError, PromptError
from timingbench.jsonio import json_values
from timingbench.packaged import DEFAULT_PROMPTS_PATH
from timingbench.prompts import ClipRef, Prompt, PromptSet, parse_clip_name, parse_prompt
from timingbench.prompts import load_prompts as _load_prompts_file
from timingbench.result_types import ClipResult, EventResult, FolderResult
from timingbench.verdicts import Outcome

if TYPE_CHECKING:  # the runner is imported on first use, so that ``import timingbench.api`` stays fast
    from timingbench.runner import ScoreOptions

__all__ = [
    "ClipResult",
    "EventResult",
    "FolderResult",
    "Outcome",
    "load_config",
    "load_prompts",
    "score_audio",
    "score_folder",
]



# ----------------------------------------------------------------------------- loading


def load_prompts(path: str | Path | None = None) -> PromptSet:
    """Load and validate a prompt set (the packaged v1 set, 250 prompts, by default).

    Parameters
    ----------
    path : str or Path, optional
        A prompt JSONL file (formats §1).

    Returns
    -------
    prompt_set : PromptSet
        ``prompts`` (valid prompts by id) and ``errors`` (one per rejected row).

    Raises
    ------
    PromptError
        If the file cannot be read at all, or none of its lines is a JSON object (an
        audio or YAML file, an empty file).
    """
    return _load_prompts_file(DEFAULT_PROMPTS_PATH if path is None else path, require_jsonl=True)


def _config(config: Config | str | Path | None) -> Config:
    if isinstance(config, Config):
        return config
    if config is None or isinstance(config, str | Path):
        return load_config(config)
    raise ParameterError(f"config: expected a Config, a YAML path or None, got {type(config).__name__}")


def _prompt(prompt: Prompt | Mapping[str, Any] | str) -> Prompt:
    if isinstance(prompt, Prompt):
        return prompt
    if isinstance(prompt, Mapping):
        return parse_prompt(dict(prompt))
    if isinstance(prompt, str):
        ps = load_prompts()
        if prompt not in ps.prompts:
            raise PromptError(f"prompt: {prompt!r} is not an id of the packaged prompt set "
                              f"({DEFAULT_PROMPTS_PATH.name}); pass the prompt row instead")
        return ps.prompts[prompt]
    raise PromptError(f"prompt: expected a prompt row (dict), a Prompt or a prompt id, "
                      f"got {type(prompt).__name__}")


def _choice(name: str, value: str, allowed: Sequence[str]) -> None:
    if value not in allowed:
        raise ParameterError(f"{name}: expected one of {list(allowed)}, got {value!r}")


# ----------------------------------------------------------------------------- in memory


def _options(separation: str, family_evidence: str, chance: bool, demucs_repo: str | Path | None,
             clap_dir: str | Path | None, cache_dir: str | Path | None, *, use_cache: bool) -> ScoreOptions:
    """The runner's options of one API call (checks the choices)."""
    from timingbench.runner import ScoreOptions

    _choice("separation", separation, SEPARATIONS)
    _choice("family_evidence", family_evidence, FAMILY_EVIDENCE_CHOICES)
    return ScoreOptions(separation=separation, family_evidence=family_evidence, chance=bool(chance),
                        demucs_repo=None if demucs_repo is None else str(demucs_repo),
                        clap_dir=None if clap_dir is None else str(clap_dir),
                        cache_dir=None if cache_dir is None else str(cache_dir), use_cache=use_cache)


def _result(part: Mapping[str, Any], config: Config) -> ClipResult:
    clip_row = json_values(part["clip"])
    events = [json_values(e) for e in part["events"]]
    return ClipResult.from_dict(clip_row, events, notes=part.get("notes", ()),
                                exempt=(part.get("family_evidence") or {}).get("exempt") or {},
                                config_version=config.version, config_hash=config.content_hash)


def score_audio(
    samples: npt.ArrayLike, sr: int, prompt: Prompt | Mapping[str, Any] | str, *,
    config: Config | str | Path | None = None, separation: str = "dsp",
    family_evidence: str = DEFAULT_FAMILY_EVIDENCE, clip: str | None = None, sample: int | None = None,
    chance: bool = True, demucs_repo: str | Path | None = None, clap_dir: str | Path | None = None,
    cache_dir: str | Path | None = None,
) -> ClipResult:
    """Score one clip held in memory against one prompt; writes no file.

    Parameters
    ----------
    samples : array_like of float, shape (n,) or (n, channels)
        The clip, full scale [-1, 1], any rate; 2-D arrays are frame-major (as
        ``soundfile.read`` returns them).
    sr : int
        Sample rate of ``samples``, Hz (resampled to ``audio.sample_rate_hz``).
    prompt : dict, Prompt or str
        A prompt row (formats §1), a parsed :class:`~timingbench.prompts.Prompt`, or
        the id of a prompt of the packaged v1 set.
    config : Config, str or Path, optional
        The configuration (default: the packaged one).
    separation : {"dsp", "auto", "demucs", "none"}
        Source separation backend (default ``dsp``: deterministic, no model weights).
    family_evidence : {"tagger", "trained", "musicnn", "clap", "none"}
        Instrument-family evidence backend (default ``tagger``: the embedded AudioSet tagger
        with the trained network, chosen per family; ``trained``: the trained network alone).
    clip : str, optional
        The name the rows carry in ``clip`` (default: the prompt id). Pass the file name
        to get the rows ``timingbench score`` writes for that file.
    sample : int, optional
        Sample index ``k`` (default: from a ``<prompt_id>__<k>`` name, else 0).
    chance : bool
        Compute ``p_chance`` by the chance-credit re-scoring (as the command does by default).
    demucs_repo, clap_dir : str or Path, optional
        Local model folders (``separation="demucs"``, ``family_evidence="clap"``).
    cache_dir : str or Path, optional
        Feature-cache folder; without it the feature bank lives in memory only.

    Returns
    -------
    result : ClipResult
        ``result.events`` holds one :class:`EventResult` per instructed event.

    Raises
    ------
    ParameterError
        Bad ``samples`` shape or dtype, ``sr``, ``separation``, ``family_evidence`` or ``config``.
    ClipError
        Empty, too short or non-finite ``samples`` (silent ones are scored: every event
        ``none``, as ``timingbench score`` scores a silent file).
    PromptError
        A malformed prompt row (names the field) or an unknown prompt id.
    ConfigError
        A configuration that cannot be loaded.
    ModelUnavailableError
        ``separation="demucs"`` without local weights.

    Examples
    --------
    >>> res = score_audio(samples, 44100, row)        # doctest: +SKIP
    >>> res.events[0].outcome, res.events[0].error_s  # doctest: +SKIP
    ('on_time', 0.012)
    """
    opts = _options(separation, family_evidence, chance, demucs_repo, clap_dir, cache_dir,
                    use_cache=cache_dir is not None)
    cfg = _config(config)
    p = _prompt(prompt)
    name = clip if clip is not None else p.id
    if not isinstance(name, str) or not name:
        raise ParameterError(f"clip: expected a non-empty name, got {clip!r}")
    k = parse_clip_name(name)[1] if sample is None else sample
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ParameterError(f"sample: expected a whole number >= 0, got {sample!r}")
    from timingbench.runner import score_decoded

    decoded = clip_from_array(samples, sr, config=cfg, name=name)
    ref = ClipRef(name, Path(name), p.id, k)
    return _result(score_decoded(decoded, ref, p, cfg, opts), cfg)


# ----------------------------------------------------------------------------- folders


def score_folder(
    clips_dir: str | Path, prompts: str | Path | PromptSet | None = None, out: str | Path | None = None, *,
    config: Config | str | Path | None = None, jobs: int = 1, separation: str = "dsp",
    family_evidence: str = DEFAULT_FAMILY_EVIDENCE, chance: bool = True, demucs_repo: str | Path | None = None,
    clap_dir: str | Path | None = None, cache_dir: str | Path | None = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> FolderResult:
    """Score every clip of a folder (``<prompt_id>[__<k>].<ext>``) against a prompt set.

    Parameters
    ----------
    clips_dir : str or Path
        Folder of clips (formats §2).
    prompts : str, Path or PromptSet, optional
        The prompt set (default: the packaged v1 set).
    out : str or Path, optional
        Results folder. When given, the run is exactly ``timingbench score``: it writes
        ``events.jsonl``, ``clips.jsonl``, ``summary.json`` and the resumable ``.parts/``,
        and uses the feature cache (``cache_dir``, default ``~/.cache/timingbench``).
        Without it nothing is written (and no cache unless ``cache_dir`` is given).
    config : Config, str or Path, optional
        The configuration (default: the packaged one).
    jobs : int
        Worker processes, >= 1 (results are identical for any value).
    separation, family_evidence, chance, demucs_repo, clap_dir, cache_dir
        As :func:`score_audio`.
    progress : callable, optional
        Called as ``progress(done, total, clip)`` after each clip.

    Returns
    -------
    result : FolderResult

    Raises
    ------
    ParameterError
        Bad ``jobs``, ``separation``, ``family_evidence`` or ``config``, or a
        :class:`PromptSet` given together with ``out`` (pass its file).
    PromptError
        The prompt file cannot be read or ``clips_dir`` is not a folder.
    """
    opts = _options(separation, family_evidence, chance, demucs_repo, clap_dir, cache_dir,
                    use_cache=out is not None or cache_dir is not None)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ParameterError(f"jobs: expected a whole number >= 1, got {jobs!r}")
    from timingbench.executors import LocalExecutor
    from timingbench.runner import score_folder as run_folder
    from timingbench.runner import score_matched

    cfg = _config(config)
    if out is not None:
        if isinstance(prompts, PromptSet):
            raise ParameterError("prompts: with out=, pass the prompt file's path (summary.json records it)")
        res = run_folder(clips_dir, DEFAULT_PROMPTS_PATH if prompts is None else prompts, out, cfg,
                         opts=opts, jobs=jobs, progress=progress)
    else:
        ps = prompts if isinstance(prompts, PromptSet) else load_prompts(prompts)
        res = score_matched(clips_dir, ps, cfg, opts=opts, executor=LocalExecutor(jobs), progress=progress)
    return FolderResult(tuple(_result(p, cfg) for p in res.parts), MappingProxyType(json_values(res.summary)),
                        res.out_dir)
