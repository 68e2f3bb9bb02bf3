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
:mod:`timingbench.identity.training.evaluate`), or for the taggers the log-odds rise of
:func:`timingbench.identity.family_rise` (entrances only).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from timingbench.annotation_io import load_annotations
from timingbench.calibration.evaluate import default_prompts_path, load_corpus
from timingbench.choices import DEFAULT_FAMILY_EVIDENCE
from timingbench.config import Config
from timingbench.identity.rules import gate_score
from timingbench.identity.training.metrics import Probe, auc_table
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


def _annotations(path: Path, split: str | None) -> Any:
    """The annotation rows of ``path``, only those of ``split`` when given."""
    ann = load_annotations(path)
    if split is not None:
        ann = dataclasses.replace(ann, layer1=[r for r in ann.layer1 if r.split == split],
                                  layer2=[r for r in ann.layer2 if r.split == split])
    return ann


def evaluate_corpus(annotations_path: Path, clips_dir: Path, config: Config, *, backend: str = DEFAULT_FAMILY_EVIDENCE,
                    prompts_path: Path | None = None, cache_dir: str | None = None,
                    split: str | None = None) -> dict[str, Any]:
    """AUC table of one evidence backend on an annotated corpus.

    ``split`` keeps only the annotation rows of that split (``dev`` for model selection).

    Returns
    -------
    report : dict
        ``table`` (:func:`~timingbench.identity.training.metrics.auc_table`), ``backend``, ``n_probes``
        by role, ``errors`` (clips that could not be analysed).
    """
    ann = _annotations(annotations_path, split)
    prompts = prompts_path or default_prompts_path(clips_dir, annotations_path)
    opts = ScoreOptions(separation="dsp", family_evidence=backend, cache_dir=cache_dir)
    corpus = load_corpus(clips_dir, prompts, ann, config, opts)
    from timingbench.calibration.groups import scenarios_from_manifest

    probes, clip_of = corpus_probes(corpus, ann, config, scenarios_from_manifest(clips_dir))
    def score(pr: Probe) -> float | None:
        ev = corpus.evidence.get(clip_of.get(pr.clip, ""))
        if ev is None or pr.family not in ev.curves:
            return None
        if ev.has_change_heads:
            changes = (ev.entered if pr.kind == "entry" else ev.left)[pr.family]
            return gate_score(ev.curves[pr.family], changes, ev.times, pr.time_s,
                              params=config.params.evidence, kind=pr.kind)
        if pr.kind != "entry":
            return None
        from timingbench.identity.rules import family_rise

        _, detail = family_rise(ev, pr.family, candidate_s=pr.time_s, semantic=config.params.semantic,
                                evidence_params=config.params.evidence)
        return detail.get("rise")

    return {"backend": backend, "table": auc_table(probes, score), "n_probes": probe_counts(probes),
            "errors": corpus.errors}


def evaluate_corpus_weights(annotations_path: Path, clips_dir: Path, config: Config, *,
                            weights: Mapping[str, Path], split: str | None = None,
                            prompts_path: Path | None = None, cache_dir: str | None = None) -> dict[str, Any]:
    """AUC tables of several weights files on an annotated corpus, every family judged.

    Unlike :func:`evaluate_corpus` (the scorer's evidence: exempt families have no curve),
    each weights file is run on every clip's bank log-mel and all 11 families are scored
    with the gate's score, so designs can be compared family by family.

    Returns
    -------
    report : dict
        ``tables``: name -> :func:`~timingbench.identity.training.metrics.auc_table`; ``n_probes``;
        ``errors``; ``split``.
    """
    from timingbench.identity.training.programs import FAMILIES
    from timingbench.models.family_net_infer import run_network

    ann = _annotations(annotations_path, split)
    prompts = prompts_path or default_prompts_path(clips_dir, annotations_path)
    opts = ScoreOptions(separation="dsp", family_evidence="trained", cache_dir=cache_dir)
    corpus = load_corpus(clips_dir, prompts, ann, config, opts)
    from timingbench.calibration.groups import scenarios_from_manifest

    probes, clip_of = corpus_probes(corpus, ann, config, scenarios_from_manifest(clips_dir))
    tables = {}
    for name, path in weights.items():
        outs = {clip: run_network(bank.logmel, sr=bank.sr, hop=bank.hop, weights=Path(path))
                for clip, bank in corpus.banks.items()}

        def score(pr: Probe, outs: dict[str, Any] = outs) -> float | None:
            out = outs.get(clip_of.get(pr.clip, ""))
            if out is None:
                return None
            k = FAMILIES.index(pr.family)
            changes = (out.entered if pr.kind == "entry" else out.left)[k]
            return gate_score(out.presence[k], changes, out.times, pr.time_s, params=config.params.evidence,
                              kind=pr.kind)

        tables[name] = auc_table(probes, score)
    return {"tables": tables, "n_probes": probe_counts(probes), "errors": corpus.errors, "split": split}


