#!/usr/bin/env python3
"""Soak of the race server: every kind of load together, for minutes, and what it left.

    .venv/bin/python -m bench.soak [--minutes 10] [--tables 3] [--bot-races 2]
        [--dailies 1] [--practice 2] [--pace 0.5] [--burst 20]

What it does (loopback only, bounded: at most 120 minutes and a few dozen connections,
stops by itself):

- starts a real `solitaire-server` (REDIS_URL if set, else a valkey-server of the bench's
  own in a temporary directory, as bench/server.py does) in a namespace of its own, with
  the server's default rate limits and daily deal preparation; the per-address admission
  limits are the defaults, raised only as far as the soak's own clients need (they all
  come from 127.0.0.1), and said in the report;
- runs, together, until `--minutes` have passed (bench/soak_load.py, bench/soak_abuse.py):
  race tables of 2 to 4 players, races against server bots, daily attempts of new
  players, practice games with hints and undos, each player at a human pace (log-normal
  think times around `--pace` seconds), and one abusive client (floods, malformed and
  oversized frames, wrong types, other players' games, replays of old moves, bursts of
  new connections within the admission limits);
- samples the server's resident memory and CPU time (and its solver processes') from
  /proc every few seconds, and prints progress every 30 s;
- at the end, once every client has stopped: checks that every acknowledged move is in
  the store (each game's stored move list as long as its last acknowledged state says,
  no shorter and no longer), stops the server with SIGTERM and reads its log for ERROR
  lines.

With `--memory-report` the server runs with `--debug-memory`, and every `--memory-every`
seconds (600) the soak reads its /debug/memory report (bench/soak_memory.py): RSS by window,
the slope over the last half of the run, the bounded caches' sizes, and what grew between
the first and the last report by object type and by source line.

Reports requests by kind, what each kind of load did, real errors by kind (the abusive
client's expected refusals counted apart), p50/p99 acknowledgement time of moves,
memory at start and end and its growth per hour (a least-squares line through the
samples after the warm-up), CPU, and acknowledged-vs-stored moves. Exits 1 if any real
error happened or a stored count differs, else 0.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from bench import soak_memory
from bench.figures import percentile
from bench.race_server import (
    RaceServer,
    cpu_s,
    drop_namespace,
    raise_open_files,
    rss_kb,
    start_race_server,
    wait_port,
)
from bench.server import stored_counts
from bench.soak_abuse import Abuser
from bench.soak_load import (
    DAILY_PLAYER_EVERY_S,
    Soak,
    Tally,
    bot_races,
    daily_player,
    practice_player,
    race_table,
)
from server.config import DEFAULT
from server.store.embedded import FSYNC_POLICIES, EmbeddedRedis

MAX_MINUTES = 120
PROGRESS_EVERY_S = 30.0
DRAIN_S = 120.0  # for clients to finish what they are doing (a timed race's result)
# The kinds of load, as the report names them (tests/bench/test_soak.py looks for each).
LOAD_KINDS = ("races", "races with server bots", "daily attempts", "practice", "abusive client")


@dataclass
class Sample:
    t: float  # seconds since the load began
    rss_kb: int
    cpu_s: float
    workers_rss_kb: int  # the server's child processes: its solver pool
    workers_cpu_s: float


@dataclass
class Sampler:
    """The server's memory and CPU from /proc, every `every` seconds."""

    pid: int
    every: float
    began: float = field(default_factory=time.monotonic)
    samples: list[Sample] = field(default_factory=list)

    def take(self) -> Sample:
        workers = descendants(self.pid)
        sample = Sample(
            t=time.monotonic() - self.began,
            rss_kb=rss_kb(self.pid),
            cpu_s=cpu_s(self.pid),
            workers_rss_kb=sum(_or_zero(rss_kb, w) for w in workers),
            workers_cpu_s=sum(_or_zero(cpu_s, w) for w in workers),
        )
        self.samples.append(sample)
        return sample

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            self.take()


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (the solver pool's workers and its helpers)."""
    out: list[int] = []
    todo = [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(k) for k in f.read().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


T = TypeVar("T")


def _or_zero(read: Callable[[int], T], pid: int) -> T | int:
    try:
        return read(pid)
    except OSError:  # gone between the listing and the read
        return 0


# ---------------------------------------------------------------- figures


def growth_per_hour(samples: list[Sample], warmup: float, attr: str) -> tuple[float, int]:
    """(KB per hour, samples used): the slope of a least-squares line through the samples
    taken after the warm-up; nan with fewer than three."""
    used = [s for s in samples if s.t >= warmup]
    if len(used) < 3:
        return math.nan, len(used)
    fit = statistics.linear_regression([s.t for s in used], [getattr(s, attr) for s in used])
    return fit.slope * 3600, len(used)


def counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items())) or "none"


