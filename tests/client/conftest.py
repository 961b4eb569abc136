"""Fixtures for driving the real `solitaire` program in a real terminal (tmux).

Each test gets its own tmux server (a private socket under tmp_path), so tests
never see each other's sessions or anyone else's. Every client runs with its
own XDG_CONFIG_HOME, so each is a separate player with its own saved token.
The servers they talk to come from the `servers` and `server` fixtures in
tests/conftest.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from client_harness import SOLITAIRE, Terminal


@pytest.fixture
def terminals(tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    """Start `solitaire ARGS` in a fresh terminal as the player `home` (a config dir)."""
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket = tmp_path / f"tmux-{uuid.uuid4().hex[:8]}"
    started: list[Terminal] = []

    def start(home: str, *args: str, env: dict[str, str] | None = None) -> Terminal:
        config = tmp_path / "players" / home
        config.mkdir(parents=True, exist_ok=True)
        environment = {
            "XDG_CONFIG_HOME": str(config),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PATH": os.environ.get("PATH", ""),
            **(env or {}),
        }
        term = Terminal(socket, f"{home}-{len(started)}", [SOLITAIRE, *args], environment)
        started.append(term)
        return term

    yield start
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)
