"""Helpers for driving the real `solitaire` program in a real terminal (tmux) against
a real server process.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SOLITAIRE = str(Path(sys.executable).with_name("solitaire"))
WAIT_S = 30.0


class Terminal:
    """One program in an 80x24 tmux pane: type into it, read the screen."""

    def __init__(self, socket: Path, name: str, argv: list[str], env: dict[str, str]) -> None:
        self.socket = socket
        self.name = name
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # Keep the pane after the program ends, so its last words can be read.
        command = f"env {exports} {shlex.join(argv)}; echo '[exited '$?']'; sleep 600"
        self._tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "24", command)

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-S", str(self.socket), *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return out.stdout

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.name, "-l", text)

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def enter(self, text: str = "") -> None:
        if text:
            self.type(text)
        self.keys("Enter")

    def screen(self, escapes: bool = False) -> str:
        """The visible screen as text; with `escapes`, with its colour escape sequences."""
        return self._tmux("capture-pane", "-p", *(["-e"] if escapes else []), "-t", self.name)

    def wait_for(self, pattern: str, timeout: float = WAIT_S) -> re.Match[str]:
        """Wait until the screen matches the regular expression; fail with the screen shown."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern, re.MULTILINE)
        while True:
            screen = self.screen()
            match = regex.search(screen)
            if match:
                return match
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} on the screen:\n{screen}")
            time.sleep(0.1)

    def wait_until(self, check: Callable[[str], bool], what: str, timeout: float = WAIT_S) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if check(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"waited for {what}; the screen:\n{screen}")
            time.sleep(0.1)


class Bot:
    """`solitaire --plain ...` on pipes: write lines to it, read its JSON lines."""

    def __init__(
        self,
        config_home: Path,
        *args: str,
        env: dict[str, str] | None = None,
        prefix: list[str] | None = None,
    ) -> None:
        """`env`: more environment variables; `prefix`: a command line that runs the client
        (another network namespace: tests/support/netns.py)."""
        config_home.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "XDG_CONFIG_HOME": str(config_home), **(env or {})}
        self.proc = subprocess.Popen(
            [*(prefix or []), SOLITAIRE, "--plain", *args],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def next(self, kind: str | None = None, timeout: float = WAIT_S) -> dict[str, Any]:
        """The next JSON object (of type `kind`, skipping others)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                seen = self.seen
                raise AssertionError(f"no {kind or 'line'} in {timeout} s; saw {seen}") from None
            if line is None:
                stderr = self.proc.stderr.read() if self.proc.stderr else ""
                raise AssertionError(f"the bot exited before a {kind}; stderr: {stderr}")
            message = json.loads(line)
            self.seen.append(message)
            if kind is None or message.get("t") == kind:
                return message

    def wait(self, timeout: float = WAIT_S) -> int:
        return self.proc.wait(timeout=timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


RACE_CODE = re.compile(r"Race code\s+([2-9A-HJ-NP-Z]{6,16})")


def race_of_two(
    terminals: Callable[..., Terminal],
    server: Any,  # a support.server_proc.ServerProcess
    game: str,
    seed: int,
    *create: str,
) -> tuple[Terminal, Terminal, str]:
    """alice creates a race of `game` on deal `seed`, bob joins, alice starts it."""
    alice = terminals("alice", "--server", server.ws_url, "--name", "alice",
                      "race", "new", game, "--seed", str(seed), *create)  # fmt: skip
    code = alice.wait_for(RACE_CODE.pattern).group(1)
    bob = terminals("bob", "--server", server.ws_url, "--name", "bob", "race", "join", code)
    bob.wait_for(r"Waiting for the host to start")
    alice.wait_for(r"^  bob\s+│")
    alice.enter()
    for player in (alice, bob):
        player.wait_for(r"Moves\s+0")
    return alice, bob, code


def panel_row(name: str, score: str, moves: str) -> str:
    """A row of the side panel's players (the panel starts after the board's │)."""
    return rf"│.{{2}}{name}\s+{score}\s+{moves}\s*$"
