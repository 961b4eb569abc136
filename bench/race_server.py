"""The one way a bench starts the race server, and what it reads of server processes.

`start_race_server` runs `solitaire-server` (the console script beside this Python, or a
`--baseline-server` executable) on a Redis, in a namespace of its own, with every limit
a bench's load would hit lifted and no background search for daily deals; `settings`
(SOLITAIRE_* environment variables) put back or change what a bench needs.
`RaceServer.stop` stops it and `drop_namespace` removes its keys; `running_race_server`
does all of it around a bench that needs one server.

`start_baseline_server` runs one of the baselines a race server is measured against (the
echo and the durable echo of bench/server.py, the durable relay of bench/relay_server.py)
in a child process, the same way for every bench; `list_lengths` and `drop_keys` read and
remove what the durable ones stored.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import redis.asyncio as aioredis

from server.store.embedded import EmbeddedRedis

T = TypeVar("T")

# Thousands of connections and players from this one address, playing as fast as replies
# come: no rate or admission limits.
LOAD_SETTINGS = {
    "SOLITAIRE_RATE": "1000000",
    "SOLITAIRE_BURST": "1000000",
    "SOLITAIRE_MAX_CONNECTIONS": "0",
    "SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS": "0",
    "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR": "0",
    "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_DAY": "0",
    "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS": "0",  # its name in a --baseline-server before
    "SOLITAIRE_LOG_LEVEL": "INFO",
    # A fresh namespace has no daily deals yet: their background search (solver
    # processes, tens of seconds of CPU) would run during the load. It is not part of
    # it, and a server that has been up a day has long finished it.
    "SOLITAIRE_DAILY_PREPARE_AHEAD": "0",
}


@dataclass
class RaceServer:
    """One `solitaire-server` process a bench started."""

    name: str
    store: str  # what the store is, for the report
    redis_url: str
    namespace: str
    proc: subprocess.Popen[bytes]
    log: Path
    port: int
    cluster: bool = False  # its store is a Redis Cluster (SOLITAIRE_REDIS_CLUSTER=1)

    @property
    def url(self) -> str:
        """Where players connect."""
        return f"ws://127.0.0.1:{self.port}/ws"

    def page(self, path: str = "") -> str:
        """An HTTP address on the server: its pages, /healthz, /metrics."""
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self, timeout: float = 60) -> int:
        """SIGTERM, as in production (the server finishes what is in flight); its exit
        status. One still running after `timeout` is killed, and that is an error."""
        self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise RuntimeError(
                f"{self.name} ignored SIGTERM for {timeout:g} s; see {self.log}"
            ) from None


def start_race_server(
    tmp: Path,
    name: str,
    store: str,
    redis_url: str,
    exe: Path | None = None,
    workers: int = 1,
    settings: dict[str, str] | None = None,
) -> RaceServer:
    """A solitaire-server on `redis_url` in a namespace of its own, set for a bench's load
    (LOAD_SETTINGS, then `settings` over them); it logs to a file in `tmp`. It may not
    listen yet: `wait_port(server.port)`."""
    port = free_port()
    namespace = f"bench{uuid.uuid4().hex[:8]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOLITAIRE_")}
    env.update(LOAD_SETTINGS)
    env.update(
        SOLITAIRE_NAMESPACE=namespace,
        SOLITAIRE_DATA_DIR=str(tmp / f"data-{port}"),
        REDIS_URL=redis_url,
    )
    env.update(settings or {})
    exe = exe or Path(sys.executable).with_name("solitaire-server")
    log = tmp / f"server-{port}.log"
    with open(log, "wb") as out:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            [str(exe), "--port", str(port), *(["--workers", str(workers)] if workers > 1 else [])],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    cluster = env.get("SOLITAIRE_REDIS_CLUSTER") == "1"
    return RaceServer(name, store, redis_url, namespace, proc, log, port, cluster)


BASELINE_KINDS = ("relay", "durable-echo", "echo")


@dataclass
class BaselineServer:
    """One baseline server process a bench started: `kind` is one of BASELINE_KINDS."""

    kind: str
    proc: subprocess.Popen[bytes]
    port: int
    key: str  # the durable echo's list, the relay's key prefix; "" for the echo

    @property
    def url(self) -> str:
        """Where players connect (a baseline serves any path)."""
        return f"ws://127.0.0.1:{self.port}/"

    def wait_ready(self) -> None:
        """Until it listens (it says "ready" once it does)."""
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != b"ready":
            raise RuntimeError(f"the {self.kind} server did not start "
                               f"(exit code {self.proc.wait()})")  # fmt: skip

    def stop(self, timeout: float = 30) -> None:
        """SIGTERM; killed if still running after `timeout`."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_baseline_server(kind: str, redis_url: str = "") -> BaselineServer:
    """A baseline server of `kind` on a free port; the durable ones append to `redis_url`,
    under keys of their own. It may not listen yet: `wait_ready()`."""
    port = free_port()
    tag = uuid.uuid4().hex[:8]
    if kind == "echo":
        key, cmd = "", bench_module("bench.server", "--serve-echo", str(port))
    elif kind == "durable-echo":
        key = f"{{bench-durable-{tag}}}:log"
        cmd = bench_module("bench.server", "--serve-durable-echo", str(port), redis_url, key)
    elif kind == "relay":
        key = f"bench-relay-{tag}"
        cmd = bench_module("bench.relay_server", str(port), redis_url, key)
    else:
        raise ValueError(f"no baseline server {kind!r}: one of {', '.join(BASELINE_KINDS)}")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return BaselineServer(kind, proc, port, key)


