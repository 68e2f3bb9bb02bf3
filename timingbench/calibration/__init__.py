"""Calibration and validation: annotations, sweeps, floors, confusion profile, gain check."""
