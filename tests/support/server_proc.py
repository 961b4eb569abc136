"""Start real `solitaire-server` processes for tests, on free ports.

    server = ServerProcess(redis_url=url, namespace=ns, data_dir=tmp_path)
    server.start()           # waits until GET /healthz answers 200
    server.ws_url            # ws://127.0.0.1:PORT/ws
    server.kill()            # SIGKILL;  server.stop() is SIGTERM and waits
    server.start()           # again, same port, same store

`redis_url=None` runs the server with no REDIS_URL: it starts its embedded
valkey-server in `data_dir`. `ServerFactory` starts several and stops them all.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_command() -> list[str]:
    script = Path(sys.executable).parent / "solitaire-server"
    return [str(script)] if script.exists() else [sys.executable, "-m", "server"]


@dataclass
class ServerProcess:
    redis_url: str | None
    namespace: str
    data_dir: Path
    port: int = 0
    env: dict[str, str] = field(default_factory=dict)  # extra SOLITAIRE_* settings
    args: list[str] = field(default_factory=list)
    # Start as the README does: no SOLITAIRE_DATA_DIR, so the server uses its default
    # ./data, run from data_dir's parent (data_dir must then be named "data").
    default_data_dir: bool = False
    # Start with this soft open-file limit (under the hard one), as a service manager may.
    soft_open_files: int | None = None
    # Where it listens (--host), the address this process reaches it at, and a prefix of
    # its command line (e.g. running it in another network namespace: tests/support/netns.py).
    host: str = "127.0.0.1"
    address: str = "127.0.0.1"
    prefix: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def ws_url(self) -> str:
        return f"ws://{self.address}:{self.port}/ws"

    @property
    def http_url(self) -> str:
        return f"http://{self.address}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / f"server-{self.port}.log"

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def start(self, timeout: float = 30.0, wait: bool = True) -> ServerProcess:
        """Starts the server and (unless not `wait`) waits until it answers /healthz."""
        if not self.port:
            self.port = free_port()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SOLITAIRE_")}
        env.pop("REDIS_URL", None)
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        env.update(
            {
                "SOLITAIRE_NAMESPACE": self.namespace,
                "SOLITAIRE_LOG_LEVEL": "INFO",
                **self.env,
            }
        )
        if self.default_data_dir:
            assert self.data_dir.name == "data"
        else:
            env["SOLITAIRE_DATA_DIR"] = str(self.data_dir)
        self.starts += 1
        log = self.log_path.open("ab")
        log.write(f"---- start #{self.starts}\n".encode())
        log.flush()
        self.proc = subprocess.Popen(
            [
                *self.prefix,
                *server_command(),
                "--host",
                self.host,
                "--port",
                str(self.port),
                *self.args,
            ],
            env=env,
            cwd=self.data_dir.parent if self.default_data_dir else None,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=self._limit_open_files if self.soft_open_files else None,
        )
        log.close()
        if wait:
            self.wait_healthy(timeout)
        return self

    def _limit_open_files(self) -> None:
        _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.soft_open_files, hard))

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def health(self) -> int | None:
        try:
            with urllib.request.urlopen(self.http_url + "/healthz", timeout=2) as r:
                return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except OSError:
            return None

    def wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}:\n{self.log_text()}")
            if self.health() == 200:
                return
            time.sleep(0.05)
        raise RuntimeError(f"server not healthy after {timeout}s:\n{self.log_text()}")

    def stop(self, timeout: float = 20.0) -> int | None:
        """SIGTERM and wait; returns the exit code."""
        proc, self.proc = self.proc, None
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return proc.returncode

    def kill(self) -> None:
        """SIGKILL: no chance to clean up."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            proc.wait()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@dataclass
class ServerFactory:
    """Starts servers sharing one store (same Redis URL, namespace and data dir)."""

    redis_url: str | None
    namespace: str
    data_dir: Path
    servers: list[ServerProcess] = field(default_factory=list)

    def start(
        self, env: dict[str, str] | None = None, args: list[str] | None = None
    ) -> ServerProcess:
        server = ServerProcess(
            self.redis_url,
            self.namespace,
            self.data_dir,
            env=dict(env or {}),
            args=list(args or []),
        )
        self.servers.append(server)
        return server.start()

    def stop_all(self) -> None:
        for server in self.servers:
            with contextlib.suppress(Exception):
                server.stop()


def delete_namespace(redis_url: str, namespace: str) -> None:
    """Remove every key of a test namespace (keys start with `{namespace:`)."""
    import redis

    client = redis.Redis.from_url(redis_url)
    try:
        batch = []
        for key in client.scan_iter(match="{" + namespace + ":*", count=1000):
            batch.append(key)
            if len(batch) >= 500:
                client.delete(*batch)
                batch.clear()
        if batch:
            client.delete(*batch)
    finally:
        client.close()
