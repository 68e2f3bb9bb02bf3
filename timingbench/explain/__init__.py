"""Seeing why: one scored event re-derived and drawn on a single time axis (``timingbench explain``).

Modules: :mod:`.results` (reading a results folder back), :mod:`.event` (re-running the
event's detector and gates), :mod:`.thresholds` (each gate's statistics against the
constants that judge them) and :mod:`.plot` (the PNG). The package itself imports
nothing, so the labelling page can read results without loading the detectors.
"""
