#!/usr/bin/env python3
"""Capacity at a human pace: how many racing players one server process holds.

    .venv/bin/python -m bench.capacity [--steps 1000,2500,5000,7500,10000,12500]
        [--warmup 10] [--seconds 30] [--pace 2] [--p99-ms 100] [--workers 1 | 1,2]
        [--server race,relay | race|relay|durable-echo|echo,...] [--seats 4]
        [--per-process 2500] [--store-fsync always|everysec] [--cluster 3]

What it does (loopback only, bounded: at most 12 steps of at most 40,000 players, every
wait with a timeout; stops by itself):

- starts a real `solitaire-server` (REDIS_URL if set, else a valkey-server of the bench's
  own in a temporary directory, as bench/server.py does) in a namespace of its own, with
  the server's default per-connection rate limits and keep-alive pings (every 20 s, which
  the bots answer); the admission limits (connections in all and per address, new players
  per address an hour and a day) are lifted, since every player comes from 127.0.0.1;
- ramps the number of players in `--steps`: each step adds players, in tables of
  `--seats` (4: each move fans its progress out to the three other seats too) that race
  each other again and again, each player making a move every `--pace` seconds on
  average (bench/capacity_bots.py says how they play); the players run on lean clients
  in child processes of at most `--per-process` players each, so that no process nears
  the open-file limit and the bots cost the machine little;
- each step waits until its new tables have started racing, then `--warmup` seconds,
  then measures `--seconds`: moves per second, p50/p99 of the time from a move's send to
  its acknowledgement (histograms from every child, merged), progress events received,
  errors, the server's CPU (as a share of one core) and resident memory, the store's,
  the bots', what the rest of the machine took meanwhile (it may be shared), and the
  store's longest stall (its latency monitor, which the bench turns on in a store of its
  own: with `appendfsync always` a slow fsync of the disk holds up every move behind it);
- before the ramp, with its own store on `appendfsync always`, times 10 s of small fsynced
  appends on the store's disk and prints p50/p99/p99.9/max: what every move waits for;
- stops after the first step whose p99 passes `--p99-ms` or that has an error (or after
  the last step), stops the players (each request in flight answered first), and checks
  that each game's stored move list is exactly as long as its acknowledged moves;
- `--workers 1,2` runs the whole ramp once for each worker count, each on a fresh server,
  and prints the gain of the larger ones over the first;
- `--server` (default race,relay) names the servers ramped, one after another in the
  same run, on the same store, with the same players, pace, tables and steps: `race` is
  the race server; `relay` the durable relay of bench/relay_server.py (each move stored
  in Redis, pipelined per loop turn, before its acknowledgement, then sent on to the
  other seats of its table: the least a race server must do); `durable-echo` and `echo`
  bench/server.py's echoes (one process each, whatever `--workers` says). The bots differ
  only in what they say (bench/capacity_bots.py's KINDS); at the end the stored moves are
  checked for each durable one as for the race server (a relay seat's list, the durable
  echo's log), and the race server (one process) is compared with each baseline: players
  held at p99 under `--p99-ms` (target against the relay: >= 0.70) and server CPU per
  move at their largest common step. A baseline that holds every step has a higher limit
  than the ramp shows: give it more steps to find it;
- `--cluster 3` (race server only) runs the store as a Redis Cluster of that many
  valkey-server masters of the bench's own on this machine (bench/local_cluster.py, formed
  by the command deploy/compose.redis-cluster.yml runs), the server with
  SOLITAIRE_REDIS_CLUSTER=1; the store's CPU, memory and stalls are summed (the longest
  stall: the longest of any master) over the masters, and the acknowledged moves are
  looked for on the cluster. With `--workers 2` it is a small copy of the set-up
  deploy/README's capacity model describes (instances on a sharded store, the players of
  one race on different instances hearing each other through the store's pub/sub).

Exits 1 if any error happened or a stored count differs from the acknowledged one, else 0
(a ramp that ends on p99 is a finding, not a failure).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import os
import platform
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.capacity_bots import STOP_DRAIN_S, percentile_ms
from bench.figures import percentile
from bench.local_cluster import LocalRedisCluster
from bench.race_server import (
    BASELINE_KINDS,
    ROOT,
    BaselineServer,
    RaceServer,
    bench_module,
    cpu_s,
    drop_keys,
    drop_namespace,
    list_lengths,
    raise_open_files,
    rss_kb,
    start_baseline_server,
    start_race_server,
    wait_port,
    worker_pids,
)
from bench.server import stored_counts
from server.config import DEFAULT
from server.store.embedded import FSYNC_POLICIES, EmbeddedRedis

DEFAULT_STEPS = "1000,2500,5000,7500,10000,12500"
KINDS = ("race", *BASELINE_KINDS)
DEFAULT_SERVERS = "race,relay"
TARGET_PLAYERS = 10_000  # the project's goal for one process, with p99 under --p99-ms
MAX_PLAYERS = 40_000
MAX_STEPS = 12
GROW_TIMEOUT_S = 900.0  # a step's new tables all connected, greeted and racing
ASK_TIMEOUT_S = 60.0
LOG_LINES_SHOWN = 5
FD_MARGIN = 500  # open files of a process beyond its connections (store, logs, pipes)
# Per-connection limits stay the server's defaults: players at a human pace never near them.
SETTINGS = {"SOLITAIRE_RATE": str(DEFAULT.rate), "SOLITAIRE_BURST": str(DEFAULT.burst)}


# ---------------------------------------------------------------- the bot processes


class BotProcess:
    """One child process of bench/capacity_bots.py and its players."""

    def __init__(self, proc: asyncio.subprocess.Process, log: Path, index: int) -> None:
        self.proc = proc
        self.log = log
        self.index = index
        self.tables = 0

    @classmethod
    async def start(
        cls, tmp: Path, port: int, index: int, args: argparse.Namespace, kind: str
    ) -> BotProcess:
        log = tmp / f"bots-{port}-{index}.log"
        with open(log, "wb") as err:
            proc = await asyncio.create_subprocess_exec(
                *bench_module("bench.capacity_bots", f"127.0.0.1:{port}", str(index),
                              str(args.seats), str(args.pace), kind),
                cwd=ROOT, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=err, limit=1 << 28,  # the stop's answer lists every game
            )  # fmt: skip
        return cls(proc, log, index)

    async def ask(self, cmd: dict[str, Any], timeout: float = ASK_TIMEOUT_S) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
        await self.proc.stdin.drain()
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        except TimeoutError:
            raise RuntimeError(f"bot process {self.index}: no answer to {cmd} "
                               f"within {timeout:g} s") from None  # fmt: skip
        if not line:
            tail = "\n".join(self.log.read_text(errors="replace").splitlines()[-20:])
            raise RuntimeError(f"bot process {self.index} died (exit code "
                               f"{await self.proc.wait()}); its stderr ends:\n{tail}")  # fmt: skip
        answer: dict[str, Any] = json.loads(line)
        return answer

    def cpu(self) -> float:
        return cpu_s(self.proc.pid)

    def kill(self) -> None:
        if self.proc.returncode is None:
            self.proc.kill()


async def grow(
    bots: list[BotProcess], tables: int, args: argparse.Namespace, tmp: Path, under: Under
) -> int:
    """Adds `tables` tables: to the last bot process while it has room, then to new ones.
    Returns how many failed to start racing (each failure is counted as an error too)."""
    per_process = args.per_process // args.seats
    plan: list[tuple[BotProcess, int]] = []
    while tables:
        if not bots or bots[-1].tables >= per_process:
            bots.append(await BotProcess.start(tmp, under.port, len(bots), args, under.kind))
        take = min(tables, per_process - bots[-1].tables)
        bots[-1].tables += take
        plan.append((bots[-1], take))
        tables -= take
    answers = await asyncio.gather(
        *(b.ask({"cmd": "grow", "tables": k}, GROW_TIMEOUT_S) for b, k in plan)
    )
    return sum(a["failed"] for a in answers)


# ---------------------------------------------------------------- what is measured


@dataclass
class Marks:
    """Cumulative CPU seconds (and the clock) at one moment."""

    at: float
    server: float
    store: float
    bots: float
    machine: float  # every CPU of the machine, busy
    publishes: int  # the store's PUBLISH commands so far (the bus between server processes)


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all cores), from /proc/stat."""
    with open("/proc/stat") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]  # idle, iowait
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


