"""The family evidence network at run time: its architecture and its inference.

- :mod:`~timingbench.evidence_net.model` — the network: presence per frame and the
  entered / left / nothing question around every frame; weights files.
- :mod:`~timingbench.evidence_net.infer` — the shipped weights run on a clip's feature bank.

Its offline training (data recipe, arrays, training loop, evaluation) is
:mod:`timingbench.evidence`, which builds on this package and never the other way round.
"""
