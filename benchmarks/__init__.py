"""Benchmarks of PhysKey (not shipped with the extension): `python -m benchmarks.bench`, results in RESULTS.md."""