async def store_info(nodes: list[str]) -> tuple[float, int, int]:
    """The store's CPU seconds, resident memory (KB) and PUBLISH commands run (a script's
    included), from the INFO of each of its nodes (one, or every master of a cluster),
    summed."""
    import redis.asyncio as aioredis

    cpu, rss, publishes = 0.0, 0, 0
    for url in nodes:
        r = aioredis.Redis.from_url(url)
        try:
            info = await r.info()
            commands = await r.info("commandstats")
        finally:
            await r.aclose()
        cpu += float(info["used_cpu_sys"]) + float(info["used_cpu_user"])
        rss += int(info["used_memory_rss"]) // 1024
        publishes += int(commands.get("cmdstat_publish", {}).get("calls", 0))
    return cpu, rss, publishes


STALL_MS = 10  # the bench's own store records every event (an fsync, a command) that takes longer


DISK_PROBE_S = 10.0


def disk_fsync_line(directory: Path, seconds: float = DISK_PROBE_S) -> str:
    """What the disk under `directory` does with what `appendfsync always` asks of it: small
    appends, each fsynced, for `seconds` (a few thousand of them), before any player."""
    path = directory / "fsync-probe"
    took: list[float] = []
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            os.write(fd, b"m" * 512)
            started = time.perf_counter()
            os.fsync(fd)
            took.append(time.perf_counter() - started)
            time.sleep(0.001)  # about as often as a group commit fsyncs under load
    finally:
        os.close(fd)
        path.unlink()

    def ms(q: float) -> float:
        return 1000 * percentile(took, q)

    return (f"  disk under the store: {len(took)} fsyncs of 512-byte appends in "
            f"{seconds:g} s: p50 {ms(0.5):.2f} ms, p99 {ms(0.99):.2f} ms, p99.9 {ms(0.999):.2f} "
            f"ms, max {1000 * max(took):.2f} ms (each move waits for one with appendfsync "
            "always)")  # fmt: skip


