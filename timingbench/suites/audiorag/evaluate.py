"""AudioRAG scoring: judged accuracy averaged over runs, per source, with error types."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from timingbench.errors import ParameterError
from timingbench.suites.audiorag.io import RagAnswer, RagItem, RagMetadata
from timingbench.suites.audiorag.judges import Judgement, RagJudge
from timingbench.suites.judge import normalise_answer

__all__ = ["score_audiorag"]


def _run_sort_key(run: str) -> tuple[int, float, str]:
    try:
        return (0, float(run), run)
    except ValueError:
        return (1, 0.0, run)


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def score_audiorag(
    meta: RagMetadata,
    answers: Sequence[RagAnswer],
    *,
    judge: RagJudge,
    error_types: Mapping[str, str],
    workers: int,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Judge every (run, question) and aggregate.

    Every valid question is scored in every run that has at least one answer row; a
    question with no answer in a run, or an empty answer, is wrong with error type ``d``
    without asking the judge.

    Parameters
    ----------
    meta : RagMetadata
        The questions.
    answers : sequence of RagAnswer
        Answer rows from :func:`load_answers`.
    judge : RagJudge
        Offline or LLM judge.
    error_types : mapping of str to str
        Letter -> name (config ``audiorag.error_types``).
    workers : int
        Concurrent judge calls (>= 1).

    Returns
    -------
    rows : list of dict
        One row per (run, question) in run then row order: ``id``, ``run``,
        ``audio_path``, ``data_source``, ``answer``, ``reference``, ``answered``,
        ``correct`` (bool or null when unjudged), ``error_type``, ``judge_note``.
    summary : dict
        ``accuracy_mean`` (mean over runs of per-run accuracy over judged answers),
        ``runs`` (per-run counts and accuracy), ``per_source`` (per-run and mean
        accuracy per ``data_source``), ``error_types`` (histogram over wrong answers,
        all runs, with ``unclassified``), ``n_questions``, ``unjudged``, ``missing``.

    Raises
    ------
    ParameterError
        If ``workers`` < 1.
    """
    if int(workers) != workers or workers < 1:
        raise ParameterError(f"judge workers must be a whole number >= 1, got {workers!r}")
    runs = sorted({a.run for a in answers}, key=_run_sort_key)
    given = {(a.run, a.index): a for a in answers}
    jobs: list[tuple[str, RagItem, RagAnswer | None]] = [
        (run, it, given.get((run, it.index))) for run in runs for it in meta.items
    ]

    def one(job: tuple[str, RagItem, RagAnswer | None]) -> Judgement:
        _, item, ans = job
        if ans is None:
            return Judgement(correct=False, error_type="d", note="no answer row")
        if not normalise_answer(ans.answer):
            return Judgement(correct=False, error_type="d", note="empty answer")
        return judge.judge(item=item, answer=ans.answer)

    if workers == 1 or len(jobs) < 2:
        verdicts = [one(j) for j in jobs]
    else:
        with ThreadPoolExecutor(max_workers=int(workers)) as pool:
            verdicts = list(pool.map(one, jobs))

    rows: list[dict[str, Any]] = []
    for (run, item, ans), v in zip(jobs, verdicts, strict=True):
        rows.append(
            {
                "id": item.index,
                "run": run,
                "audio_path": item.audio_path,
                "data_source": item.data_source,
                "answer": ans.answer if ans is not None else None,
                "reference": item.answer,
                "answered": ans is not None,
                "correct": v.correct,
                "error_type": v.error_type,
                "judge_note": v.note,
            }
        )

    per_run: dict[str, dict[str, Any]] = {}
    sources = sorted({it.data_source for it in meta.items})
    src_run: dict[str, dict[str, float | None]] = {s: {} for s in sources}
    hist: Counter[str] = Counter()
    for run in runs:
        rr = [r for r in rows if r["run"] == run]
        judged = [r for r in rr if r["correct"] is not None]
        n_ok = sum(1 for r in judged if r["correct"])
        per_run[run] = {
            "n": len(rr),
            "judged": len(judged),
            "correct": n_ok,
            "unjudged": len(rr) - len(judged),
            "missing": sum(1 for r in rr if not r["answered"]),
            "accuracy": _ratio(n_ok, len(judged)),
        }
        for s in sources:
            sj = [r for r in judged if r["data_source"] == s]
            src_run[s][run] = _ratio(sum(1 for r in sj if r["correct"]), len(sj))
        for r in rr:
            if r["correct"] is False:
                hist[r["error_type"] if r["error_type"] in error_types else "unclassified"] += 1

    def mean(values: Sequence[float | None]) -> float | None:
        vals = [v for v in values if v is not None]
        return sum(vals) / len(vals) if vals else None

    n_by_source = Counter(it.data_source for it in meta.items)
    summary: dict[str, Any] = {
        "n_questions": len(meta.items),
        "n_runs": len(runs),
        "accuracy_mean": mean([per_run[r]["accuracy"] for r in runs]),
        "runs": per_run,
        "per_source": {
            s: {"n": n_by_source[s], "accuracy_mean": mean(list(src_run[s].values())), "per_run": src_run[s]}
            for s in sources
        },
        "error_types": {
            **{letter: {"name": name, "count": hist.get(letter, 0)} for letter, name in error_types.items()},
            "unclassified": {"name": "unclassified", "count": hist.get("unclassified", 0)},
        },
        "unjudged": sum(v["unjudged"] for v in per_run.values()),
        "missing": sum(v["missing"] for v in per_run.values()),
    }
    return rows, summary