def mb(kb: float) -> str:
    return f"{kb / 1024:.1f} MB"


# ---------------------------------------------------------------- the run


@dataclass
class Plan:
    """How many clients of each kind, and the admission limits that let them all in."""

    tables: list[int]  # seats of each race table
    bot_races: int
    dailies: int
    practice: int
    burst: int
    minutes: float

    @property
    def peak_connections(self) -> int:
        # A player who reconnects holds its old connection for a moment; the abusive
        # client holds its own, a silent one, a side one or a burst.
        good = sum(self.tables) + self.bot_races + self.dailies + self.practice
        return good + len(self.tables) + self.dailies + 3 + self.burst

    @property
    def new_players(self) -> int:
        daily = self.dailies * (math.ceil(self.minutes * 60 / DAILY_PLAYER_EVERY_S) + 1)
        return sum(self.tables) + self.bot_races + self.practice + 1 + daily

    def settings(self) -> dict[str, str]:
        per_address = max(DEFAULT.max_connections_per_address, self.peak_connections + 10)
        new_players = max(DEFAULT.max_new_players_per_address_per_hour, self.new_players + 10)
        return {
            # The good players keep under the default rate limit; the flood must meet it.
            "SOLITAIRE_RATE": str(DEFAULT.rate),
            "SOLITAIRE_BURST": str(DEFAULT.burst),
            "SOLITAIRE_MAX_CONNECTIONS": str(DEFAULT.max_connections),
            "SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS": str(per_address),
            "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR": str(new_players),
            "SOLITAIRE_DAILY_PREPARE_AHEAD": "1",
        }


