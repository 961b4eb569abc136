"""docker-compose.yml brought up for real: Debian's docker-compose talking to podman's
Docker-compatible API (`podman system service`), which runs the containers.

Two things stand in for what a Docker engine does by itself:

- podman runs health checks from systemd timers, and there is no systemd here, so
  `HealthChecks` runs every container's check itself (`podman healthcheck run`) every couple of
  seconds while a project is up: compose's `depends_on: condition: service_healthy` waits on
  the results, as it would with Docker.
- The images are not pulled (no registry is reachable): the server's image is built from
  deploy/Dockerfile and the store and balancer are stand-ins (podman_images.py), tagged with
  the names the compose file gives them.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from deploy_files import ROOT
from support.podman import Podman

COMPOSE_FILE = ROOT / "docker-compose.yml"
# Read with it by `docker compose up` (the one instance's published port); the scale profile
# is run with docker-compose.yml alone (deploy/README.md), which leaves it out.
COMPOSE_OVERRIDE = ROOT / "docker-compose.override.yml"


def compose_files(profiles: list[str]) -> list[Path]:
    """The files a profile is run with, as deploy/README.md says."""
    return [COMPOSE_FILE] if "scale" in profiles else [COMPOSE_FILE, COMPOSE_OVERRIDE]


SERVICE_START_TIMEOUT_S = 60.0
HEALTH_INTERVAL_S = 2.0
COMPOSE_TIMEOUT_S = 300


@dataclass
class ApiService:
    """`podman system service` on a socket of its own, for docker-compose to talk to."""

    podman: Podman
    folder: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def socket(self) -> Path:
        return self.folder / "podman.sock"

    @property
    def docker_host(self) -> str:
        return f"unix://{self.socket}"

    def start(self) -> ApiService:
        log = open(self.folder / "podman-service.log", "wb")  # noqa: SIM115
        with log:
            self.process = subprocess.Popen(
                self.podman.argv("system", "service", "--time=0", self.docker_host),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + SERVICE_START_TIMEOUT_S
        while not self.answers():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    "podman's API service did not answer:\n"
                    + (self.folder / "podman-service.log").read_text()[-2000:]
                )
            time.sleep(0.1)
        return self

    def answers(self) -> bool:
        """Whether the API answers Docker's ping."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(5)
                s.connect(str(self.socket))
                s.sendall(b"GET /_ping HTTP/1.0\r\nHost: podman\r\n\r\n")
                reply = s.recv(64)
        except OSError:
            return False
        return reply.startswith(b"HTTP/1.") and b" 200 " in reply

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@dataclass
class HealthChecks:
    """Every running container of a compose project has its health check run every
    HEALTH_INTERVAL_S, in a thread, as podman's systemd timers would (see the module doc)."""

    podman: Podman
    project: str
    stopping: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def _loop(self) -> None:
        while not self.stopping.is_set():
            listed = self.podman.run(
                "ps", "--filter", f"label=com.docker.compose.project={self.project}",
                "--format", "{{.Names}}", check=False, timeout=60,
            )  # fmt: skip
            for name in listed.stdout.split():
                if self.stopping.is_set():
                    return
                self.podman.healthcheck(name)
            self.stopping.wait(HEALTH_INTERVAL_S)

    def __enter__(self) -> HealthChecks:
        self.thread = threading.Thread(target=self._loop, name="health-checks", daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(60)


@dataclass
class ComposeProject:
    """One `docker-compose -p NAME` project of docker-compose.yml on podman."""

    podman: Podman
    api: ApiService
    name: str
    profiles: list[str]
    env: dict[str, str]  # the host's variables compose interpolates (`.env` would hold them)

    def compose(self, *args: str, timeout: float = COMPOSE_TIMEOUT_S) -> str:
        profiles = [arg for p in self.profiles for arg in ("--profile", p)]
        files = [arg for f in compose_files(self.profiles) for arg in ("-f", str(f))]
        binary = shutil.which("docker-compose") or "docker-compose"
        done = subprocess.run(
            [binary, "-p", self.name, *files, *profiles, *args],
            cwd=ROOT,
            # Only what compose needs, so that no SOLITAIRE_* of the test run leaks in.
            env={
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": os.environ.get("HOME", "/root"),
                "DOCKER_HOST": self.api.docker_host,
                **self.env,
            },
            capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(
                f"docker-compose {' '.join(args)} exited with {done.returncode}:\n"
                f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}\n{self.logs()}"
            )
        return done.stdout + done.stderr

    def containers(self, service: str | None = None, *, all_states: bool = False) -> list[str]:
        filters = ["--filter", f"label=com.docker.compose.project={self.name}"]
        if service is not None:
            filters += ["--filter", f"label=com.docker.compose.service={service}"]
        listed = self.podman.run(
            "ps", *(["-a"] if all_states else []), *filters, "--format", "{{.Names}}"
        )
        return sorted(listed.stdout.split())

    def container(self, service: str) -> str:
        (name,) = self.containers(service, all_states=True)
        return name

    def health(self, service: str) -> str:
        return self.podman.inspect(self.container(service), "{{.State.Health.Status}}")

    def logs(self, tail: int = 40) -> str:
        out = []
        for name in self.containers(all_states=True):
            logs = self.podman.run("logs", "--tail", str(tail), name, check=False, timeout=60)
            out.append(f"--- {name}\n{logs.stdout}{logs.stderr}")
        return "\n".join(out)

    def up(self, healthy: list[str]) -> None:
        """`up -d` (the images are there: no build, no pull), then wait until each service in
        `healthy` has passed its health check."""
        self.compose("up", "-d", "--no-build")
        deadline = time.monotonic() + SERVICE_START_TIMEOUT_S
        while any(self.health(s) != "healthy" for s in healthy):
            if time.monotonic() > deadline:
                states = {s: self.health(s) for s in healthy}
                raise AssertionError(f"not healthy: {states}\n{self.logs()}")
            time.sleep(0.5)

    def down(self) -> None:
        """`down` with its volumes; whatever is left (after a failure) removed by label."""
        try:
            self.compose("down", "--volumes", "--timeout", "10")
        finally:
            label = f"label=com.docker.compose.project={self.name}"
            leftovers = self.podman.run("ps", "-aq", "--filter", label, check=False).stdout.split()
            if leftovers:
                self.podman.run("rm", "-f", "-t", "5", *leftovers, check=False)
            for kind in ("volume", "network"):
                names = self.podman.run(
                    kind, "ls", "-q", "--filter", label, check=False
                ).stdout.split()
                if names:
                    self.podman.run(kind, "rm", "-f", *names, check=False)


def http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True
