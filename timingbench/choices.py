"""The names a run can choose between, each list defined once.

The command line (``choices=``), the Python API (its argument checks) and the modules that
act on a choice all read these tuples, so a new backend is added in one place.
"""

from __future__ import annotations

#: Source separation backends (:mod:`timingbench.features.separation`); ``auto`` is demucs
#: when its weights are present, else dsp.
SEPARATIONS = ("auto", "demucs", "dsp", "none")

#: Family-evidence backends that compute curves (:mod:`timingbench.identity.providers`).
FAMILY_EVIDENCE_BACKENDS = ("tagger", "trained", "musicnn", "clap")

#: The family evidence a run uses when none is asked for: the AudioSet tagger with the trained network.
DEFAULT_FAMILY_EVIDENCE = "tagger"

#: Backends whose evidence carries entered/left change probabilities (read by the identity rules).
CHANGE_BACKENDS = ("tagger", "trained")

#: What a scoring run may ask for: a backend, or ``none`` (identity not verified).
FAMILY_EVIDENCE_CHOICES = (*FAMILY_EVIDENCE_BACKENDS, "none")

#: Where the clips of a run are scored (:mod:`timingbench.executors`).
EXECUTORS = ("local", "ray")