async def list_lengths(url: str, keys: list[str]) -> list[int]:
    """The length of each Redis list of `keys`, in their order."""
    r = aioredis.Redis.from_url(url)
    counts: list[int] = []
    try:
        for at in range(0, len(keys), 1000):
            pipe = r.pipeline(transaction=False)
            for key in keys[at : at + 1000]:
                pipe.llen(key)
            counts += await pipe.execute()
    finally:
        await r.aclose()
    return counts


async def drop_keys(url: str, match: str) -> None:
    """Remove every key that matches the pattern `match` (a baseline's keys)."""
    r = aioredis.Redis.from_url(url)
    try:
        batch = [k async for k in r.scan_iter(match=match, count=1000)]
        for i in range(0, len(batch), 500):
            await r.delete(*batch[i : i + 500])
    finally:
        await r.aclose()


def run_on_redis(
    bench: Callable[[argparse.Namespace, str], Coroutine[Any, Any, T]],
    args: argparse.Namespace,
) -> T:
    """Run `bench(args, redis_url)` on REDIS_URL, else on a valkey-server of its own, after
    a line saying where and on what (bench/leaderboard.py, replays.py, long_games.py)."""
    url = os.environ.get("REDIS_URL")
    print(f"cpu cores: {os.cpu_count()}, Redis: {url or 'embedded valkey-server'}, "
          f"started {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M:%S} UTC, "
          f"load average {os.getloadavg()[0]:.2f} (others' work shares the cores)")  # fmt: skip
    if url:
        return asyncio.run(bench(args, url))
    with tempfile.TemporaryDirectory(prefix="bench-valkey-") as d, EmbeddedRedis(Path(d)) as r:
        return asyncio.run(bench(args, r.url))


@contextlib.asynccontextmanager
async def running_race_server(
    redis_url: str,
    settings: dict[str, str] | None = None,
    exe: Path | None = None,
    workers: int = 1,
    name: str = "solitaire-server",
) -> AsyncIterator[RaceServer]:
    """A race server (start_race_server) that answers /healthz, with all its `workers`
    listening, stopped and its namespace dropped on the way out."""
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp:
        server = start_race_server(Path(tmp), name, "", redis_url, exe, workers, settings)
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


IDLE_PER_HELPER = 5000  # idle connections one helper process opens and holds


