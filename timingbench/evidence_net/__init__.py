"""The family evidence network at run time: its architecture and its inference.

- :mod:`~timingbench.evidence_net.model` — the network: presence per frame and the
  entered / left / nothing question around every frame; weights files.
- :mod:`~timingbench.evidence_net.infer` — the shipped weights run on a clip's feature bank.
- :mod:`~timingbench.evidence_net.tagger` — the pretrained AudioSet tagger (EfficientAT mn04,
  ``docs/tagger-model.md``) on audio: weights, logits and embeddings every 0.32 s, the bank
  memo; its network in :mod:`~timingbench.evidence_net.tagger_model`, its log-mel in
  :mod:`~timingbench.evidence_net.tagger_frontend`.

Its offline training (data recipe, arrays, training loop, evaluation) is
:mod:`timingbench.evidence`, which builds on this package and never the other way round.
"""
