"""The one percentile every bench prints: nearest rank.

The q-percentile (q in 0..1) of n values is the value of rank ceil(q·n) (at least 1)
among them in ascending order: the smallest value that at least a fraction q of them do
not exceed. It is always one of the values measured, never an interpolation, so a p99
never reads below a time some request actually took more than 1 % of the time. With no
values it is nan. A histogram's percentile (bench/capacity_bots.py) is the same rank
counted over its buckets, read at the bucket's upper edge.

Every figure a bench labels pNN (p50, p90, p99, p99.9) is this. A "median" of a few
repeated runs (the middle run's figures) is statistics.median and labelled "median".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping


def nearest_rank(q: float, count: int) -> int:
    """The 1-based rank of the q-percentile among `count` values."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"a percentile is of 0..1, not {q}")
    return max(1, math.ceil(q * count))


def percentile(values: Iterable[float], q: float) -> float:
    """The q-percentile (0..1) of `values`, nearest rank; nan when there are none."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[nearest_rank(q, len(ordered)) - 1]


def histogram_percentile(
    counts: Mapping[int, int], q: float, upper_edge: Callable[[int], float]
) -> float:
    """The q-percentile of a histogram of bucket index -> count, nearest rank, read at
    `upper_edge(bucket)` (so it never reads low); nan when it is empty."""
    total = sum(counts.values())
    if not total:
        return math.nan
    rank = nearest_rank(q, total)
    seen = 0
    for index in sorted(counts):
        seen += counts[index]
        if seen >= rank:
            return upper_edge(index)
    raise AssertionError("the ranks add up to the total")
