"""The trained family evidence model: data recipe, training, inference and evaluation.

- :mod:`~timingbench.evidence.programs` — General MIDI programs, roles and registers per
  SPEC section 1 family (the training vocabulary).
- :mod:`~timingbench.evidence.layouts` — seeded multitrack clip layouts whose families enter
  and leave inside the clip.
- :mod:`~timingbench.evidence.dataset` — rendering (several soundfonts), real audio effects,
  frame labels and log-mel shards (``timingbench evidence make-data``).
- :mod:`~timingbench.evidence.model` — the network: presence per frame and the
  entered / left / nothing question around every frame.
- :mod:`~timingbench.evidence.train` — the seeded training loop (``timingbench evidence train``).
- :mod:`~timingbench.evidence.infer` — the shipped weights run on a clip's feature bank.
- :mod:`~timingbench.evidence.metrics` — entrance / exit AUCs per family (``timingbench evidence eval``).
"""
