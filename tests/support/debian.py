"""Outside tools that some tests need (Chromium, fc-solve, HAProxy, docker-compose), taken
from Debian's packages.

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


def _install(package: str) -> str | None:
    """Install `package`; the reason it could not be installed, or None."""
    if shutil.which("apt-get") is None:
        return f"there is no apt-get to install {package}"
    if os.geteuid() != 0:
        return f"install it with: sudo apt-get install -y {package}"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # Another apt-get (a second test process, a package being installed by hand) may hold
    # dpkg's lock for a while: wait for it rather than skip a test that could have run.
    lock_wait = ["-o", f"DPkg::Lock::Timeout={LOCK_WAIT_S}"]
    install = ["apt-get", *lock_wait, "install", "-y", "-qq", package]
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
        return f"apt-get install {package} failed: {done.stderr.strip()[-300:]}"
    return None


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
