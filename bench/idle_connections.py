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
import contextlib
import json
import math
import os
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.race_server import (
    ROOT,
    RaceServer,
    bench_module,
    drop_namespace,
    raise_open_files,
    rss_kb,
    run_on_redis,
    start_race_server,
    wait_healthy,
    worker_pids,
)

TARGET_KB = 10  # per idle greeted player, at 20,000 of them
PER_HELPER = 5000  # connections one helper process opens and holds
SHOWN_TYPES = 8  # types listed of the containers' growth


@dataclass
class Idle:
    """One server's figures."""

    name: str
    kb: float = 0.0  # resident memory per connection
    containers: float = 0.0  # tracked objects per connection
    counted: int = 0  # connections the containers were counted over
    by_type: dict[str, float] = field(default_factory=dict)  # the largest growths, per connection


@contextlib.asynccontextmanager
async def held(server: RaceServer, count: int, url: str | None = None) -> AsyncIterator[None]:
    """`count` greeted connections to `server` (through `url`, a balancer in front of it,
    if given), held by helper processes while inside."""
    url = url or server.url
    helpers = []
    try:
        # One helper after another: all at once, a thousand handshakes queue behind
        # thousands of first hellos on a loaded machine, past the server's open timeout.
        for first in range(0, count, PER_HELPER):
            n = min(PER_HELPER, count - first)
            h = await asyncio.create_subprocess_exec(
                *bench_module("bench.server", "--hold-idle", url, str(n), str(first)),
                "--hello",
                cwd=ROOT,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            helpers.append(h)
            assert h.stdout is not None
            if (await h.stdout.readline()).strip() != b"ready":
                tail = "".join(server.log.read_text().splitlines(keepends=True)[-15:])
                raise RuntimeError(f"a helper failed (exit code {await h.wait()}); "
                                   f"the server's log ends:\n{tail}")  # fmt: skip
        await asyncio.sleep(1.0)  # the last hellos' replies written, the loop settled
        yield
    finally:
        for h in helpers:
            assert h.stdin is not None
            h.stdin.close()
        for h in helpers:
            await h.wait()


def memory_report(server: RaceServer, baseline: bool = False) -> dict[str, Any]:
    query = "?baseline=1" if baseline else ""
    with urllib.request.urlopen(server.page(f"/debug/memory{query}"), timeout=600) as reply:
        report: dict[str, Any] = json.load(reply)
        return report


@contextlib.asynccontextmanager
async def started(
    tmp: Path,
    name: str,
    redis_url: str,
    exe: Path | None,
    settings: dict[str, str],
    workers: int = 1,
) -> AsyncIterator[RaceServer]:
    server = start_race_server(tmp, name, "", redis_url, exe, workers, settings)
    try:
        await asyncio.to_thread(wait_healthy, server, 60)
        deadline = time.monotonic() + 60
        while workers > 1 and server.log.read_text().count(" listening ") < workers:
            if time.monotonic() > deadline:
                raise RuntimeError(f"the {workers} workers did not start; see {server.log}")
            await asyncio.sleep(0.1)
        yield server
    finally:
        try:
            await asyncio.to_thread(server.stop)
        finally:
            await drop_namespace(redis_url, server.namespace)


async def measure(
    tmp: Path, name: str, exe: Path | None, redis_url: str, count: int, one_process: int
) -> Idle:
    """Bytes at `count` connections (on as many worker processes as it takes to hold them,
    their memory summed); containers at up to `one_process` (one process's report)."""
    out = Idle(name)
    workers = math.ceil(count / one_process)
    async with started(tmp, name, redis_url, exe, {}, workers) as server:
        await asyncio.sleep(0.5)
        pids = worker_pids(server.proc.pid) if workers > 1 else [server.proc.pid]
        before = sum(rss_kb(pid) for pid in pids)
        async with held(server, count):
            out.kb = (sum(rss_kb(pid) for pid in pids) - before) / count
    count = min(count, one_process)
    out.counted = count
    async with started(tmp, name, redis_url, exe, {"SOLITAIRE_DEBUG_MEMORY": "1"}) as server:
        first = await asyncio.to_thread(memory_report, server, True)
        async with held(server, count):
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
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as d:
        for name, exe in builds:
            print(f"  {name}: {args.idle} idle players (load average "
                  f"{os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
            results.append(
                await measure(Path(d), name, exe, redis_url, args.idle, args.one_process)
            )
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
