"""Scorers of the other benchmarks on the interval core: TAG-Bench, MGBench, AudioRAG."""
