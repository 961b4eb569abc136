"""Fixtures for the solver tests: Freecell Solver as the reference for Baker's Game."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

FC_PACKAGE = "freecell-solver-bin"


def _install_fc_solve() -> str | None:
    """Install Debian's freecell-solver-bin when running as root; the reason when not."""
    if shutil.which("fc-solve"):
        return None
    if shutil.which("apt-get") is None:
        return f"fc-solve is missing and there is no apt-get to install {FC_PACKAGE}"
    if os.geteuid() != 0:
        return f"fc-solve is missing; install it with: sudo apt-get install -y {FC_PACKAGE}"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", FC_PACKAGE]):
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
        if done.returncode != 0:
            return f"{' '.join(cmd)} failed: {done.stderr.strip()[-300:]}"
    return None if shutil.which("fc-solve") else f"{FC_PACKAGE} installed no fc-solve"


@pytest.fixture(scope="session")
def fc_solve() -> str:
    """The path of fc-solve, installing it first if need be; skips with the reason if not."""
    reason = _install_fc_solve()
    if reason:
        pytest.skip(reason)
    path = shutil.which("fc-solve")
    assert path
    return path
