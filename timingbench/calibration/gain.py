"""Gain invariance (paper Sec. IV-A): identical verdicts at -12 and -20 dB, onsets within a frame."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from timingbench.audio import load_clip
from timingbench.calibration.evaluate import Corpus
from timingbench.config import Config
from timingbench.convert import frame_period_s
from timingbench.executors import Executor, LocalExecutor, TaskFailure
from timingbench.prompts import ClipRef, Prompt
from timingbench.runner import ScoreOptions, family_evidence_for
from timingbench.scoring import score_event


def gain_item(
    item: tuple[ClipRef, Prompt, Config, ScoreOptions, tuple[float, ...]],
) -> dict[str, list[tuple[str, float | None]]]:
    """Verdicts of one clip re-analysed at each gain (an executor task).

    Returns
    -------
    verdicts : dict
        ``{gain key: [(outcome, detected_s) per event]}``, gain keys as ``f"{g:+.0f}"``.
    """
    from timingbench.features import compute_bank

    ref, prompt, config, opts, gains_db = item
    clip = load_clip(ref.path, config)
    out: dict[str, list[tuple[str, float | None]]] = {}
    for g in gains_db:
        scaled = replace(clip, samples=(clip.samples * np.float32(10 ** (g / 20))).astype(np.float32),
                         content_hash=f"{clip.content_hash}:gain{g:+.0f}")
        bank = compute_bank(scaled, config, separation=opts.separation, demucs_repo=opts.demucs_repo)
        evid, _ = family_evidence_for(bank, prompt, config, opts)
        out[f"{g:+.0f}"] = [
            (v.outcome, v.detected_s) for v in
            (score_event(bank, prompt, k, config, family_evidence=evid, clip=ref.clip, with_chance=False)[0]
             for k in range(len(prompt.events)))]
    return out


def gain_check(
    corpus: Corpus, config: Config, opts: ScoreOptions, *, gains_db: Sequence[float] = (-12.0, -20.0),
    progress: Callable[[int, int, str], None] | None = None, executor: Executor | None = None,
) -> dict[str, Any]:
    """Re-score every clip of the corpus at the given gains and compare with 0 dB.

    ``executor`` (default: this process) says where the clips are re-analysed; the report
    is the same for any executor. A clip that failed on every attempt is listed in
    ``failed`` and left out of the counts.

    Returns
    -------
    report : dict
        ``n_events``, per gain: ``verdict_changes`` (list of clip:event with both
        outcomes), ``max_shift_frames`` and ``shifts_over_one_frame``; ``failed``.
    """
    out: dict[str, Any] = {"gains_db": list(gains_db), "by_gain": {}}
    per_gain: dict[float, dict[str, Any]] = {g: {"verdict_changes": [], "shifts_frames": []} for g in gains_db}
    work = [(ref, corpus.prompts[ref.prompt_id], config, opts, tuple(gains_db)) for ref in corpus.refs]
    results: dict[int, Any] = {}
    for done, (i, res) in enumerate((executor or LocalExecutor(1)).imap(gain_item, work,
                                                                        label=lambda w: w[0].clip), 1):
        results[i] = res
        if progress:
            progress(done, len(work), corpus.refs[i].clip)
    n = 0
    failed = []
    for i, ref in enumerate(corpus.refs):
        if isinstance(results[i], TaskFailure):
            failed.append(f"{ref.path}: failed on {results[i].attempts} attempts ({results[i].error})")
            continue
        prompt = corpus.prompts[ref.prompt_id]
        base_bank = corpus.banks[ref.clip]
        hop_s = frame_period_s(sr=base_bank.sr, hop=base_bank.hop)
        base = [score_event(base_bank, prompt, k, config, family_evidence=corpus.evidence.get(ref.clip),
                            clip=ref.clip, with_chance=False)[0] for k in range(len(prompt.events))]
        n += len(base)
        for g in gains_db:
            for k, b in enumerate(base):
                outcome, detected_s = results[i][f"{g:+.0f}"][k]
                ident = f"{ref.clip}:{prompt.events[k].id}"
                if outcome != b.outcome:
                    per_gain[g]["verdict_changes"].append({"event": ident, "at_0db": b.outcome, "at_gain": outcome})
                elif detected_s is not None and b.detected_s is not None:
                    per_gain[g]["shifts_frames"].append(abs(detected_s - b.detected_s) / hop_s)
    for g, d in per_gain.items():
        s = np.asarray(d["shifts_frames"])
        out["by_gain"][f"{g:+.0f}"] = {
            "verdict_changes": d["verdict_changes"], "n_verdict_changes": len(d["verdict_changes"]),
            "max_shift_frames": round(float(s.max()), 3) if s.size else 0.0,
            "shifts_over_one_frame": int(np.sum(s > 1.0 + 1e-6)),
        }
    out["n_events"] = n
    out["failed"] = failed
    return out