async def run(args: argparse.Namespace) -> int:
    plan = Plan([2 + i % 3 for i in range(args.tables)], args.bot_races, args.dailies,
                args.practice, args.burst, args.minutes)  # fmt: skip
    settings = plan.settings()
    if args.memory_report:
        settings["SOLITAIRE_DEBUG_MEMORY"] = "1"
    seconds = args.minutes * 60
    warmup = args.warmup if args.warmup is not None else min(60.0, seconds / 5)
    every = args.sample_s if args.sample_s is not None else min(5.0, max(0.5, seconds / 60))
    print(f"bench/soak.py: {args.minutes:g} minutes; {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    print(f"  clients: {len(plan.tables)} race tables ({sum(plan.tables)} players), "
          f"{plan.bot_races} players racing server bots, {plan.dailies} daily clients, "
          f"{plan.practice} practice players (pace {args.pace:g} s), 1 abusive client "
          f"(bursts of {plan.burst} connections)")  # fmt: skip
    print(f"  server: default rate limits ({DEFAULT.rate:g}/s, burst {DEFAULT.burst}); "
          f"per address {settings['SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS']} connections and "
          f"{settings['SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR']} new players an hour "
          f"(defaults {DEFAULT.max_connections_per_address} and "
          f"{DEFAULT.max_new_players_per_address_per_hour}; "
          "every client here is 127.0.0.1)")  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="bench-soak-"))
    embedded: EmbeddedRedis | None = None
    target: RaceServer | None = None
    try:
        redis_url = os.environ.get("REDIS_URL")
        if redis_url:
            store = f"Redis at {redis_url.rsplit('@', 1)[-1]}"
        else:
            embedded = EmbeddedRedis(data_dir=tmp / "valkey", fsync=args.store_fsync)
            redis_url = embedded.start()
            store = f"embedded valkey-server, appendfsync {args.store_fsync}"
        print(f"  store: {store}")
        target = start_race_server(tmp, "solitaire-server", store, redis_url, settings=settings)
        await asyncio.to_thread(wait_port, target.port)
        tally = Tally()
        soak = Soak("127.0.0.1", target.port, time.monotonic() + seconds, args.pace, tally)
        sampler = Sampler(target.proc.pid, every)
        start = sampler.take()
        clients: list[Coroutine[Any, Any, None]] = [
            *(race_table(soak, i, seats) for i, seats in enumerate(plan.tables)),
            *(bot_races(soak, i) for i in range(plan.bot_races)),
            *(daily_player(soak, i) for i in range(plan.dailies)),
            *(practice_player(soak, i) for i in range(plan.practice)),
            Abuser(soak, plan.burst).run(),
        ]
        tasks = [asyncio.create_task(c) for c in clients]
        sampling = asyncio.create_task(sampler.run())
        progress = asyncio.create_task(report_progress(soak, sampler, target))
        marks: list[soak_memory.Mark] = []
        marking = None
        if args.memory_report:
            marking = asyncio.create_task(
                memory_marks(target.port, sampler, args.memory_every, marks)
            )
        await wait_for_end(soak, target)
        # The figures are of the load: the sampling stops with it, before the drain.
        progress.cancel()
        sampling.cancel()
        if marking is not None:
            marking.cancel()
        end = sampler.take() if target.proc.poll() is None else sampler.samples[-1]
        if (
            args.memory_report
            and target.proc.poll() is None
            and (not marks or end.t - marks[-1].t > 30)
        ):
            marks.append(await memory_mark(target.port, sampler, not marks))
        print(
            f"  [{end.t:5.0f} s] the load stops; waiting for the clients to finish what "
            "they are doing",
            flush=True,
        )
        done, pending = await asyncio.wait(tasks, timeout=DRAIN_S)
        for task in pending:
            task.cancel()
            tally.errors[f"a client did not stop within {DRAIN_S:g} s"] += 1
        for task in done:
            if task.exception() is not None:
                exc = task.exception()
                tally.errors[f"a client crashed: {type(exc).__name__}"] += 1
                tally.details.setdefault(f"a client crashed: {type(exc).__name__}", repr(exc))
        gids = list(tally.acked)
        stored = await stored_counts(redis_url, target.namespace, gids)
        target.proc.send_signal(signal.SIGTERM)
        try:
            code = await asyncio.to_thread(target.proc.wait, 60)
        except subprocess.TimeoutExpired:
            code = None
        log_errors = [line for line in target.log.read_text(errors="replace").splitlines()
                      if re.match(r"\S+ \S+ (ERROR|CRITICAL) ", line)]  # fmt: skip
        await drop_namespace(redis_url, target.namespace)
        ok = report(tally, sampler.samples, start, end, warmup, every, gids, stored, code,
                    log_errors)  # fmt: skip
        if args.memory_report:
            soak_memory.report(sampler.samples, marks, args.memory_every, end.t)
        return 0 if ok else 1
    finally:
        if target is not None and target.proc.poll() is None:
            target.proc.kill()
            target.proc.wait()
        if embedded is not None:
            embedded.stop()
        shutil.rmtree(tmp, ignore_errors=True)


async def wait_for_end(soak: Soak, target: RaceServer) -> None:
    """Until the soak's deadline, or until the server exits (a real error)."""
    while soak.running():
        if target.proc.poll() is not None:
            soak.tally.errors[f"the server exited with {target.proc.returncode}"] += 1
            soak.deadline = time.monotonic()
            return
        await asyncio.sleep(min(1.0, max(0.0, soak.deadline - time.monotonic())))


async def memory_mark(port: int, sampler: Sampler, baseline: bool) -> soak_memory.Mark:
    t = time.monotonic() - sampler.began
    report = await asyncio.to_thread(soak_memory.fetch, port, baseline)
    print(f"  [{t:5.0f} s] memory report: RSS {mb(report['rss_kb'])}, traced "
          f"{mb(report.get('traced_kb', 0))}, caches " + ", ".join(
              f"{n} {c['entries']}" for n, c in report["caches"].items()), flush=True)  # fmt: skip
    return soak_memory.Mark(t, report)


