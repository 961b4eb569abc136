"""bench/soak.py's memory figures: RSS by window, the server's own report at marks.

With `--memory-report` the soak starts its server with `--debug-memory` and reads
`GET /debug/memory` (server/memory.py) every `--memory-every` seconds of load: the first
read takes the baseline that later ones measure growth against. The report then gives:

- RSS by window of `--memory-every` seconds (first, last, mean, and the server's resident
  memory less tracemalloc's own bookkeeping at the mark that ends the window);
- the slope of RSS over the last half of the run (least squares), the figure that must
  flatten once the caches are full;
- the bounded caches' entries and capacities, and other sizes, at the last mark;
- the growth between the first and the last mark by object type and by source line.
"""

from __future__ import annotations

import json
import statistics
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class HasRss(Protocol):
    t: float
    rss_kb: int


@dataclass
class Mark:
    t: float  # seconds of load
    report: dict[str, Any]


def fetch(port: int, baseline: bool) -> dict[str, Any]:
    """The server's /debug/memory report (blocking: run it in a thread)."""
    url = f"http://127.0.0.1:{port}/debug/memory" + ("?baseline=1" if baseline else "")
    with urllib.request.urlopen(url, timeout=120) as reply:
        data: dict[str, Any] = json.loads(reply.read())
    return data


def slope_kb_per_hour(samples: Sequence[HasRss], since: float) -> tuple[float, int]:
    used = [s for s in samples if s.t >= since]
    if len(used) < 3:
        return float("nan"), len(used)
    fit = statistics.linear_regression([s.t for s in used], [s.rss_kb for s in used])
    return fit.slope * 3600, len(used)


def mb(kb: float) -> str:
    return f"{kb / 1024:.1f} MB"


def report(samples: Sequence[HasRss], marks: list[Mark], every: float, end_t: float) -> None:
    print(f"  memory by window of {every / 60:g} minutes (server RSS; 'less tracing' takes "
          "away tracemalloc's own memory at the window's end):")  # fmt: skip
    by_mark = {round(m.t / every): m for m in marks}
    start = 0.0
    while start < end_t - 1:
        stop = min(start + every, end_t)
        inside = [s for s in samples if start <= s.t <= stop]
        if inside:
            line = (f"    {start / 60:5.1f}-{stop / 60:5.1f} min: first {mb(inside[0].rss_kb)}, "
                    f"last {mb(inside[-1].rss_kb)}, mean "
                    f"{mb(statistics.fmean(s.rss_kb for s in inside))}")  # fmt: skip
            mark = by_mark.get(round(stop / every))
            if mark is not None and "tracemalloc_overhead_kb" in mark.report:
                r = mark.report
                line += (f"; at {mark.t / 60:.1f} min RSS {mb(r['rss_kb'])}, less tracing "
                         f"{mb(r['rss_kb'] - r['tracemalloc_overhead_kb'])}, traced "
                         f"{mb(r['traced_kb'])}")  # fmt: skip
            print(line)
        start = stop
    half = end_t / 2
    slope, used = slope_kb_per_hour(samples, half)
    print(f"  RSS slope over the last {(end_t - half) / 60:.0f} minutes: "
          f"{slope / 1024:+.2f} MB/hour ({used} samples)")  # fmt: skip
    if len(marks) >= 2:
        first, last = marks[0].report, marks[-1].report
        if "tracemalloc_overhead_kb" in first:
            net = [(m.t, m.report["rss_kb"] - m.report["tracemalloc_overhead_kb"]) for m in marks]
            late = [(t, v) for t, v in net if t >= half - 1]
            if len(late) >= 2:
                fit = statistics.linear_regression([t for t, _ in late], [v for _, v in late])
                print(f"  RSS less tracing, slope over the marks of the last half: "
                      f"{fit.slope * 3600 / 1024:+.2f} MB/hour ({len(late)} marks)")  # fmt: skip
            print(f"  traced Python memory: {mb(first['traced_kb'])} at "
                  f"{marks[0].t / 60:.1f} min, {mb(last['traced_kb'])} at "
                  f"{marks[-1].t / 60:.1f} min")  # fmt: skip
    if not marks:
        return
    last = marks[-1].report
    print(f"  bounded caches at {marks[-1].t / 60:.1f} min (entries / capacity): " + ", ".join(
        f"{n} {c['entries']}/{c['capacity']}" for n, c in last["caches"].items()))  # fmt: skip
    print("  other sizes: " + ", ".join(f"{n} {v}" for n, v in last["sizes"].items()))
    print(f"  live objects tracked by the collector: {last['objects']}")
    if len(marks) >= 2 and "growth_by_type" in last:
        span = f"{marks[0].t / 60:.1f} -> {marks[-1].t / 60:.1f} min"
        print(f"  growth by object type ({span}; objects):")
        for name, n in list(last["growth_by_type"].items())[:15]:
            print(f"    {n:+8d} {name}")
        print(f"  growth by source line of the allocation ({span}):")
        for d in last["growth_lines"][:15]:
            print(f"    {d['growth_kb']:+8d} KB {d['growth_blocks']:+8d} blocks  {d['where']}")
