"""Scorers of other benchmarks on the interval core: TAG-Bench, MGBench and AudioRAG.

- :mod:`~timingbench.suites.span_parse`: the time-span parsing core shared by TAG-Bench
  and MGBench (with :mod:`~timingbench.suites.answer_scope` and
  :mod:`~timingbench.suites.answer_tables`);
- :mod:`~timingbench.suites.tag`: TAG-Bench (its parsing layer, files, metrics, report);
- :mod:`~timingbench.suites.mgbench`: MGBench (files, span extraction, grounding,
  understanding, a whole file);
- :mod:`~timingbench.suites.audiorag`: AudioRAG (files, audio check, judges, scoring);
- :mod:`~timingbench.suites.judge`: the LLM judge client, prompts, offline judge and reply
  readers.

The top-level ``benchmarks/`` folder holds speed measurements, not scorers.
"""