@contextlib.asynccontextmanager
async def idle_players(
    url: str, count: int, hello: bool = True, log: Path | None = None
) -> AsyncIterator[None]:
    """`count` idle connections to `url` (greeted as players with a hello if `hello`), held
    by helper processes (bench/server.py's --hold-idle) while inside; `log` is the server's,
    whose end is shown if a helper fails."""
    helpers = []
    try:
        # One helper after another: all at once, a thousand handshakes queue behind
        # thousands of first hellos on a loaded machine, past the server's open timeout.
        for first in range(0, count, IDLE_PER_HELPER):
            n = min(IDLE_PER_HELPER, count - first)
            h = await asyncio.create_subprocess_exec(
                *bench_module("bench.server", "--hold-idle", url, str(n), str(first)),
                *(["--hello"] if hello else []),
                cwd=ROOT,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            helpers.append(h)
            assert h.stdout is not None
            if (await h.stdout.readline()).strip() != b"ready":
                tail = "".join(log.read_text().splitlines(keepends=True)[-15:]) if log else ""
                code = await h.wait()
                raise RuntimeError(f"an idle-connection helper failed (exit code {code}); "
                                   f"the server's log ends:\n{tail}")  # fmt: skip
        await asyncio.sleep(1.0)  # the last hellos' replies written, the loop settled
        yield
    finally:
        for h in helpers:
            assert h.stdin is not None
            h.stdin.close()
        for h in helpers:
            await h.wait()


def wait_healthy(server: RaceServer, timeout: float = 30) -> None:
    """Until the server's /healthz answers 200 (its store is reachable)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise RuntimeError(f"the server exited with {server.proc.returncode}; see {server.log}")
        with (
            contextlib.suppress(OSError),  # HTTPError too: not healthy yet
            urllib.request.urlopen(server.page("/healthz"), timeout=2) as reply,
        ):
            if reply.status == 200:
                return
        time.sleep(0.05)
    raise RuntimeError(f"the server did not become healthy in {timeout:g} s; see {server.log}")


def store_client(url: str, cluster: bool = False) -> aioredis.Redis | aioredis.RedisCluster:
    """A client of the store at `url`; of the whole Redis Cluster `url` names a node of when
    `cluster` (its scans walk every master, its pipelines and multi-key deletes split by slot)."""
    if cluster:
        return aioredis.RedisCluster.from_url(url)
    return aioredis.Redis.from_url(url)


async def drop_namespace(url: str, namespace: str, cluster: bool = False) -> None:
    """Remove every key of a bench server's namespace."""
    r = store_client(url, cluster)
    try:
        batch = [k async for k in r.scan_iter(match="{" + namespace + ":*", count=1000)]
        for i in range(0, len(batch), 500):
            await r.delete(*batch[i : i + 500])
    finally:
        await r.aclose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_port(port: int, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def worker_pids(supervisor: int) -> list[int]:
    """The worker processes of a `solitaire-server --workers N` (not its store, nor
    multiprocessing's resource tracker)."""
    out = []
    for task in Path(f"/proc/{supervisor}/task").iterdir():
        for child in (task / "children").read_text().split():
            with contextlib.suppress(OSError):
                if b"spawn_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                    out.append(int(child))
    return out


def raise_open_files(needed: int) -> int:
    """Raises this process's open-file limit towards `needed` (the servers started from here
    inherit it; the race server raises its own soft limit to the hard one); the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard < needed:
        with contextlib.suppress(ValueError, OSError):  # above the hard limit: root only
            resource.setrlimit(resource.RLIMIT_NOFILE, (needed, needed))
            soft, hard = needed, needed
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


# The repository: a bench's helper processes run as `python -m bench.NAME` from here.
ROOT = Path(__file__).resolve().parent.parent


def bench_module(name: str, *args: str) -> list[str]:
    """The command line of bench module `name` (e.g. "bench.server") with `args`; run it
    with cwd=ROOT."""
    return [sys.executable, "-m", name, *args]
