"""Event-family detectors: each returns candidate times plus the evidence each gate needs."""
