"""Instrument identity: which family sounds when, and did it enter or leave here.

One package answers one question. Its modules, from the curves up:

- :mod:`~timingbench.identity.window` — the one before/after window convention and the
  one logistic / log-odds pair every rule reads;
- :mod:`~timingbench.identity.evidence` — :class:`~timingbench.identity.evidence.FamilyEvidence`,
  a clip's per-family curves, whatever provider made them;
- :mod:`~timingbench.identity.presence_curves` — the tagger's frame-wise logits turned into presence
  and change curves (arithmetic on arrays, no model);
- :mod:`~timingbench.identity.tagger`, :mod:`~timingbench.identity.providers` — the presence
  providers (the AudioSet tagger, the render-trained network, musicnn, CLAP) behind one call,
  :func:`~timingbench.identity.providers.family_evidence`;
- :mod:`~timingbench.identity.singing` — the vocals presence: the singing detector's log-odds
  of singing and of speech on the evidence grid, read on the vocals stem or the mix;
- :mod:`~timingbench.identity.changepoint` — the best two-level step of a presence curve;
- :mod:`~timingbench.identity.decide` — ``measure`` (statistics of a step, no thresholds),
  ``step_gates`` (the one place that says verified or not, and when) for the judged families,
  and ``identity_verdict`` (why an unjudged family's candidate is exempt);
- :mod:`~timingbench.identity.rules` — what the offline evaluations and the timbre match read
  (the network's change heads, the taggers' log-odds rise);
- :mod:`~timingbench.identity.training` — the family network's training data, loop and
  evaluation (offline).

The scorer (:func:`timingbench.scoring.run_detector`) is the one caller that asks whether a
family is judged; no detector imports this package.
"""