async def store_stalls(nodes: list[str], reset: bool = False) -> float | None:
    """The store's longest stall (ms) since the last reset, the longest of its nodes'."""
    stalls = [await node_stalls(url, reset) for url in nodes]
    known = [s for s in stalls if s is not None]
    return max(known) if known else None


async def node_stalls(url: str, reset: bool = False) -> float | None:
    """A store node's longest stall (ms) since the last reset, from its latency monitor, or
    None where the monitor is off (a REDIS_URL store whose owner did not turn it on); `reset`
    starts a new window."""
    import redis.asyncio as aioredis

    r = aioredis.Redis.from_url(url)
    try:
        (threshold,) = (await r.config_get("latency-monitor-threshold")).values()
        if not int(threshold or 0):
            return None
        if reset:
            await r.latency_reset()
            return 0.0
        events = await r.latency_latest()
    finally:
        await r.aclose()
    # Each event: name, when, latest ms, the most ms since the reset.
    return float(max((int(e[3]) for e in events), default=0))


async def marks(pids: list[int], nodes: list[str], bots: list[BotProcess]) -> Marks:
    store, _, publishes = await store_info(nodes)
    return Marks(
        at=time.perf_counter(),
        server=sum(cpu_s(p) for p in pids),
        store=store,
        bots=sum(b.cpu() for b in bots),
        machine=machine_busy_s(),
        publishes=publishes,
    )


@dataclass
class Step:
    players: int
    grow_s: float
    seconds: float
    moves: int
    p50_ms: float
    p99_ms: float
    progress: int
    errors: int
    server_cpu: float  # share of one core
    server_rss_kb: int
    store_cpu: float
    store_rss_kb: int
    bots_cpu: float
    others_cpu: float  # the rest of the machine: other engineers' work, the bench itself
    load: float
    store_stall_ms: float | None = None  # the store's longest stall in the window
    publishes: int = 0  # the store's PUBLISH commands in the window

    @property
    def rate(self) -> float:
        return self.moves / self.seconds

    def failure(self, p99_limit: float) -> str | None:
        """Why the ramp stops at this step, if it does."""
        if self.errors:
            return f"{self.errors} errors"
        if not self.moves:
            return "no move was acknowledged in the window"
        if not self.p99_ms < p99_limit:
            stalled = self.store_stall_ms is not None and self.store_stall_ms >= p99_limit
            return f"p99 {self.p99_ms:.1f} ms over {p99_limit:g} ms" + (
                f" (the store stalled up to {self.store_stall_ms:.0f} ms)" if stalled else ""
            )
        return None


HEADER = (f"  {'players':>8}{'moves/s':>9}{'(pace)':>8}{'p50 ms':>8}{'p99 ms':>8}"
          f"{'progress/s':>11}{'errors':>7}{'server':>8}{'server':>8}{'store':>7}{'store':>7}"
          f"{'bots':>6}{'bots':>8}{'others':>8}{'load':>6}{'ready':>7}{'store':>7}\n"
          f"  {'':>8}{'':>9}{'':>8}{'':>8}{'':>8}{'':>11}{'':>7}{'% core':>8}{'MB':>8}"
          f"{'% core':>7}{'MB':>7}{'% core':>6}{'us/move':>8}{'% core':>8}{'':>6}"
          f"{'s':>7}{'stall':>7}")  # fmt: skip


def row(s: Step, pace: float) -> str:
    return (f"  {s.players:8d}{s.rate:9.0f}{s.players / pace:8.0f}{s.p50_ms:8.1f}{s.p99_ms:8.1f}"
            f"{s.progress / s.seconds:11.0f}{s.errors:7d}{100 * s.server_cpu:8.0f}"
            f"{s.server_rss_kb / 1024:8.0f}{100 * s.store_cpu:7.0f}{s.store_rss_kb / 1024:7.0f}"
            f"{100 * s.bots_cpu:6.0f}{1e6 * s.bots_cpu / max(s.rate, 1e-9):8.0f}"
            f"{100 * s.others_cpu:8.0f}{s.load:6.1f}{s.grow_s:7.1f}"
            f"{'-' if s.store_stall_ms is None else f'{s.store_stall_ms:.0f}':>7}")  # fmt: skip


