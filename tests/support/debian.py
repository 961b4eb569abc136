"""Outside tools that some tests need (Chromium, fc-solve, HAProxy, docker-compose, podman),
taken from Debian's packages.

A fresh machine may lack them. When we run as root with apt-get at hand (as CI does), the
test setup installs the package; otherwise the calling test is skipped with the reason, so a
developer's run without root still passes on everything else.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

INSTALL_TIMEOUT_S = 900
LOCK_WAIT_S = 600


def _install(*packages: str, recommends: bool = True) -> str | None:
    """Install `packages`; the reason they could not be installed, or None."""
    named = " ".join(packages)
    if shutil.which("apt-get") is None:
        return f"there is no apt-get to install {named}"
    if os.geteuid() != 0:
        return f"install it with: sudo apt-get install -y {named}"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Another apt-get (a second test process, a package being installed by hand) may hold
    # dpkg's lock for a while: wait for it rather than skip a test that could have run.
    lock_wait = ["-o", f"DPkg::Lock::Timeout={LOCK_WAIT_S}"]
    install = ["apt-get", *lock_wait, "install", "-y", "-qq"]
    if not recommends:
        install.append("--no-install-recommends")
    install += packages
    done = subprocess.run(
        install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
    )
    if done.returncode != 0:  # the package lists may be missing or stale: refresh once
        subprocess.run(
            ["apt-get", *lock_wait, "update", "-qq"], env=env, capture_output=True, timeout=600
        )
        done = subprocess.run(
            install, env=env, capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S
        )
    if done.returncode != 0:
        return f"apt-get install {named} failed: {done.stderr.strip()[-300:]}"
    return None


def installed(package: str) -> bool:
    done = subprocess.run(
        ["dpkg-query", "-W", "-f", "${Status}", package], capture_output=True, text=True
    )
    return done.returncode == 0 and done.stdout.endswith(" installed")


def debian_packages(*packages: str) -> None:
    """Make sure Debian's `packages` are installed (only them: no recommended extras); else a
    skip with the reason."""
    if shutil.which("dpkg-query") is None:
        pytest.skip(f"not a Debian system: cannot install {' '.join(packages)}")
    missing = [p for p in packages if not installed(p)]
    if not missing:
        return
    reason = _install(*missing, recommends=False)
    still = [p for p in missing if not installed(p)]
    if still:
        pytest.skip(f"{' '.join(still)} missing ({reason or 'apt-get installed nothing'})")


def debian_tool(binary: str, package: str) -> str:
    """The path of `binary`, installing Debian's `package` first if need be; else a skip."""
    found = shutil.which(binary)
    if found:
        return found
    reason = _install(package)
    found = shutil.which(binary)
    if found is None:
        pytest.skip(f"{binary} is missing ({reason or f'{package} installed no {binary}'})")
    return found
