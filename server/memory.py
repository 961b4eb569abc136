"""What the server's memory holds: its bounded caches' sizes, and (when asked) tracemalloc.

The caches' entries and capacities are /metrics gauges (`solitaire_cache_entries`,
`solitaire_cache_capacity`), read at each scrape. With `--debug-memory` the process also
traces its allocations (tracemalloc, one frame: it costs CPU and memory of its own, so it is
off by default) and answers `GET /debug/memory` with a JSON report: resident memory, the
caches, the live objects by type and the allocations by source line, and their growth since
the first report that asked for a baseline (`?baseline=1`). bench/soak.py reads it to tell
caches filling from a leak.
"""

from __future__ import annotations

import gc
import resource
import tracemalloc
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from prometheus_client import CollectorRegistry
from prometheus_client.core import GaugeMetricFamily

TOP = 25  # lines of each table in a report


class Bounded(Protocol):
    @property
    def capacity(self) -> int: ...

    def __len__(self) -> int: ...


class CacheGauges:
    """The bounded caches' entries and capacities, read at each scrape."""

    def __init__(self, caches: Mapping[str, Bounded], registry: CollectorRegistry) -> None:
        self.caches = caches
        registry.register(self)

    def describe(self) -> list[GaugeMetricFamily]:
        return self._families()

    def collect(self) -> list[GaugeMetricFamily]:
        return self._families()

    def _families(self) -> list[GaugeMetricFamily]:
        entries = GaugeMetricFamily(
            "solitaire_cache_entries", "Entries held by each bounded cache", labels=["cache"]
        )
        capacity = GaugeMetricFamily(
            "solitaire_cache_capacity",
            "The most entries each bounded cache holds",
            labels=["cache"],
        )
        for name, cache in self.caches.items():
            entries.add_metric([name], len(cache))
            capacity.add_metric([name], cache.capacity)
        return [entries, capacity]


def rss_kb() -> int:
    """This process's resident memory now (from /proc; 0 where there is none)."""
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
    except OSError:
        return 0
    return pages * resource.getpagesize() // 1024


def objects_by_type() -> Counter[str]:
    """Live objects the collector tracks, by type name (containers only: ints and strings
    show up in the allocations by line instead)."""
    return Counter(type(o).__qualname__ for o in gc.get_objects())


@dataclass
class MemoryDebug:
    """The `/debug/memory` report; `start` begins tracing (once, at start-up)."""

    caches: Mapping[str, Bounded]
    extra: Callable[[], dict[str, int]] = dict  # other sizes worth watching (sessions, ...)
    _baseline: tuple[tracemalloc.Snapshot, Counter[str]] | None = field(default=None)

    def start(self) -> None:
        if not tracemalloc.is_tracing():
            tracemalloc.start(1)

    def report(self, baseline: bool = False) -> dict[str, Any]:
        """The report; with `baseline` (and none taken yet) its snapshot becomes the one
        later reports measure growth against. A full collection comes first, so that the
        figures are of what is alive, not of garbage waiting for the collector's turn."""
        collected = gc.collect()
        types = objects_by_type()
        out: dict[str, Any] = {
            "rss_kb": rss_kb(),
            "caches": {
                n: {"entries": len(c), "capacity": c.capacity} for n, c in self.caches.items()
            },
            "sizes": self.extra(),
            "collected": collected,
            "objects": sum(types.values()),
            "objects_by_type": dict(types.most_common(TOP)),
            "tracing": tracemalloc.is_tracing(),
        }
        if not tracemalloc.is_tracing():
            return out
        current, peak = tracemalloc.get_traced_memory()
        snapshot = tracemalloc.take_snapshot().filter_traces(
            (tracemalloc.Filter(False, tracemalloc.__file__),)
        )
        out["traced_kb"] = current // 1024
        out["traced_peak_kb"] = peak // 1024
        out["tracemalloc_overhead_kb"] = tracemalloc.get_tracemalloc_memory() // 1024
        out["top_lines"] = [_stat(s) for s in snapshot.statistics("lineno")[:TOP]]
        if self._baseline is None and baseline:
            self._baseline = (snapshot, types)
        if self._baseline is not None:
            before, before_types = self._baseline
            diff = snapshot.compare_to(before, "lineno")
            out["growth_lines"] = [_diff(d) for d in diff[:TOP]]
            grown = Counter(types)
            grown.subtract(before_types)
            ordered = sorted(grown.items(), key=lambda kv: -abs(kv[1]))
            out["growth_by_type"] = dict(ordered[:TOP])
        return out


def _where(stat: tracemalloc.Statistic | tracemalloc.StatisticDiff) -> str:
    frame = stat.traceback[0]
    return f"{frame.filename}:{frame.lineno}"


def _stat(stat: tracemalloc.Statistic) -> dict[str, Any]:
    return {"where": _where(stat), "kb": stat.size // 1024, "blocks": stat.count}


def _diff(diff: tracemalloc.StatisticDiff) -> dict[str, Any]:
    return {
        "where": _where(diff),
        "kb": diff.size // 1024,
        "growth_kb": diff.size_diff // 1024,
        "blocks": diff.count,
        "growth_blocks": diff.count_diff,
    }
