"""Several server processes on one port: `solitaire-server --workers N`.

A server process runs one event loop on one core. With `--workers N` the process started
by the command becomes a supervisor that serves nothing itself: it starts N workers
(multiprocessing's spawn: each a fresh interpreter, sharing nothing with the supervisor but
the settings, the store's address and, where needed, the listening socket), starts again
one that dies (after a pause that grows with its deaths, and not at all once it keeps
dying), and on SIGTERM or SIGINT asks each to stop and waits while they drain.

Each worker is a whole server instance (`server/app.py`): an instance id of its own, its
own connections and store clients, its share of the reaper, the bots and the daily deals;
the players of one race on different workers hear each other through Redis pub/sub, as
across hosts. With the embedded store the supervisor runs (and watches) the one
valkey-server every worker uses: it holds the data directory's lock.

The port: on Linux each worker binds a listening socket of its own with SO_REUSEPORT and
the kernel spreads new connections over them (a dead worker's share goes to the others at
once); elsewhere the supervisor opens one listening socket that every worker accepts on.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import logging
import math
import multiprocessing
import os
import signal
import socket
import sys
import time
from dataclasses import dataclass, field, replace
from multiprocessing import resource_tracker
from multiprocessing.process import BaseProcess
from pathlib import Path

from server import logs
from server.config import Config
from server.edge.reach import reach_lines
from server.runner import serve
from server.store.embedded import EmbeddedRedis

log = logging.getLogger(__name__)

# A worker that dies is started again after BACKOFF_S[k] seconds, k being its deaths within
# RESTART_WINDOW_S before this one; one more death than that and the supervisor stops
# everything and exits 1: a restart will not mend what kills it (a bad setting, a store
# that refuses it), and whatever runs the supervisor should know.
BACKOFF_S = (0.0, 0.5, 1.0, 2.0, 4.0)
MAX_RESTARTS = len(BACKOFF_S)
RESTART_WINDOW_S = 60.0
REUSE_PORT = sys.platform.startswith("linux") and hasattr(socket, "SO_REUSEPORT")
CGROUP = Path("/sys/fs/cgroup")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def stop_timeout_s(config: Config) -> float:
    """How long the supervisor waits for its workers after SIGTERM before it kills them:
    a worker's drain takes up to its grace for requests in flight, as long again for its
    background tasks, and a moment to close its connections. (A container's stop grace
    must be longer.)"""
    return 2 * config.shutdown_grace_s + 10


def worker_count(setting: int) -> int:
    """Workers to run for the `workers` setting: 0 is one per usable core."""
    return setting if setting > 0 else usable_cpus()


def usable_cpus() -> int:
    """Cores this process may run on: its CPU affinity, capped by a cgroup CPU quota (a
    container started with `--cpus 2` on a larger host gets 2)."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform (macOS)
        count = os.cpu_count() or 1
    quota = cgroup_cpu_quota(CGROUP, _own_cgroups())
    if quota is not None:
        count = min(count, math.ceil(quota))
    return max(1, count)


def cgroup_cpu_quota(root: Path, own: dict[str, str]) -> float | None:
    """CPUs' worth of time the cgroup grants (2.5 for `--cpus 2.5`), None if unlimited.

    `own` maps cgroup controllers ("" for v2) to this process's path, as /proc/self/cgroup
    says; inside a container the path is often / or one the container cannot see, so the
    mount's root files are read after the path's."""
    for path in (own.get(""), "/"):  # cgroup v2: cpu.max is "max 100000" or "200000 100000"
        if path is None:
            continue
        with contextlib.suppress(OSError, ValueError):
            quota, period = (root / path.lstrip("/") / "cpu.max").read_text().split()
            return None if quota == "max" else int(quota) / int(period)
    for path in (own.get("cpu"), "/"):  # cgroup v1: a quota of -1 is no quota
        if path is None:
            continue
        base = root / "cpu" / path.lstrip("/")
        with contextlib.suppress(OSError, ValueError):
            quota_us = int((base / "cpu.cfs_quota_us").read_text())
            period_us = int((base / "cpu.cfs_period_us").read_text())
            return quota_us / period_us if quota_us > 0 and period_us > 0 else None
    return None


