"""Family evidence on an annotated corpus: the same AUCs, at the annotated instants.

For every instrument entrance (exit) of the corpus' prompts with a Layer-1 annotation:

- annotated as occurred: a **true** probe at the annotated onset;
- annotated as not occurred: a negative probe at the instructed time, **pre-existing**
  when a Layer-2 row shows the family sounding more than ``evidence.context_s`` before
  it (the target was already there) or a rendered corpus' ``manifest.jsonl`` names the
  clip's scenario ``pre_existing``, otherwise a **decoy** (a busy backing or another
  instrument entering near the time).

Each backend scores the probes with what its gate reads: the trained change head
(``min(change, 1 - presence on the quiet side)``, as in
:mod:`timingbench.evidence.evaluate`), or for the taggers the log-odds rise of
:func:`timingbench.identity.family_rise` (entrances only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from timingbench.annotation_io import load_annotations
from timingbench.calibration.evaluate import default_prompts_path, load_corpus
from timingbench.config import Config
from timingbench.evidence.metrics import Probe, auc_table
from timingbench.identity import gate_score
from timingbench.runner import ScoreOptions


def corpus_probes(corpus: Any, annotations: Any, config: Config,
                  scenarios: dict[str, str] | None = None) -> tuple[list[Probe], dict[int, str]]:
    """Probes of an annotated corpus (module docstring) and the clip of each probe index."""
    scenarios = scenarios or {}
    ctx = float(config.params.evidence.context_s)
    earlier: dict[tuple[str, str], float] = {}
    for r in annotations.layer2:
        key = (r.clip, r.family)
        earlier[key] = min(earlier.get(key, float("inf")), float(r.onset_s))
    probes: list[Probe] = []
    clip_of: dict[int, str] = {}
    index = {ref.clip: i for i, ref in enumerate(corpus.refs)}
    for ref in corpus.refs:
        prompt = corpus.prompts[ref.prompt_id]
        for ev in prompt.events:
            if ev.kind not in ("instrument_entry", "instrument_exit") or ev.family == "mix":
                continue
            row = corpus.truth.get((ref.clip, ev.id))
            if row is None:
                continue
            kind = "entry" if ev.kind == "instrument_entry" else "exit"
            ci = index[ref.clip]
            clip_of[ci] = ref.clip
            if row.occurred and row.onset_s is not None:
                probes.append(Probe(ci, ev.family, float(row.onset_s), kind, "true"))
            else:
                pre = earlier.get((ref.clip, ev.family), float("inf")) < float(ev.time_s) - ctx \
                    or scenarios.get(ref.clip) == "pre_existing"
                probes.append(Probe(ci, ev.family, float(ev.time_s), kind, "pre_existing" if pre else "decoy"))
    return probes, clip_of


def evaluate_corpus(annotations_path: Path, clips_dir: Path, config: Config, *, backend: str = "trained",
                    prompts_path: Path | None = None, cache_dir: str | None = None) -> dict[str, Any]:
    """AUC table of one evidence backend on an annotated corpus.

    Returns
    -------
    report : dict
        ``table`` (:func:`~timingbench.evidence.metrics.auc_table`), ``backend``, ``n_probes``
        by role, ``errors`` (clips that could not be analysed).
    """
    ann = load_annotations(annotations_path)
    prompts = prompts_path or default_prompts_path(clips_dir, annotations_path)
    opts = ScoreOptions(separation="dsp", family_evidence=backend, cache_dir=cache_dir)
    corpus = load_corpus(clips_dir, prompts, ann, config, opts)
    from timingbench.calibration.groups import scenarios_from_manifest

    probes, clip_of = corpus_probes(corpus, ann, config, scenarios_from_manifest(clips_dir))
    def score(pr: Probe) -> float | None:
        ev = corpus.evidence.get(clip_of.get(pr.clip, ""))
        if ev is None or pr.family not in ev.curves:
            return None
        if ev.backend == "trained":
            changes = (ev.entered if pr.kind == "entry" else ev.left)[pr.family]
            return gate_score(ev.curves[pr.family], changes, ev.times, pr.time_s, params=config.params.evidence, kind=pr.kind)
        if pr.kind != "entry":
            return None
        from timingbench.identity import family_rise

        _, detail = family_rise(ev, pr.family, candidate_s=pr.time_s, semantic=config.params.semantic,
                                evidence_params=config.params.evidence)
        return detail.get("rise")

    counts: dict[str, int] = {}
    for pr in probes:
        counts[f"{pr.kind}/{pr.role}"] = counts.get(f"{pr.kind}/{pr.role}", 0) + 1
    return {"backend": backend, "table": auc_table(probes, score), "n_probes": counts, "errors": corpus.errors}