async def memory_marks(port: int, sampler: Sampler, every: float,
                       marks: list[soak_memory.Mark]) -> None:  # fmt: skip
    """The server's memory report every `every` seconds of load; the first is the
    baseline of the growth figures."""
    k = 1
    while True:
        await asyncio.sleep(max(0.0, sampler.began + k * every - time.monotonic()))
        marks.append(await memory_mark(port, sampler, not marks))
        k += 1


async def report_progress(soak: Soak, sampler: Sampler, target: RaceServer) -> None:
    tally = soak.tally
    seen = 0
    while True:
        await asyncio.sleep(PROGRESS_EVERY_S)
        last = sampler.samples[-1]
        window, seen = tally.acks[seen:], len(tally.acks)
        cpu = (last.cpu_s - sampler.samples[0].cpu_s) / max(last.t, 1e-9) * 100
        print(f"  [{last.t:5.0f} s] moves {len(tally.acks)} (last 30 s: {len(window)}, "
              f"p99 {percentile(window, 0.99) * 1000:.1f} ms); requests "
              f"{sum(tally.requests.values())}; abusive actions {sum(tally.abuse.values())}; "
              f"real errors {sum(tally.errors.values())}; server RSS {mb(last.rss_kb)}, "
              f"CPU {cpu:.0f} %", flush=True)  # fmt: skip


