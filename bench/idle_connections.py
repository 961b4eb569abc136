#!/usr/bin/env python3
"""What an idle greeted player costs the race server: bytes and containers per connection.

    .venv/bin/python -m bench.idle_connections [--idle 20000] [--baseline-server EXE]

For each server (this checkout's `solitaire-server`, and with `--baseline-server` another
executable, e.g. a venv of main, in the same run), `--idle` connections are opened by
helper processes of 5,000 each (bench/server.py's `--hold-idle`), each greeted as a player
with a hello, and held:

- bytes: on a plain server, the growth of its resident memory (RSS) per connection;
- containers: on a server with `--debug-memory` (tracemalloc inflates its memory, hence
  the second server), the growth of the objects the garbage collector tracks per connection
  (after a full collection, from GET /debug/memory), and the types that grew most. Every
  container is one more object for each full collection to walk.

Target: under 10 KB per idle connection at 20,000.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.race_server import (
    RaceServer,
    idle_players,
    raise_open_files,
    rss_kb,
    run_on_redis,
    running_race_server,
    worker_pids,
)

TARGET_KB = 10  # per idle greeted player, at 20,000 of them
SHOWN_TYPES = 8  # types listed of the containers' growth


@dataclass
class Idle:
    """One server's figures."""

    name: str
    kb: float = 0.0  # resident memory per connection
    containers: float = 0.0  # tracked objects per connection
    counted: int = 0  # connections the containers were counted over
    by_type: dict[str, float] = field(default_factory=dict)  # the largest growths, per connection


def memory_report(server: RaceServer, baseline: bool = False) -> dict[str, Any]:
    query = "?baseline=1" if baseline else ""
    with urllib.request.urlopen(server.page(f"/debug/memory{query}"), timeout=600) as reply:
        report: dict[str, Any] = json.load(reply)
        return report


async def measure(
    name: str, exe: Path | None, redis_url: str, count: int, one_process: int
) -> Idle:
    """Bytes at `count` connections (on as many worker processes as it takes to hold them,
    their memory summed); containers at up to `one_process` (one process's report)."""
    out = Idle(name)
    workers = math.ceil(count / one_process)
    async with running_race_server(redis_url, {}, exe, workers, name) as server:
        await asyncio.sleep(0.5)
        pids = worker_pids(server.proc.pid) if workers > 1 else [server.proc.pid]
        before = sum(rss_kb(pid) for pid in pids)
        async with idle_players(server.url, count, log=server.log):
            out.kb = (sum(rss_kb(pid) for pid in pids) - before) / count
    count = min(count, one_process)
    out.counted = count
    async with running_race_server(
        redis_url, {"SOLITAIRE_DEBUG_MEMORY": "1"}, exe, name=name
    ) as server:
        first = await asyncio.to_thread(memory_report, server, True)
        async with idle_players(server.url, count, log=server.log):
            last = await asyncio.to_thread(memory_report, server)
        out.containers = (last["objects"] - first["objects"]) / count
        grown = last.get("growth_by_type", {})
        top = sorted(grown.items(), key=lambda kv: -kv[1])[:SHOWN_TYPES]
        out.by_type = {t: n / count for t, n in top}
    return out


async def run(args: argparse.Namespace, redis_url: str) -> int:
    builds: list[tuple[str, Path | None]] = [("this server", None)]
    if args.baseline_server is not None:
        builds.append(("baseline", args.baseline_server))
    results = []
    for name, exe in builds:
        print(f"  {name}: {args.idle} idle players (load average "
              f"{os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
        results.append(await measure(name, exe, redis_url, args.idle, args.one_process))
    print(f"\n{'server':<14}{'KB/conn':>9}{'containers/conn':>17}  largest growths per connection")
    for r in results:
        types = ", ".join(f"{t} {n:.1f}" for t, n in r.by_type.items())
        print(f"{r.name:<14}{r.kb:9.1f}{r.containers:17.1f}  {types}")
    mine = results[0]
    verdict = "under" if mine.kb < TARGET_KB else "OVER"
    print(f"\n{args.idle} idle players: {mine.kb:.1f} KB each ({verdict} the {TARGET_KB} KB "
          f"target), {mine.containers:.1f} containers each (counted over {mine.counted} "
          f"connections of one process)")  # fmt: skip
    if len(results) > 1:
        base = results[1]
        print(f"against the baseline, same run: {mine.kb / base.kb:.2f}x the bytes, "
              f"{mine.containers / base.containers:.2f}x the containers")  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=20000, help="connections (default 20000)")
    parser.add_argument(
        "--baseline-server", type=Path, metavar="EXE", help="another server measured alike"
    )
    args = parser.parse_args()
    if not 1 <= args.idle <= 50000:
        parser.error("--idle 1..50000")
    if args.baseline_server is not None and not args.baseline_server.is_file():
        parser.error(f"--baseline-server: no such executable {args.baseline_server}")
    # Each connection takes a descriptor in a helper and one in the server.
    # (One process may hold fewer where the hard limit is lower: then the bytes are
    # measured on `--workers`, as bench/server.py's idle phase does.)
    args.one_process = min(args.idle, raise_open_files(args.idle + 1000) - 500)
    return run_on_redis(run, args)


if __name__ == "__main__":
    sys.exit(main())
