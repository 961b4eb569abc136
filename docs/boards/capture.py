"""Regenerate the board captures in this folder from real runs of `solitaire`.

    .venv/bin/python docs/boards/capture.py [WHAT ...]

Starts a server (embedded store in a temporary directory), and for each game a
two-player race on deal 1 in an 80x24 tmux pane; plays a few moves chosen with
the engine, then saves `tmux capture-pane` text as docs/boards/<game>.txt. Also
saves the lobby (lobby.txt) and, after winning Quatorze deal 1, the wait for the
other player (race-waiting.txt), once they resign, the standings
(race-result.txt), once bob presses r, his rematch offered on alice's standings
(rematch.txt), and that race played back by `solitaire replay` (replay.txt); then a
daily attempt's end with its share text (daily-share.txt), and a race watched by
`solitaire watch` (watch.txt, watch-result.txt), and a challenge: alice's finished run
(challenge-open.txt) and bob racing it as a ghost (challenge-ghost.txt). WHAT names the
captures to make (a game, daily-share, watch or challenge; quatorze makes the race,
rematch and replay ones); none: all of them.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from support.server_proc import ServerProcess  # noqa: E402
from support.ws_client import Client  # noqa: E402

# Quatorze deal 1 is won by these 26 removals (tests/client/client_deals.py checks it).
QUATORZE_WIN = [
    "c0-c15", "c0-c2", "c0-c1", "c3-c23", "c5-c6", "c5-c6", "c10-c11", "c10-c13", "c12-c14",
    "c12-c13", "c13-c14", "c11-c13", "c1-c11", "c1-c4", "c2-c4", "c0-c5", "c0-c2", "c0-c3",
    "c2-c3", "c1-c11", "c1-c2", "c0-c4", "c1-c3", "c0-c5", "c0-c2", "c0-c1",
]  # fmt: skip

BAKERS_OPENING = [
    "t5-r0", "t5-r1", "t1-r1", "t7-r2", "t7-r3", "t7-t1", "t0-t1", "t2-t7", "r3-t2", "t0-t2",
    "t0-r3",
]  # fmt: skip

BIN = Path(sys.executable).parent
OUT = Path(__file__).resolve().parent
LOGS = Path(os.environ.get("CAPTURE_LOGS", tempfile.gettempdir()))


def some_moves(game: str, count: int) -> list[str]:
    """A few plausible moves: foundation moves first, else something else, never a redeal."""
    if game == "quatorze":
        return QUATORZE_WIN[:count]
    if game == "bakers_game":  # found by a best-first search: 7 cards home in 11 moves
        return BAKERS_OPENING[:count]
    g = engine.new_game(game, 1)
    moves: list[str] = []
    while len(moves) < count and not g.over:
        legal = g.legal_moves()
        home = [m for m in legal if m.endswith(("-f", "-f0", "-f1", "-f2", "-f3"))]
        columns = [m for m in legal if m.count("t") == 2]
        move = (home or columns or legal)[0]
        if move == "deal" and g.view()["hidden"].get("s", 1) == 0:
            break
        g.play(move)
        moves.append(move)
    return moves


class Pane:
    def __init__(self, sock: Path, name: str, cmd: str) -> None:
        self.sock, self.name = sock, name
        self.tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "24", cmd + "; sleep 60")

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-S", str(self.sock), *args], capture_output=True,
                              text=True, check=True).stdout  # fmt: skip

    def enter(self, text: str = "") -> None:
        if text:
            self.tmux("send-keys", "-t", self.name, "-l", text)
        self.tmux("send-keys", "-t", self.name, "Enter")

    def key(self, key: str) -> None:
        self.tmux("send-keys", "-t", self.name, key)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def wait(self, text: str) -> str:
        for _ in range(600):
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.05)
        others = self.tmux("list-sessions")
        raise RuntimeError(f"{text!r} never appeared:\n{self.screen()}\n{others}")


def daily_share(server: ServerProcess, sock: Path, tmp: str) -> None:
    """carol plays a few pairs of today's Quatorze, resigns, leaves: the summary and its
    share text (moves chosen from the view through a second connection of hers)."""
    env = f"env XDG_CONFIG_HOME={tmp}/c LANG=C.UTF-8 TERM=xterm-256color"
    args = f"--server {server.ws_url} --name carol daily quatorze"
    carol = Pane(sock, "daily", f"{env} {BIN}/solitaire {args}")
    carol.wait("Deal it now? [y/N]")  # a daily is dealt only once confirmed
    carol.enter("y")
    carol.wait("Moves  0")
    config = tomllib.loads((Path(tmp) / "c" / "solitaire-race" / "config.toml").read_text())
    token = config["tokens"][server.ws_url]

    async def peek() -> dict:
        async with Client.connect(server.ws_url) as client:
            await client.hello("carol", token=token)
            # Confirmed: the attempt's state (already dealt, so resumed, not dealt again).
            return await client.request({"t": "daily", "game": "quatorze", "confirm": True})

    for n in range(1, 7):
        state = asyncio.run(peek())
        if state["t"] != "state":  # the attempt ended: no move left
            break
        carol.enter(sorted(engine.legal_moves_from_view(state["view"]))[0])
        carol.wait(f"Moves  {n}")
    if "you are #1" not in carol.screen():
        carol.enter("resign")
        carol.wait("Resign?")
        carol.enter("y")
    carol.wait("you are #1")
    carol.enter()
    screen = carol.wait("no spoilers")
    time.sleep(0.3)
    (OUT / "daily-share.txt").write_text(carol.screen().rstrip() + "\n")
    print(f"daily-share: {screen.count(chr(10))} lines")


def replay(server: ServerProcess, sock: Path, tmp: str, code: str) -> None:
    """The Quatorze race just finished, alice's seat played back to its 6th move."""
    env = f"env XDG_CONFIG_HOME={tmp}/v LANG=C.UTF-8 TERM=xterm-256color"
    viewer = Pane(sock, "replay", f"{env} {BIN}/solitaire --server {server.ws_url} "
                  f"--name viewer replay {code}:1")  # fmt: skip
    viewer.wait("Move   0 / 26")
    for n in range(1, 7):
        viewer.tmux("send-keys", "-t", viewer.name, "Right")
        screen = viewer.wait(f"Move   {n} / 26")
    (OUT / "replay.txt").write_text(screen.rstrip() + "\n")


