"""Regenerate the watch screen's captures in this folder from real runs of `solitaire`.

    .venv/bin/python docs/boards/capture_watch.py

Starts a server (embedded store in a temporary directory); alice and bob race on
Quatorze deal 1 in 80x24 tmux panes, and sam watches with `solitaire watch CODE`. After
alice's sixth pair and bob's second, saves sam's screen as watch.txt; once alice has won
and bob resigned, the standings as watch-result.txt.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from capture import BIN, LOGS, OUT, QUATORZE_WIN, Pane, ServerProcess


def row(name: str, score: int, moves: int) -> str:
    """A player's row of the watch screen's side panel."""
    return f"{name:<12} {score:>5} {moves:>5}"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(None, "boards", Path(tmp) / "server").start()
        sock = Path(tmp) / "tmux"

        def player(name: str, *args: str) -> Pane:
            env = f"env XDG_CONFIG_HOME={tmp}/{name} LANG=C.UTF-8 TERM=xterm-256color"
            line = f"--server {server.ws_url} --name {name} {shlex.join(args)}"
            line += f" --log-file {LOGS}/{name}-watch.log"
            return Pane(sock, f"w-{name}", f"{env} {BIN}/solitaire {line}")

        try:
            alice = player("alice", "race", "new", "quatorze", "--seed", "1")
            code = alice.wait("Share it:").split("race join ", 1)[1].split()[0]
            bob = player("bob", "race", "join", code)
            alice.wait("bob")
            sam = player("sam", "watch", code)
            sam.wait("Waiting for the host")
            alice.enter()
            sam.wait(row("alice", 0, 0))
            for move in QUATORZE_WIN[:6]:
                alice.enter(move)
            for move in QUATORZE_WIN[:2]:
                bob.enter(move)
            sam.wait(row("bob", 4, 2))
            screen = sam.wait(row("alice", 12, 6))
            (OUT / "watch.txt").write_text(screen.rstrip() + "\n")
            for move in QUATORZE_WIN[6:]:
                alice.enter(move)
            sam.wait(row("alice", 52, 26))
            bob.enter("resign")
            bob.wait("Resign?")
            bob.enter("y")
            sam.wait("The race is over")
            sam.tmux("send-keys", "-t", sam.name, "s")
            result = sam.wait(f"Race {code} is over")
            (OUT / "watch-result.txt").write_text(result.rstrip() + "\n")
            print(f"race {code}: watch.txt, watch-result.txt")
        finally:
            subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)
            server.stop()


if __name__ == "__main__":
    main()
