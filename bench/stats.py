"""The one percentile every benchmark reports."""

from __future__ import annotations


def percentile(values: list[float], q: float) -> float:
    """The sample nearest the ``q`` quantile (``q`` from 0 to 1, so 0.95 is p95): the one at
    rank ``round(q * (n - 1))`` of the sorted samples, as numpy's ``method="nearest"``; 0.0
    when there are none (a round that timed nothing)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]