def report(tally: Tally, samples: list[Sample], start: Sample, end: Sample, warmup: float,
           every: float, gids: list[str], stored: list[int], exit_code: int | None,
           log_errors: list[str]) -> bool:  # fmt: skip
    load = tally.load
    acks = tally.acks
    print(f"  requests by kind: {counts(tally.requests)}")
    print(f"  events received by kind: {counts(tally.events)}")
    lines = {
        "races": f"{load['race started']} started, {load['race finished']} finished, "
        f"{load['race closed at its time limit']} closed at their time limit, "
        f"{load['race moves']} moves, "
        f"{load['reconnection']} reconnections between races",
        "races with server bots": f"{load['bot race started']} started, "
        f"{load['bot race result']} results, {load['bot race moves']} moves of their players",
        "daily attempts": f"{load['daily attempt']} by {load['daily player']} players, "
        f"{load['daily resumed']} resumed on a new connection, {load['daily moves']} moves, "
        f"{load['daily second attempt refused']} second attempts refused",
        "practice": f"{load['practice game']} games, {load['hint']} hints, "
        f"{load['undo']} undos, {load['practice moves']} moves",
        "abusive client": f"{sum(tally.abuse.values())} actions",
    }
    for kind in LOAD_KINDS:
        print(f"  load {kind}: {lines[kind]}")
    print(f"  abusive client's actions: {counts(tally.abuse)}")
    print(f"  abusive client's expected refusals (and answers): {counts(tally.refusals)}")
    if tally.errors:
        print("  real errors:")
        for kind, n in sorted(tally.errors.items()):
            detail = tally.details.get(kind)
            print(f"    {n} x {kind}" + (f" (first: {detail[:200]})" if detail else ""))
    else:
        print("  real errors: none")
    print(f"  move acknowledgements: {len(acks)}, p50 {percentile(acks, 0.5) * 1000:.2f} ms, "
          f"p99 {percentile(acks, 0.99) * 1000:.2f} ms, "
          f"max {max(acks, default=math.nan) * 1000:.1f} ms")  # fmt: skip
    growth, used = growth_per_hour(samples, warmup, "rss_kb")
    workers_growth, _ = growth_per_hour(samples, warmup, "workers_rss_kb")
    print(f"  server memory (RSS): start {mb(start.rss_kb)}, end {mb(end.rss_kb)}, growth "
          f"{growth / 1024:+.1f} MB/hour (least squares over {used} samples after the "
          f"{warmup:g} s warm-up, one every {every:g} s); solver processes "
          f"{mb(start.workers_rss_kb)} -> {mb(end.workers_rss_kb)} "
          f"({workers_growth / 1024:+.1f} MB/hour)")  # fmt: skip
    span = max(end.t - start.t, 1e-9)
    after = [s for s in samples if s.t >= warmup]
    late = ((after[-1].cpu_s - after[0].cpu_s) / max(after[-1].t - after[0].t, 1e-9) * 100
            if len(after) > 1 else math.nan)  # fmt: skip
    print(f"  server CPU: {(end.cpu_s - start.cpu_s) / span * 100:.1f} % of one core "
          f"({late:.1f} % after the warm-up; {end.cpu_s - start.cpu_s:.1f} s in "
          f"{span:.0f} s); solver processes "
          f"{(end.workers_cpu_s - start.workers_cpu_s) / span * 100:.1f} %")  # fmt: skip
    acked = [tally.acked[g] for g in gids]
    found = sum(min(s, a) for s, a in zip(stored, acked, strict=True))
    extra = sum(max(0, s - a) for s, a in zip(stored, acked, strict=True))
    differ = [g for g, s, a in zip(gids, stored, acked, strict=True) if s != a]
    print(f"  acknowledged moves found in the store: {found} of {sum(acked)} over "
          f"{len(gids)} games; {extra} stored moves beyond the acknowledged ones")  # fmt: skip
    for g in differ[:5]:
        print(f"    {g}: {tally.acked[g]} acknowledged, {stored[gids.index(g)]} stored")
    print(f"  server stopped on SIGTERM with exit code {exit_code}; "
          f"{len(log_errors)} ERROR lines in its log")  # fmt: skip
    for line in log_errors[:5]:
        print(f"    {line[:200]}")
    ok = not tally.errors and not differ and exit_code == 0 and not log_errors
    print("  PASS" if ok else "  FAIL")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--minutes",
        type=float,
        default=10.0,
        help=f"how long the load runs (default 10, at most {MAX_MINUTES})",
    )
    parser.add_argument(
        "--tables", type=int, default=3, help="race tables of 2, 3, 4, 2, ... players (default 3)"
    )
    parser.add_argument(
        "--bot-races",
        type=int,
        default=2,
        help="players racing server bots, one race at a time (default 2)",
    )
    parser.add_argument(
        "--dailies",
        type=int,
        default=1,
        help="clients playing daily attempts as new players (default 1)",
    )
    parser.add_argument(
        "--practice", type=int, default=2, help="players of practice games with hints (default 2)"
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=0.5,
        help="median seconds a player thinks over a move (default 0.5)",
    )
    parser.add_argument(
        "--burst",
        type=int,
        default=20,
        help="connections the abusive client opens at once (default 20)",
    )
    parser.add_argument(
        "--warmup",
        type=float,
        help="seconds left out of the memory fit (default a fifth of the run, at most 60)",
    )
    parser.add_argument(
        "--sample-s",
        type=float,
        help="seconds between samples of the server's memory and CPU "
        "(default 5, less for short runs)",
    )
    parser.add_argument("--store-fsync", choices=FSYNC_POLICIES,
                        help="appendfsync of the bench's own store (not with REDIS_URL; "
                             f"default {DEFAULT.store_fsync})")  # fmt: skip
    parser.add_argument(
        "--memory-report",
        action="store_true",
        help="start the server with --debug-memory and report its RSS by window, its caches "
        "and what grew between the first and last of its memory reports (bench/soak_memory.py)",
    )
    parser.add_argument(
        "--memory-every",
        type=float,
        default=600.0,
        help="seconds between the server's memory reports (default 600; the first is the "
        "baseline of the growth)",
    )
    args = parser.parse_args()
    if not 10 <= args.memory_every <= 3600:
        parser.error("--memory-every: 10 to 3600 seconds")
    if not 0 < args.minutes <= MAX_MINUTES:
        parser.error(f"--minutes: more than 0, at most {MAX_MINUTES}")
    if not (0 <= args.tables <= 20 and 0 <= args.bot_races <= 20 and 0 <= args.dailies <= 5
            and 0 <= args.practice <= 20 and 1 <= args.burst <= 60):  # fmt: skip
        parser.error("tables, bot races and practice 0..20, dailies 0..5, burst 1..60")
    if not 0.1 <= args.pace <= 10:
        parser.error("--pace: 0.1 to 10 seconds (faster players would meet the rate limit)")
    if args.sample_s is not None and not 0.1 <= args.sample_s <= 60:
        parser.error("--sample-s: 0.1 to 60")
    if args.store_fsync is not None and os.environ.get("REDIS_URL"):
        parser.error("--store-fsync sets the bench's own store: unset REDIS_URL to use it")
    args.store_fsync = args.store_fsync or DEFAULT.store_fsync
    raise_open_files(1000)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