def row(name: str, score: int, moves: int) -> str:
    """A player's row of the watch screen's side panel."""
    return f"{name:<12} {score:>5} {moves:>5}"


def watch(server: ServerProcess, sock: Path, tmp: str) -> None:
    """sam watches alice and bob race on Quatorze deal 1: after alice's sixth pair and bob's
    second (watch.txt), and the standings once alice has won and bob resigned
    (watch-result.txt)."""

    def player(name: str, home: str, args: str) -> Pane:
        env = f"env XDG_CONFIG_HOME={tmp}/{home} LANG=C.UTF-8 TERM=xterm-256color"
        line = f"--server {server.ws_url} --name {name} {args} --log-file {LOGS}/{name}-watch.log"
        return Pane(sock, f"w-{name}", f"{env} {BIN}/solitaire {line}")

    alice = player("alice", "a", "race new quatorze --seed 1")
    code = alice.wait("Share it:").split("/r/", 1)[1].split()[0]
    bob = player("bob", "b", f"race join {shlex.quote(code)}")
    alice.wait("bob")
    sam = player("sam", "s", f"watch {shlex.quote(code)}")
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
    print(f"watch: race {code}")


def challenge(server: ServerProcess, sock: Path, tmp: str) -> None:
    """An asynchronous race on Quatorze deal 1: alice plays her run (10 pairs, then
    resigns) and her screen says until when the race stays open (challenge-open.txt);
    bob joins later and races her run as a ghost, captured after his fourth pair
    (challenge-ghost.txt)."""

    def player(name: str, home: str, args: str) -> Pane:
        env = f"env XDG_CONFIG_HOME={tmp}/{home} LANG=C.UTF-8 TERM=xterm-256color"
        line = f"--server {server.ws_url} --name {name} {args} --log-file {LOGS}/{name}-ch.log"
        return Pane(sock, f"c-{name}", f"{env} {BIN}/solitaire {line}")

    alice = player("alice", "ca", "challenge quatorze --seed 1 --players 2")
    screen = alice.wait("Moves  0")
    code = screen.split("\n", 3)[2].split("race ", 1)[1].split()[0]
    for move in QUATORZE_WIN[:10]:
        alice.enter(move)
        time.sleep(0.4)
    alice.wait("Moves  10")
    alice.enter("resign")
    alice.wait("Resign?")
    alice.enter("y")
    (OUT / "challenge-open.txt").write_text(alice.wait("still open").rstrip() + "\n")
    alice.enter("quit")
    bob = player("bob", "cb", f"race join {shlex.quote(code)}")
    bob.wait("Moves  0")
    for move in QUATORZE_WIN[:4]:
        bob.enter(move)
        time.sleep(0.5)
    screen = bob.wait("Moves  4")
    (OUT / "challenge-ghost.txt").write_text(bob.wait("ghost").rstrip() + "\n")
    print(f"challenge: race {code}")


