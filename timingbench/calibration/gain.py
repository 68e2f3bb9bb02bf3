"""Gain invariance (paper Sec. IV-A): identical verdicts at -12 and -20 dB, onsets within a frame."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from timingbench.audio import load_clip
from timingbench.calibration.evaluate import Corpus
from timingbench.config import Config
from timingbench.runner import ScoreOptions, family_evidence_for
from timingbench.scoring import score_event


def gain_check(
    corpus: Corpus, config: Config, opts: ScoreOptions, *, gains_db: Sequence[float] = (-12.0, -20.0),
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Any]:
    """Re-score every clip of the corpus at the given gains and compare with 0 dB.

    Returns
    -------
    report : dict
        ``n_events``, per gain: ``verdict_changes`` (list of clip:event with both
        outcomes), ``max_shift_frames`` and ``shifts_over_one_frame``.
    """
    from timingbench.features import compute_bank

    hop_s = None
    out: dict[str, Any] = {"gains_db": list(gains_db), "by_gain": {}}
    per_gain: dict[float, dict[str, Any]] = {g: {"verdict_changes": [], "shifts_frames": []} for g in gains_db}
    n = 0
    for i, ref in enumerate(corpus.refs):
        prompt = corpus.prompts[ref.prompt_id]
        base_bank = corpus.banks[ref.clip]
        hop_s = base_bank.hop / base_bank.sr
        clip = load_clip(ref.path, config)
        base = [score_event(base_bank, prompt, k, config, family_evidence=corpus.evidence.get(ref.clip),
                            clip=ref.clip, with_chance=False)[0] for k in range(len(prompt.events))]
        n += len(base)
        for g in gains_db:
            scaled = replace(clip, samples=(clip.samples * np.float32(10 ** (g / 20))).astype(np.float32),
                             content_hash=f"{clip.content_hash}:gain{g:+.0f}")
            bank = compute_bank(scaled, config, separation=opts.separation, demucs_repo=opts.demucs_repo)
            evid, _ = family_evidence_for(bank, prompt, config, opts)
            for k, b in enumerate(base):
                v = score_event(bank, prompt, k, config, family_evidence=evid, clip=ref.clip, with_chance=False)[0]
                ident = f"{ref.clip}:{prompt.events[k].id}"
                if v.outcome != b.outcome:
                    per_gain[g]["verdict_changes"].append({"event": ident, "at_0db": b.outcome, "at_gain": v.outcome})
                elif v.detected_s is not None and b.detected_s is not None:
                    per_gain[g]["shifts_frames"].append(abs(v.detected_s - b.detected_s) / hop_s)
        if progress:
            progress(i + 1, len(corpus.refs), ref.clip)
    for g, d in per_gain.items():
        s = np.asarray(d["shifts_frames"])
        out["by_gain"][f"{g:+.0f}"] = {
            "verdict_changes": d["verdict_changes"], "n_verdict_changes": len(d["verdict_changes"]),
            "max_shift_frames": round(float(s.max()), 3) if s.size else 0.0,
            "shifts_over_one_frame": int(np.sum(s > 1.0 + 1e-6)),
        }
    out["n_events"] = n
    return out
