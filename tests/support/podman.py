"""podman, Debian's container engine, for the tests that build and run the server's image.

No Docker engine runs on the test machines, but podman from Debian's packages builds
deploy/Dockerfile and runs its containers, and serves a Docker-compatible API that
docker-compose talks to. `podman_engine()` installs what is needed (as root, with apt-get)
and hands back a `Podman`, or skips the calling test with the reason: not root, no apt-get,
podman refusing to run here.

One thing here is this sandbox's and not podman's: it refuses `setrlimit` to a container's
init, so runc fails every container. Where a probe container fails that way, `Podman` runs
runc through tests/support/runc_without_rlimits.py, which leaves the rlimits out of the spec.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from .debian import debian_packages

# podman and what it needs to build and run containers: runc (the OCI runtime), catatonit
# (`--init` / compose's `init: true`), netavark and aardvark-dns (networks whose containers
# find each other by service name, as compose expects); debootstrap makes the base images,
# docker-compose brings the compose file up through podman's API.
PACKAGES = (
    "podman",
    "runc",
    "catatonit",
    "netavark",
    "aardvark-dns",
    "iptables",
    "debootstrap",
    "docker-compose",
)
WRAPPER = Path(__file__).with_name("runc_without_rlimits.py")
COMMAND_TIMEOUT_S = 600
LAUNCHER_PREFIX = "solitaire-runc-"


class PodmanError(RuntimeError):
    pass


@dataclass(frozen=True)
class Podman:
    binary: str
    runtime: str | None = None  # an OCI runtime in place of podman's own (see the module doc)

    def argv(self, *args: str) -> list[str]:
        runtime = ["--runtime", self.runtime] if self.runtime else []
        return [self.binary, *runtime, *args]

    def run(
        self,
        *args: str,
        check: bool = True,
        timeout: float = COMMAND_TIMEOUT_S,
        input: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.argv(*args),
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
        if check and done.returncode != 0:
            raise PodmanError(
                f"{shlex.join(['podman', *args])} exited with {done.returncode}:\n"
                f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            )
        return done

    def image_exists(self, ref: str) -> bool:
        return self.run("image", "exists", ref, check=False).returncode == 0

    def healthcheck(self, container: str) -> bool:
        """Run the container's health check once, as podman's systemd timer would: there is
        no systemd here, so nothing else runs it. True when it passed."""
        return self.run("healthcheck", "run", container, check=False).returncode == 0

    def inspect(self, container: str, template: str) -> str:
        return self.run("inspect", "--format", template, container).stdout.strip()

    def with_runtime_wrapper(self, folder: Path) -> Podman:
        """The same podman, with runc behind tests/support/runc_without_rlimits.py."""
        runc = shutil.which("runc")
        if runc is None:
            pytest.skip("podman has no runc to run containers with")
        launcher = folder / "runc-without-rlimits"
        launcher.write_text(
            "#!/bin/sh\n"
            f"exec {shlex.quote(sys.executable)} -I {shlex.quote(str(WRAPPER))} "
            f'{shlex.quote(runc)} "$@"\n'
        )
        launcher.chmod(0o755)
        return Podman(self.binary, str(launcher))

    def forget_runtime_wrapper(self) -> None:
        """Remove the runtime wrapper's launcher (once no container uses it)."""
        if self.runtime and Path(self.runtime).parent.name.startswith(LAUNCHER_PREFIX):
            shutil.rmtree(Path(self.runtime).parent, ignore_errors=True)

    def able_to_run(self, image: str) -> Podman:
        """This podman, or one with the runtime wrapper, that runs a container of `image`;
        else a skip with what podman said."""
        probe = ("run", "--rm", "--network", "none", image, "true")
        done = self.run(*probe, check=False, timeout=120)
        if done.returncode == 0:
            return self
        if "rlimit" not in done.stderr:
            pytest.skip(f"podman cannot run a container here: {done.stderr.strip()[-400:]}")
        wrapped = self.with_runtime_wrapper(Path(tempfile.mkdtemp(prefix=LAUNCHER_PREFIX)))
        done = wrapped.run(*probe, check=False, timeout=120)
        if done.returncode != 0:
            pytest.skip(f"podman cannot run a container here: {done.stderr.strip()[-400:]}")
        return wrapped


def podman_engine() -> Podman:
    """podman, installed if need be; a skip with the reason where it cannot be."""
    if sys.platform != "linux":
        pytest.skip("podman runs containers on Linux only")
    if os.geteuid() != 0:
        # Rootless podman needs subordinate ids and user namespaces set up by an
        # administrator; the tests use rootful podman, as CI runs them (as root).
        pytest.skip("the container tests need root (rootful podman); CI runs them as root")
    debian_packages(*PACKAGES)
    binary = shutil.which("podman")
    if binary is None:
        pytest.skip("the podman package installed no podman binary")
    engine = Podman(binary)
    info = engine.run("info", check=False, timeout=120)
    if info.returncode != 0:
        pytest.skip(f"podman does not work here: {info.stderr.strip()[-400:]}")
    return engine
