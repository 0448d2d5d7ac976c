"""The benchmarks: run one as ``python -m bench.NAME`` from the repository root (``make bench``
runs them all through bench/report.py). ``python bench/NAME.py`` works too: ``make setup``'s
editable install puts the repository root on the path, so the absolute ``bench.`` imports
resolve. See docs/benchmarks.md."""
