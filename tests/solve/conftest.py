"""Fixtures for the solver tests: Freecell Solver as the reference for Baker's Game."""

from __future__ import annotations

import pytest
from support.debian import debian_tool

FC_PACKAGE = "freecell-solver-bin"


@pytest.fixture(scope="session")
def fc_solve() -> str:
    """The path of fc-solve, installing it first if need be; skips with the reason if not."""
    return debian_tool("fc-solve", FC_PACKAGE)
