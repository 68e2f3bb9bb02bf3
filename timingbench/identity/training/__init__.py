"""The trained family evidence model offline: data recipe, training and evaluation.

The network itself and its inference are :mod:`timingbench.models` (run time).

- :mod:`~timingbench.identity.training.programs` — General MIDI programs, roles and registers per
  formats §1 family (the training vocabulary).
- :mod:`~timingbench.identity.training.layouts` — seeded multitrack clip layouts whose families enter
  and leave inside the clip.
- :mod:`~timingbench.render.kits` — sound sources beyond the GM soundfonts: real drum kits
  (avldrums SF2, a Hydrogen WAV-kit sampler) and freepats through TiMidity++.
- :mod:`~timingbench.identity.training.dataset` — rendering (several sound sets), real audio effects,
  frame labels and log-mel shards (``timingbench evidence make-data``).
- :mod:`~timingbench.identity.training.arrays` — the memory-mapped training arrays of a data folder
  (``timingbench evidence cache-arrays``).
- :mod:`~timingbench.identity.training.train` — the seeded, resumable training loop (``timingbench evidence train``).
- :mod:`~timingbench.identity.training.metrics` — entrance / exit AUCs per family (``timingbench evidence eval``).
"""