def evaluate_corpus_designs(corpora: Sequence[tuple[Path, Path]], config: Config, *,
                            designs: tuple[str, ...] | None = None, split: str | None = None,
                            prompts_path: Path | None = None, cache_dir: str | None = None,
                            jobs: int = 1) -> dict[str, Any]:
    """AUC tables of the ``tagger`` evidence's designs, every family judged, pooled over annotated corpora.

    Each design (:mod:`timingbench.identity.tagger`: the network alone, the tagger
    alone, their fusion; all by default) is
    applied to every family, exempt ones included, and the probes of every corpus are scored
    with the gate's score (:func:`~timingbench.identity.gate_score`) and pooled before the AUC,
    so the designs can be compared family by family.

    Parameters
    ----------
    corpora : sequence of (Path, Path)
        ``(annotations, clips folder)`` of each corpus; a corpus with no row of ``split`` is
        left out.
    config : Config
    designs : tuple of str, optional
        The designs compared (default: all).
    split : str, optional
        Only the annotation rows of this split (``dev`` chooses; ``validation`` only measures).
    prompts_path : Path, optional
        The prompt set (default: beside each corpus's clips).
    cache_dir : str, optional
        Feature cache folder.
    jobs : int
        Worker processes analysing the clips.

    Returns
    -------
    report : dict
        ``tables``: design -> :func:`~timingbench.identity.training.metrics.auc_table`; ``n_probes``;
        ``errors``; ``split``.
    """
    from timingbench.calibration.groups import scenarios_from_manifest
    from timingbench.executors import LocalExecutor
    from timingbench.identity.providers import tagger_tables
    from timingbench.identity.tagger import DESIGNS, tagger_evidence

    opts = ScoreOptions(separation="dsp", family_evidence="tagger", cache_dir=cache_dir)
    loaded, errors = [], []
    for annotations_path, clips_dir in corpora:
        ann = _annotations(annotations_path, split)
        if not ann.layer1:
            continue
        prompts = prompts_path or default_prompts_path(clips_dir, annotations_path)
        corpus = load_corpus(clips_dir, prompts, ann, config, opts, executor=LocalExecutor(jobs))
        probes, clip_of = corpus_probes(corpus, ann, config, scenarios_from_manifest(clips_dir))
        loaded.append((corpus, probes, clip_of))
        errors += corpus.errors
    # the probes of every corpus in one list: clip indices are made distinct per corpus
    offset = 1 + max((len(c.refs) for c, _, _ in loaded), default=0)
    pooled = [(k, dataclasses.replace(pr, clip=k * offset + pr.clip), pr)
              for k, (_, probes, _) in enumerate(loaded) for pr in probes]
    classes, nonmusic, _ = tagger_tables(config.params.families)
    tables = {}
    for design in designs or DESIGNS:
        sec = dataclasses.replace(config.params.evidence, design_by_family={f: design for f in classes})
        scores: dict[Probe, float | None] = {}
        for k, (corpus, _, clip_of) in enumerate(loaded):
            evs = {clip: tagger_evidence(bank, evidence_params=sec, tagger_params=config.params.tagger,
                                         classes=classes, nonmusic_classes=nonmusic, exempt={})
                   for clip, bank in corpus.banks.items()}
            for key, pr in ((q, pr) for j, q, pr in pooled if j == k):
                ev = evs.get(clip_of.get(pr.clip, ""))
                scores[key] = None
                if ev is not None and pr.family in ev.curves:
                    changes = (ev.entered if pr.kind == "entry" else ev.left)[pr.family]
                    scores[key] = gate_score(ev.curves[pr.family], changes, ev.times, pr.time_s,
                                             params=config.params.evidence, kind=pr.kind)
        tables[design] = auc_table([q for _, q, _ in pooled], scores.__getitem__)
    return {"tables": tables, "n_probes": probe_counts([q for _, q, _ in pooled]), "errors": errors,
            "split": split}


def probe_counts(probes: Sequence[Probe]) -> dict[str, int]:
    """How many probes of each ``kind/role`` (``entry/true``, ``exit/decoy``, ...)."""
    counts: dict[str, int] = {}
    for pr in probes:
        counts[f"{pr.kind}/{pr.role}"] = counts.get(f"{pr.kind}/{pr.role}", 0) + 1
    return counts
