"""Subcommand modules of the ``timingbench`` command line (one per task)."""