def quick(server: ServerProcess, sock: Path, tmp: str) -> None:
    """dana and eve queue for a quick Hopscotch race: dana's wait (its timer), then the
    rated race's standings once both have resigned, with dana's rating change."""
    panes = {}
    for name in ("dana", "eve"):
        env = f"env XDG_CONFIG_HOME={tmp}/{name} LANG=C.UTF-8 TERM=xterm-256color"
        args = f"--server {server.ws_url} --name {name} quick hopscotch"
        panes[name] = Pane(sock, f"q-{name}", f"{env} {BIN}/solitaire {args}")
        if name == "dana":
            waiting = panes[name].wait("waiting 0:03")
            (OUT / "quick-waiting.txt").write_text(waiting.rstrip() + "\n")
    for name in ("dana", "eve"):
        panes[name].wait("Moves  0")
        panes[name].enter("resign")
        panes[name].wait("Resign?")
        panes[name].enter("y")
    result = panes["dana"].wait("Your rating")
    (OUT / "quick-result.txt").write_text(result.rstrip() + "\n")


def main(what: list[str]) -> None:
    games = (("doublets", 12), ("quatorze", 6), ("bakers_game", 11), ("hopscotch", 24))
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(None, "boards", Path(tmp) / "server").start()
        sock = Path(tmp) / "tmux"
        try:
            if not what or "daily-share" in what:
                daily_share(server, sock, tmp)
            if not what or "watch" in what:
                watch(server, sock, tmp)
            if not what or "challenge" in what:
                challenge(server, sock, tmp)
            if not what or "quick" in what:
                quick(server, sock, tmp)
            for game, count in games:
                if what and game not in what:
                    continue
                env = f"env XDG_CONFIG_HOME={tmp}/a LANG=C.UTF-8 TERM=xterm-256color"
                args = f"--server {server.ws_url} --name alice race new {game} --seed 1"
                args += f" --log-file {LOGS}/alice-{game}.log"
                alice = Pane(sock, f"a-{game}", f"{env} {BIN}/solitaire {args}")
                code = alice.wait("Share it:").split("/r/", 1)[1].split()[0]
                env_b = f"env XDG_CONFIG_HOME={tmp}/b LANG=C.UTF-8 TERM=xterm-256color"
                join = f"--server {server.ws_url} --name bob race join {shlex.quote(code)}"
                join += f" --log-file {LOGS}/bob-{game}.log"
                bob = Pane(sock, f"b-{game}", f"{env_b} {BIN}/solitaire {join}")
                try:
                    lobby = alice.wait("bob")
                except RuntimeError:
                    print(bob.screen())
                    raise
                if game == "doublets":
                    (OUT / "lobby.txt").write_text(lobby.rstrip() + "\n")
                alice.enter()
                moves = some_moves(game, count)
                for move in moves:
                    alice.enter(move)
                screen = alice.wait(f"Moves  {len(moves)}")
                (OUT / f"{game}.txt").write_text(screen.rstrip() + "\n")
                print(f"{game}: {len(moves)} moves: {' '.join(moves)}")
                if game == "quatorze":
                    for move in QUATORZE_WIN[count:]:
                        alice.enter(move)
                    waiting = alice.wait("Waiting for 1 player")
                    (OUT / "race-waiting.txt").write_text(waiting.rstrip() + "\n")
                    bob.enter("resign")
                    bob.wait("Resign?")  # the screen asks first
                    bob.enter("y")
                    result = alice.wait(f"Race {code} is over")
                    (OUT / "race-result.txt").write_text(result.rstrip() + "\n")
                    bob.wait(f"Race {code} is over")
                    bob.key("r")  # one key: bob asks for a rematch
                    offered = alice.wait("bob asks for a rematch: press r")
                    (OUT / "rematch.txt").write_text(offered.rstrip() + "\n")
                    replay(server, sock, tmp, code)
        finally:
            subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True)
            server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