@dataclass
class Run:
    """One ramp on one server: `kind` (KINDS) with `workers` processes."""

    kind: str
    workers: int
    steps: list[Step] = field(default_factory=list)
    ended: str = ""
    errors: Counter[str] = field(default_factory=Counter)
    details: dict[str, str] = field(default_factory=dict)
    acked: int = 0
    found: int = 0
    beyond: int = 0
    games: int = 0
    bot_processes: int = 0
    log_problems: list[str] = field(default_factory=list)  # the server's WARNING/ERROR lines

    def held(self, p99_limit: float) -> Step | None:
        """The largest step with p99 under the limit and no error."""
        good = [s for s in self.steps if s.failure(p99_limit) is None]
        return good[-1] if good else None

    @property
    def stored_ok(self) -> bool:
        return self.found == self.acked and self.beyond == 0

    @property
    def label(self) -> str:
        """How the report names it: "race --workers 1", "relay"."""
        return f"race --workers {self.workers}" if self.kind == "race" else self.kind


@dataclass
class Under:
    """The server under test of one ramp: the race server or a baseline."""

    kind: str
    port: int
    race: RaceServer | None = None
    baseline: BaselineServer | None = None

    @classmethod
    async def start(cls, kind: str, args: argparse.Namespace, tmp: Path, store: str, url: str,
                    workers: int) -> Under:  # fmt: skip
        if kind == "race":
            settings = {**SETTINGS, "SOLITAIRE_REDIS_CLUSTER": "1"} if args.cluster else SETTINGS
            race = start_race_server(tmp, "solitaire-server", store, url, workers=workers,
                                     settings=settings)  # fmt: skip
            return cls(kind, race.port, race=race)
        baseline = start_baseline_server(kind, url)
        return cls(kind, baseline.port, baseline=baseline)

    async def pids(self, workers: int) -> list[int]:
        """Once it listens: its server processes."""
        if self.race is not None:
            return await wait_listening(self.race, workers)
        assert self.baseline is not None
        await asyncio.to_thread(self.baseline.wait_ready)
        return [self.baseline.proc.pid]

    async def stored(self, url: str, acked: dict[str, int]) -> list[int]:
        """What the store holds under each key of `acked` (the bots' store keys), in order:
        a race game's moves, a relay seat's moves, the durable echo's whole log; the echo
        stores nothing and is taken at its word."""
        keys = list(acked)
        if self.race is not None:
            return await stored_counts(url, self.race.namespace, keys, self.race.cluster)
        assert self.baseline is not None
        if self.kind == "relay":
            return await list_lengths(url, [f"{self.baseline.key}:{k}" for k in keys])
        if self.kind == "durable-echo":
            return await list_lengths(url, [self.baseline.key for _ in keys])
        return list(acked.values())

    async def stop(self) -> None:
        """SIGTERM, waited for; a race server's WARNING and ERROR lines are returned."""
        if self.race is not None:
            self.race.proc.send_signal(signal.SIGTERM)
            await asyncio.to_thread(self.race.proc.wait, 60)
        elif self.baseline is not None:
            await asyncio.to_thread(self.baseline.stop)

    def log_problems(self) -> list[str]:
        """The race server's WARNING and ERROR lines (a baseline's are not kept)."""
        if self.race is None:
            return []
        return [line for line in self.race.log.read_text(errors="replace").splitlines()
                if " WARNING " in line or " ERROR " in line]  # fmt: skip

    async def clean(self, url: str) -> None:
        """Killed if still running; its keys removed from the store."""
        if self.race is not None:
            if self.race.proc.poll() is None:
                self.race.proc.kill()
                self.race.proc.wait()
            await drop_namespace(url, self.race.namespace, self.race.cluster)
        elif self.baseline is not None:
            if self.baseline.proc.poll() is None:
                self.baseline.proc.kill()
                self.baseline.proc.wait()
            if self.baseline.key:
                await drop_keys(url, self.baseline.key + ("*" if self.kind == "relay" else ""))


# ---------------------------------------------------------------- one ramp


async def wait_listening(target: RaceServer, workers: int) -> list[int]:
    """Waits until the server's `workers` processes listen; their pids."""
    deadline = time.monotonic() + 60
    while True:
        pids = [target.proc.pid] if workers == 1 else worker_pids(target.proc.pid)
        if len(pids) >= workers and target.log.read_text().count(" listening ") >= workers:
            break
        if time.monotonic() > deadline or target.proc.poll() is not None:
            raise RuntimeError(f"the server did not start; see {target.log}")
        await asyncio.sleep(0.1)
    await asyncio.to_thread(wait_port, target.port)
    return pids


