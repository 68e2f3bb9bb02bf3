"""The trained family evidence model offline: data recipe, training and evaluation.

The network itself and its inference are :mod:`timingbench.evidence_net` (run time).

- :mod:`~timingbench.evidence.programs` — General MIDI programs, roles and registers per
  formats §1 family (the training vocabulary).
- :mod:`~timingbench.evidence.layouts` — seeded multitrack clip layouts whose families enter
  and leave inside the clip.
- :mod:`~timingbench.evidence.kits` — sound sources beyond the GM soundfonts: real drum kits
  (avldrums SF2, a Hydrogen WAV-kit sampler) and freepats through TiMidity++.
- :mod:`~timingbench.evidence.dataset` — rendering (several sound sets), real audio effects,
  frame labels and log-mel shards (``timingbench evidence make-data``).
- :mod:`~timingbench.evidence.arrays` — the memory-mapped training arrays of a data folder
  (``timingbench evidence cache-arrays``).
- :mod:`~timingbench.evidence.train` — the seeded, resumable training loop (``timingbench evidence train``).
- :mod:`~timingbench.evidence.metrics` — entrance / exit AUCs per family (``timingbench evidence eval``).
"""