def _own_cgroups() -> dict[str, str]:
    out: dict[str, str] = {}
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            for name in controllers.split(",") if controllers else [""]:
                out[name] = path
    return out


# ---------------------------------------------------------------- the supervisor


@dataclass
class Slot:
    """One worker's place: the process in it now, and when its earlier ones died."""

    index: int
    process: BaseProcess | None = None
    deaths: collections.deque[float] = field(default_factory=collections.deque)
    exited: asyncio.Event = field(default_factory=asyncio.Event)


class Supervisor:
    def __init__(
        self, config: Config, redis_url: str, count: int, embedded: EmbeddedRedis | None
    ) -> None:
        self.config = config
        self.redis_url = redis_url
        self.count = count
        self.embedded = embedded
        self.slots = [Slot(i) for i in range(1, count + 1)]
        self.failed = False  # a worker kept dying, or the embedded store did
        self._context = multiprocessing.get_context("spawn")
        self._sock: socket.socket | None = None  # the shared listening socket, if any
        self._stop = asyncio.Event()
        self._stopping = False
        self._restarts: set[asyncio.Task[None]] = set()

    async def run(self) -> int:
        """Starts the workers and keeps them running until SIGTERM or SIGINT; the exit code
        (0 once every worker stopped cleanly)."""
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, self._signalled, sig)
        try:
            self._bind()
        except OSError as exc:
            log.error("cannot listen on %s:%d: %s", self.config.host, self.config.port, exc)
            return 1
        how = ("each binds it with SO_REUSEPORT" if self._sock is None
               else "one listening socket shared")  # fmt: skip
        log.info("starting %d workers on %s:%d (%s)", self.count, self.config.host,
                 self.config.port, how)  # fmt: skip
        for line in reach_lines(self.config.public_url, self.config.host, self.config.port):
            log.info("%s", line)
        watcher = None
        if self.embedded is not None:
            watcher = asyncio.create_task(self.embedded.watch(self._give_up), name="embedded")
        # Started now, before any worker: multiprocessing starts it with the first worker
        # otherwise, and unblocks the stop signals on the way (see _start).
        resource_tracker.ensure_running()
        try:
            for slot in self.slots:
                self._start(slot)
            await self._stop.wait()
            return await self._stop_workers()
        finally:
            for task in [*self._restarts, *([watcher] if watcher else [])]:
                task.cancel()
            self._kill_all()  # only if something above went wrong: _stop_workers waited
            if self._sock is not None:
                self._sock.close()

    def _bind(self) -> None:
        """Binds the port once here, as the workers will, so that a port in use stops the
        supervisor with one plain message rather than every worker again and again; a port
        of 0 is resolved here, so that every worker takes the same one."""
        cfg = self.config
        family, kind, proto, _name, address = socket.getaddrinfo(
            cfg.host or None, cfg.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            port = sock.getsockname()[1]
            if REUSE_PORT:
                # Not kept: a bound socket that does not listen would still get its share
                # of the connections that SO_REUSEPORT spreads, and leave them unanswered.
                sock.close()
            else:
                sock.listen(100)
                sock.set_inheritable(False)  # passed to the workers explicitly
                self._sock = sock
        except BaseException:
            sock.close()
            raise
        if port != cfg.port:
            self.config = replace(cfg, port=port)

    def _signalled(self, sig: signal.Signals) -> None:
        if not self._stop.is_set():
            log.info("%s: stopping every worker", sig.name)
        self._stop.set()

    def _give_up(self) -> None:
        log.error("stopping: the embedded store cannot be kept running")
        self.failed = True
        self._stop.set()

    def _start(self, slot: Slot) -> None:
        process = self._context.Process(
            target=worker_main,
            args=(self.config, self.redis_url, slot.index, self.count, self._sock, os.getpid()),
            name=f"solitaire-worker-{slot.index}",
        )
        # Born with SIGTERM and SIGINT blocked (a signal mask is inherited), which App.run
        # unblocks once its handlers are in place: a stop asked for while the worker starts
        # then waits for them, instead of killing it half-way or being lost in its imports.
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            process.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        slot.process = process
        slot.exited.clear()
        asyncio.get_running_loop().add_reader(process.sentinel, self._exited, slot, process)
        log.info("worker %d started (pid %d)", slot.index, process.pid)

    def _exited(self, slot: Slot, process: BaseProcess) -> None:
        """The worker's end: its sentinel became readable."""
        asyncio.get_running_loop().remove_reader(process.sentinel)
        process.join()  # the process is gone already: this only reaps it
        slot.exited.set()
        code = process.exitcode
        assert code is not None
        if self._stopping:
            how = "stopped" if code == 0 else _exit_text(code)
            log.info("worker %d (pid %d) %s", slot.index, process.pid, how)
            return
        now = time.monotonic()
        while slot.deaths and now - slot.deaths[0] > RESTART_WINDOW_S:
            slot.deaths.popleft()
        if len(slot.deaths) >= MAX_RESTARTS:
            log.error("worker %d (pid %d) %s: %d deaths within %g s, giving up",
                      slot.index, process.pid, _exit_text(code), len(slot.deaths) + 1,
                      RESTART_WINDOW_S)  # fmt: skip
            self.failed = True
            self._stop.set()
            return
        delay = BACKOFF_S[len(slot.deaths)]
        slot.deaths.append(now)
        log.error("worker %d (pid %d) %s; restarting it in %g s (restart %d of at most %d "
                  "within %g s)", slot.index, process.pid, _exit_text(code), delay,
                  len(slot.deaths), MAX_RESTARTS, RESTART_WINDOW_S)  # fmt: skip
        task = asyncio.create_task(self._restart(slot, delay), name=f"restart-{slot.index}")
        self._restarts.add(task)
        task.add_done_callback(self._restarts.discard)

    async def _restart(self, slot: Slot, delay: float) -> None:
        await asyncio.sleep(delay)
        if not self._stopping:
            self._start(slot)

    async def _stop_workers(self) -> int:
        """SIGTERM to every worker, then wait while each drains as a lone server does;
        SIGKILL for any still there well after its grace."""
        self._stopping = True
        for task in self._restarts:
            task.cancel()
        running = [s for s in self.slots if s.process is not None and not s.exited.is_set()]
        for slot in running:
            assert slot.process is not None
            with contextlib.suppress(ProcessLookupError):
                slot.process.terminate()
        timeout = stop_timeout_s(self.config)
        waits = [asyncio.create_task(s.exited.wait()) for s in running]
        if waits:
            _done, late = await asyncio.wait(waits, timeout=timeout)
            for waiting in late:
                waiting.cancel()
        clean = not self.failed
        for slot in running:
            assert slot.process is not None
            if not slot.exited.is_set():
                log.error("worker %d (pid %d) still running %g s after SIGTERM: killing it",
                          slot.index, slot.process.pid, timeout)  # fmt: skip
                self._kill(slot.process)
            clean = clean and slot.process.exitcode == 0
        log.info("every worker stopped%s", "" if clean else " (not all of them cleanly)")
        return 0 if clean else 1

    def _kill_all(self) -> None:
        for slot in self.slots:
            if slot.process is not None and slot.process.exitcode is None:
                self._kill(slot.process)

    @staticmethod
    def _kill(process: BaseProcess) -> None:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        process.join()


def supervise(config: Config, redis_url: str, count: int, embedded: EmbeddedRedis | None) -> int:
    """Runs `count` workers until SIGTERM or SIGINT; the exit code."""
    # asyncio's own loop: the supervisor only waits, uvloop would buy nothing.
    return asyncio.run(Supervisor(config, redis_url, count, embedded).run())


# ---------------------------------------------------------------- a worker


def worker_main(
    config: Config,
    redis_url: str,
    index: int,
    count: int,
    sock: socket.socket | None,
    supervisor: int,
) -> None:
    """A worker process: one server instance on the shared port until SIGTERM."""
    if sys.platform.startswith("linux"):
        # SIGTERM (a drain) when the supervisor dies, even by SIGKILL: no worker outlives it.
        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != supervisor:  # it died before the line above
        sys.exit(1)
    logs.setup(config.log_level, config.log_format)
    log.info("worker %d of %d (pid %d), supervised by pid %d", index, count, os.getpid(),
             supervisor)  # fmt: skip
    from server.edge.connection import Listen  # late, as App is: only workers need it

    sys.exit(serve(config, redis_url, listen=Listen(reuse_port=sock is None, sock=sock)))


def _exit_text(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"
