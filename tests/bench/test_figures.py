"""bench/figures.py: the one percentile every bench prints is nearest rank."""

from __future__ import annotations

import math
import random

import pytest

from bench.figures import histogram_percentile, percentile


def test_nearest_rank_on_ten_values() -> None:
    # Ranks worked out by hand: ceil(q * 10) of 10, 20, ..., 100 in any order.
    values = [70.0, 10.0, 100.0, 40.0, 20.0, 90.0, 30.0, 60.0, 50.0, 80.0]
    assert percentile(values, 0.0) == 10.0  # rank at least 1
    assert percentile(values, 0.5) == 50.0  # rank 5, not the mean of the 5th and 6th
    assert percentile(values, 0.9) == 90.0  # rank 9
    assert percentile(values, 0.91) == 100.0  # rank ceil(9.1) = 10
    assert percentile(values, 0.99) == 100.0
    assert percentile(values, 1.0) == 100.0


def test_a_p99_of_a_hundred_values_is_the_99th() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 0.999) == 100.0


def test_no_values_is_nan_and_out_of_range_is_refused() -> None:
    assert math.isnan(percentile([], 0.5))
    assert math.isnan(histogram_percentile({}, 0.5, float))
    with pytest.raises(ValueError):
        percentile([1.0], 1.5)


def test_a_histogram_of_single_values_agrees_with_the_list() -> None:
    rng = random.Random(7)
    values = [rng.randrange(40) for _ in range(333)]
    counts: dict[int, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    for q in (0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0):
        assert histogram_percentile(counts, q, float) == percentile(map(float, values), q)