async def ramp(
    args: argparse.Namespace, tmp: Path, store: str, url: str, kind: str, workers: int
) -> Run:
    run = Run(kind, workers)
    under = await Under.start(kind, args, tmp, store, url, workers)
    bots: list[BotProcess] = []
    try:
        pids = await under.pids(workers)
        base_rss = sum(rss_kb(p) for p in pids)
        print(f"\n  {run.label}: server resident memory before any player "
              f"{base_rss / 1024:.0f} MB", flush=True)  # fmt: skip
        print(HEADER, flush=True)
        players = 0
        errors_before = 0
        for step in args.steps:
            began = time.perf_counter()
            await grow(bots, (step - players) // args.seats, args, tmp, under)
            players = step
            grow_s = time.perf_counter() - began
            await asyncio.sleep(args.warmup)
            m0 = await marks(pids, args.store_nodes, bots)
            await store_stalls(args.store_nodes, reset=True)
            await asyncio.gather(*(b.ask({"cmd": "reset"}) for b in bots))
            await asyncio.sleep(args.seconds)
            got = await asyncio.gather(*(b.ask({"cmd": "collect"}) for b in bots))
            m1 = await marks(pids, args.store_nodes, bots)
            stall = await store_stalls(args.store_nodes)
            secs = m1.at - m0.at
            hist: Counter[int] = Counter()
            for g in got:
                hist.update({int(k): v for k, v in g["hist"].items()})
            errors_now = sum(sum(g["errors"].values()) for g in got)
            _, store_rss, _ = await store_info(args.store_nodes)
            server_cpu = (m1.server - m0.server) / secs
            store_cpu = (m1.store - m0.store) / secs
            bots_cpu = (m1.bots - m0.bots) / secs
            s = Step(
                players=step, grow_s=grow_s, seconds=secs, moves=sum(g["moves"] for g in got),
                p50_ms=percentile_ms(hist, 0.50), p99_ms=percentile_ms(hist, 0.99),
                progress=sum(g["progress"] for g in got), errors=errors_now - errors_before,
                server_cpu=server_cpu, server_rss_kb=sum(rss_kb(p) for p in pids),
                store_cpu=store_cpu, store_rss_kb=store_rss, bots_cpu=bots_cpu,
                others_cpu=max(0.0, (m1.machine - m0.machine) / secs - server_cpu - store_cpu
                               - bots_cpu),
                load=os.getloadavg()[0], store_stall_ms=stall,
                publishes=m1.publishes - m0.publishes,
            )  # fmt: skip
            errors_before = errors_now
            run.steps.append(s)
            print(row(s, args.pace), flush=True)
            why = s.failure(args.p99_ms)
            if why:
                run.ended = f"stopped at {step} players: {why}"
                break
        else:
            run.ended = f"every step held, up to {players} players"
        run.bot_processes = len(bots)
        await stop_bots(run, bots, url, under)
        await under.stop()
        return run
    finally:
        run.log_problems = under.log_problems()
        for b in bots:
            b.kill()
        await under.clean(url)


async def stop_bots(run: Run, bots: list[BotProcess], url: str, under: Under) -> None:
    """Stops every player, then compares the moves stored under each store key (a race's
    game, a relay's seat, the durable echo's log) with the acknowledged ones."""
    answers = await asyncio.gather(*(b.ask({"cmd": "stop"}, STOP_DRAIN_S + 60) for b in bots))
    acked: Counter[str] = Counter()
    for a in answers:
        acked.update(a["acked"])  # summed: the echoes' one log takes every process's moves
        run.errors.update(a["errors"])
        for kind, detail in a["details"].items():
            run.details.setdefault(kind, detail)
        if a["in_flight"]:
            run.errors["requests unanswered at the stop"] += a["in_flight"]
    for b in bots:
        await b.proc.wait()
    counts = await under.stored(url, acked)
    run.games = len(acked)
    run.acked = sum(acked.values())
    run.found = sum(min(c, a) for c, a in zip(counts, acked.values(), strict=True))
    run.beyond = sum(max(0, c - a) for c, a in zip(counts, acked.values(), strict=True))


# ---------------------------------------------------------------- the report


def machine_line() -> str:
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        mem_kb = int(f.readline().split()[1])
    return (f"{platform.node()}: {os.cpu_count()} CPUs ({model}), {mem_kb / 2**20:.0f} GiB, "
            f"Linux {platform.release()}, Python {platform.python_version()}")  # fmt: skip


def summary(run: Run, args: argparse.Namespace) -> list[str]:
    out = [f"  {run.label}: {run.ended}; the players ran in {run.bot_processes} bot processes"]
    held = run.held(args.p99_ms)
    if held is None:
        out.append(f"    no step held (p99 under {args.p99_ms:g} ms, no error)")
    else:
        per_core = held.players / held.server_cpu if held.server_cpu else math.inf
        per_gb = held.players / (held.server_rss_kb / 2**20)
        out.append(f"    held {held.players} players ({held.rate:.0f} moves/s, p99 "
                   f"{held.p99_ms:.1f} ms, no error) on {run.workers} server process"
                   f"{'es' if run.workers > 1 else ''}: server CPU {100 * held.server_cpu:.0f} % "
                   f"of a core ({per_core:.0f} players per core of server CPU), "
                   f"{held.server_rss_kb / 1024:.0f} MB resident ({per_gb:.0f} players per GB); "
                   f"bots {100 * held.bots_cpu:.0f} % of a core")  # fmt: skip
    if held is not None and run.kind == "race":
        moves = held.rate * held.seconds
        out.append(f"    a move cost the server {1e6 * held.server_cpu / held.rate:.0f} us of CPU "
                   f"and the store {1e6 * held.store_cpu / held.rate:.0f} us, with "
                   f"{held.publishes / moves:.2f} PUBLISH (the bus between server processes; "
                   "the capacity model's inputs, deploy/README)")  # fmt: skip
    errors = ", ".join(f"{k} {v}" for k, v in sorted(run.errors.items())) or "none"
    out.append(f"    errors: {errors}")
    for kind, detail in sorted(run.details.items()):
        if detail:
            out.append(f"      {kind}: {detail}")
    if run.kind == "echo":
        out.append(f"    acknowledged moves: {run.acked} (the echo stores nothing)")
    else:
        lists = {"race": "games", "relay": "seats' lists", "durable-echo": "log"}[run.kind]
        out.append(f"    acknowledged moves found in the store: {run.found} of {run.acked} over "
                   f"{run.games} {lists}; {run.beyond} stored moves beyond")  # fmt: skip
    out.append(f"    server log: {len(run.log_problems)} WARNING or ERROR lines"
               + (", the first:" if run.log_problems else ""))  # fmt: skip
    out += [f"      {line}" for line in run.log_problems[:LOG_LINES_SHOWN]]
    return out


def target_line(run: Run, args: argparse.Namespace) -> str:
    held = run.held(args.p99_ms)
    goal = (f"target (one process holds >= {TARGET_PLAYERS} racing players, p99 under "
            f"{args.p99_ms:g} ms, no error): ")  # fmt: skip
    if held is not None and held.players >= TARGET_PLAYERS:
        return goal + f"met ({held.players} held)"
    if (run.steps and run.steps[-1].players >= TARGET_PLAYERS) or run.ended.startswith("stopped"):
        return goal + f"NOT met (held {held.players if held else 0})"
    return goal + f"not tried: this ramp went up to {run.steps[-1].players if run.steps else 0}"


def baseline_lines(runs: list[Run], args: argparse.Namespace) -> list[str]:
    """The race server (one process) against each baseline: players held and server CPU
    per move, with the target against the relay."""
    race = next((r for r in runs if r.kind == "race" and r.workers == 1), None)
    out: list[str] = []
    if race is None:
        return out
    for base in (r for r in runs if r.kind != "race"):
        a, b = race.held(args.p99_ms), base.held(args.p99_ms)
        label = f"  race server / {base.kind}: "
        target = " (target >= 0.70)" if base.kind == "relay" else ""
        if a is None or b is None:
            out.append(label + f"none to tell (a ramp held no step){target}")
            continue
        note = ""
        if not base.ended.startswith("stopped"):
            note = f"; the {base.kind} held every step: its limit is higher, the ratio lower"
        out.append(label + f"players held at p99 under {args.p99_ms:g} ms {a.players} against "
                   f"{b.players}: {a.players / b.players:.2f}{target}{note}")  # fmt: skip
        both = [(s, t) for s in race.steps for t in base.steps
                if s.players == t.players and s.failure(args.p99_ms) is None
                and t.failure(args.p99_ms) is None]  # fmt: skip
        if both:
            s, t = both[-1]
            ours = s.server_cpu / max(s.rate, 1e-9)
            theirs = t.server_cpu / max(t.rate, 1e-9)
            out.append(f"    at {s.players} players: server CPU per move {1e6 * ours:.0f} us "
                       f"against {1e6 * theirs:.0f} us ({ours / theirs:.1f}x), p99 "
                       f"{s.p99_ms:.1f} ms against "
                       f"{t.p99_ms:.1f} ms")  # fmt: skip
    return out


def gain_lines(runs: list[Run], args: argparse.Namespace) -> list[str]:
    runs = [r for r in runs if r.kind == "race"]
    if not runs:
        return []
    base = runs[0]
    out = []
    for other in runs[1:]:
        a, b = base.held(args.p99_ms), other.held(args.p99_ms)
        label = f"  gain of --workers {other.workers} over --workers {base.workers}: "
        if a is None or b is None:
            out.append(label + "none to tell (a ramp held no step)")
            continue
        found = [r.ended.startswith("stopped") for r in (base, other)]
        note = ""
        if not any(found):
            note = " (both held every step: neither ramp found its limit)"
        elif not found[1]:
            note = f" (--workers {other.workers} held every step: its limit is higher)"
        elif not found[0]:
            note = f" (--workers {base.workers} held every step: its limit is higher)"
        out.append(label + f"held {b.players} players against {a.players} "
                   f"(x{b.players / a.players:.2f}){note}")  # fmt: skip
        common = [s for s in base.steps if s.failure(args.p99_ms) is None]
        both = [(s, t) for s in common for t in other.steps
                if t.players == s.players and t.failure(args.p99_ms) is None]  # fmt: skip
        if both:
            s, t = both[-1]
            out.append(f"    at {s.players} players: p99 {t.p99_ms:.1f} ms against "
                       f"{s.p99_ms:.1f} ms, server CPU {100 * t.server_cpu:.0f} % against "
                       f"{100 * s.server_cpu:.0f} % of a core, {t.server_rss_kb / 1024:.0f} MB "
                       f"against {s.server_rss_kb / 1024:.0f} MB resident")  # fmt: skip
    return out


async def run_all(args: argparse.Namespace) -> int:
    now = datetime.datetime.now(datetime.UTC)
    print(f"bench/capacity.py, {now:%Y-%m-%d %H:%M} UTC, on {machine_line()}")
    print(f"  load average {os.getloadavg()[0]:.1f} at the start; steps "
          f"{', '.join(map(str, args.steps))} players in tables of {args.seats} on "
          f"{', '.join(args.server)}, a move every "
          f"{args.pace:g} s on average; {args.warmup:g} s warm-up and {args.seconds:g} s "
          f"measured per step; stops past p99 {args.p99_ms:g} ms or at an error; bots in "
          f"processes of up to {args.per_process}; keep-alive pings every "
          f"{DEFAULT.ping_interval_s:g} s; open-file limit {args.open_files}")  # fmt: skip
    tmp = Path(tempfile.mkdtemp(prefix="bench-capacity-"))
    embedded: EmbeddedRedis | None = None
    cluster: LocalRedisCluster | None = None
    try:
        url = os.environ.get("REDIS_URL")
        if url:
            store = f"REDIS_URL {url} (its CPU and memory include anyone else's use of it)"
            args.store_nodes = [url]
        elif args.cluster:
            cluster = LocalRedisCluster(
                root=tmp / "cluster", masters=args.cluster, fsync=args.store_fsync,
                extra_args=["--latency-monitor-threshold", str(STALL_MS)],
            ).start()  # fmt: skip
            url = cluster.url
            args.store_nodes = cluster.node_urls
            store = (f"a Redis Cluster of the bench's own: {args.cluster} valkey-server masters "
                     f"on this machine, appendfsync {args.store_fsync} (store figures: all "
                     "masters summed)")  # fmt: skip
        else:
            embedded = EmbeddedRedis(
                data_dir=tmp / "valkey", fsync=args.store_fsync,
                extra_args=["--latency-monitor-threshold", str(STALL_MS)],
            )  # fmt: skip
            url = embedded.start()
            args.store_nodes = [url]
            store = f"embedded valkey-server of the bench's own, appendfsync {args.store_fsync}"
        print(f"  store: {store}")
        if embedded is not None and args.store_fsync == "always":
            print(await asyncio.to_thread(disk_fsync_line, embedded.data_dir), flush=True)
        print("  columns: moves/s acknowledged, against (pace) players/pace; p50/p99 from a "
              "move's send to its acknowledgement; progress events the players received; "
              "CPU as % of one core; server MB resident (its worker processes); others: the "
              "rest of the machine's busy CPU meanwhile; ready: seconds the step's new players "
              "took to connect and start racing; store stall: the store's longest stall in "
              "the window (ms, from its latency monitor: an fsync of its append-only file, a "
              "slow command; - where the monitor is off)", flush=True)  # fmt: skip
        runs = [
            await ramp(args, tmp, store, url, kind, k)
            for kind in args.server
            for k in (args.workers if kind == "race" else [1])
        ]
        print()
        for run in runs:
            print("\n".join(summary(run, args)))
        if runs[0].kind == "race" and runs[0].workers == 1:
            print("  " + target_line(runs[0], args))
        for line in gain_lines(runs, args) + baseline_lines(runs, args):
            print(line)
        ok = all(r.stored_ok and not r.errors and not any(s.errors for s in r.steps)
                 for r in runs)  # fmt: skip
        print(f"  {'OK' if ok else 'FAILED'}: every acknowledged move stored and no error"
              if ok else "  FAILED: an error happened or a stored count differs")  # fmt: skip
        return 0 if ok else 1
    finally:
        if embedded is not None:
            embedded.stop()
        if cluster is not None:
            cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- main


def kind_list(text: str) -> list[str]:
    kinds = text.split(",")
    if not kinds or len(set(kinds)) != len(kinds) or not set(kinds) <= set(KINDS):
        raise argparse.ArgumentTypeError(f"servers among {', '.join(KINDS)}, comma-separated, "
                                         f"each once; not {text!r}")  # fmt: skip
    return kinds


def int_list(text: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"comma-separated whole numbers, not {text!r}") from None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 2)[2])  # fmt: skip
    parser.add_argument("--steps", type=int_list, default=int_list(DEFAULT_STEPS),
                        help=f"players at each step, rising, each a multiple of --seats "
                             f"(default {DEFAULT_STEPS})")  # fmt: skip
    parser.add_argument(
        "--warmup",
        type=float,
        default=10.0,
        help="seconds of play before each step's window (default 10)",
    )
    parser.add_argument(
        "--seconds", type=float, default=30.0, help="measured seconds per step (default 30)"
    )
    parser.add_argument(
        "--pace",
        type=float,
        default=2.0,
        help="mean seconds between two moves of a player (default 2)",
    )
    parser.add_argument(
        "--p99-ms",
        type=float,
        default=100.0,
        help="the ramp stops after a step whose p99 passes this (default 100)",
    )
    parser.add_argument("--seats", type=int, default=4, help="players per race (default 4)")
    parser.add_argument("--server", type=kind_list, default=kind_list(DEFAULT_SERVERS),
                        help="the servers ramped, one after another on the same store: race "
                             "(solitaire-server), relay (bench/relay_server.py), durable-echo, "
                             "echo (bench/server.py's), comma-separated "
                             f"(default {DEFAULT_SERVERS})")  # fmt: skip
    parser.add_argument("--workers", type=int_list, default=[1],
                        help="server processes, or several counts comma-separated, one ramp "
                             "each, e.g. 1,2 (default 1)")  # fmt: skip
    parser.add_argument(
        "--per-process",
        type=int,
        default=2500,
        help="players per bot process, a multiple of --seats (default 2500)",
    )
    parser.add_argument("--cluster", type=int, default=0, metavar="MASTERS",
                        help="run the store as a Redis Cluster of this many masters on this "
                             "machine (bench/local_cluster.py; the server with "
                             "SOLITAIRE_REDIS_CLUSTER=1), e.g. 3; 0: one store "
                             "(default)")  # fmt: skip
    parser.add_argument("--store-fsync", choices=FSYNC_POLICIES,
                        help="appendfsync of the bench's own store; not with REDIS_URL "
                             f"(default {DEFAULT.store_fsync})")  # fmt: skip
    args = parser.parse_args()
    steps = args.steps
    if not (1 <= len(steps) <= MAX_STEPS and steps == sorted(set(steps))
            and steps[0] > 0 and steps[-1] <= MAX_PLAYERS):  # fmt: skip
        parser.error(f"--steps: 1 to {MAX_STEPS} rising counts of at most {MAX_PLAYERS} players")
    if not 2 <= args.seats <= DEFAULT.max_players:
        parser.error(f"--seats: 2..{DEFAULT.max_players}")
    if any(s % args.seats for s in steps) or args.per_process % args.seats:
        parser.error(f"--steps and --per-process: multiples of --seats ({args.seats})")
    if not (0 <= args.warmup <= 300 and 1 <= args.seconds <= 600 and 0.05 <= args.pace <= 60
            and args.p99_ms > 0):  # fmt: skip
        parser.error("--warmup 0..300, --seconds 1..600, --pace 0.05..60, --p99-ms above 0")
    if not args.workers or any(not 1 <= k <= 16 for k in args.workers):
        parser.error("--workers: counts 1..16")
    if args.cluster and (os.environ.get("REDIS_URL") or not 3 <= args.cluster <= 8):
        parser.error("--cluster: 3..8 masters of the bench's own; unset REDIS_URL to use it")
    if args.cluster and args.server != ["race"]:
        # The baselines keep their keys in one Redis (no hash tags): a cluster is the race
        # server's set-up only.
        parser.error("--cluster: with --server race only")
    if args.store_fsync is not None and os.environ.get("REDIS_URL"):
        parser.error("--store-fsync sets the bench's own store: unset REDIS_URL to use it")
    args.store_fsync = args.store_fsync or DEFAULT.store_fsync
    # Each connection is a file in a bot process and one in a server process.
    args.open_files = raise_open_files(max(steps) + FD_MARGIN)
    if not args.seats <= args.per_process <= args.open_files - FD_MARGIN:
        parser.error(f"--per-process: {args.seats}..{args.open_files - FD_MARGIN} (the "
                     f"open-file limit is {args.open_files})")  # fmt: skip
    # A baseline is one process, whatever --workers says.
    fewest = min(args.workers) if args.server == ["race"] else 1
    if steps[-1] > fewest * (args.open_files - FD_MARGIN):
        parser.error(f"{steps[-1]} players do not fit in {fewest} server process"
                     f"{'es' if fewest > 1 else ''} with the open-file limit of "
                     f"{args.open_files}: fewer players, or more --workers")  # fmt: skip
    return asyncio.run(run_all(args))


if __name__ == "__main__":
    sys.exit(main())
