"""Benchmarks: figures, not tests (bench/README.md). Run a script as `python -m bench.<name>`."""
