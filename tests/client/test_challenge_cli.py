"""Asynchronous races with the real `solitaire` program in real terminals (tmux): a
challenge created and played, then joined and played by a friend who races the first run
as a ghost, and `solitaire challenges` listing it."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from client_deals import QUATORZE_SEED, QUATORZE_WIN
from client_harness import SOLITAIRE, Terminal
from support.server_proc import ServerProcess

CODE = re.compile(r"Challenge code: ([2-9A-HJ-NP-Z]{12})")


def challenges(home: Path, server: ServerProcess) -> str:
    env = {**os.environ, "XDG_CONFIG_HOME": str(home)}
    out = subprocess.run(
        [SOLITAIRE, "challenges", "--server", server.ws_url],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    return out.stdout


def test_a_challenge_played_then_raced_as_a_ghost(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    alice = terminals("alice", "--server", server.ws_url, "--name", "alice", "challenge",
                      "quatorze", "--seed", str(QUATORZE_SEED), "--players", "2")  # fmt: skip
    alice.wait_for(r"Moves\s+0")
    code = re.search(r"race ([2-9A-HJ-NP-Z]{12})", alice.screen())
    assert code is not None, alice.screen()
    code_text = code.group(1)
    for move in QUATORZE_WIN[:4]:
        alice.enter(move)
    alice.wait_for(r"Moves\s+4")
    alice.enter("resign")
    alice.wait_for(r"Resign\?")
    alice.enter("y")
    # Her run is over, the race is not: the screen says until when it stays open.
    alice.wait_for(r"The race is still open")
    alice.wait_for(r"until \d{4}-\d\d-\d\d \d\d:\d\d UTC")
    alice.enter("quit")
    alice.wait_for(CODE.pattern)  # printed again to share once the screen is gone
    assert f"solitaire race join {code_text}" in alice.screen()
    assert f"/r/{code_text}" in alice.screen()
    listed = challenges(tmp_path / "players" / "alice", server)
    assert code_text in listed and "open until" in listed and "alice" in listed

    bob = terminals("bob", "race", "join", code_text, "--server", server.ws_url,
                    "--name", "bob")  # fmt: skip
    bob.wait_for(r"Moves\s+0")
    # alice is bob's ghost: her figures as they were at his elapsed time, marked so.
    bob.wait_for(r"ghost \d+:\d\d")
    bob.wait_for(r"alice\s+\d+\s+4")
    bob.enter("resign")
    bob.wait_for(r"Resign\?")
    bob.enter("y")
    bob.wait_for(r"alice")
    bob.wait_for(r"(?i)standings|result|1\.")
    listed = challenges(tmp_path / "players" / "bob", server)
    assert code_text in listed and "closed" in listed
    assert "alice" in listed and "bob" in listed


def test_a_challenge_made_for_later_is_played_with_race_join(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    home = tmp_path / "players" / "carol"
    home.mkdir(parents=True)
    env = {**os.environ, "XDG_CONFIG_HOME": str(home)}
    made = subprocess.run(
        [SOLITAIRE, "challenge", "doublets", "--later", "--window", "2h", "--server",
         server.ws_url, "--name", "carol"],
        capture_output=True, text=True, env=env, timeout=60, check=True,
    )  # fmt: skip
    found = CODE.search(made.stdout)
    assert found is not None, made.stdout
    code = found.group(1)
    assert "open for 2 hours" in made.stdout
    assert f"solitaire race join {code}" in made.stdout
    listed = challenges(home, server)
    assert "you have not played it yet" in listed
    # carol, the creator, is dealt when she joins it, like anyone.
    carol = terminals("carol", "race", "join", code, "--server", server.ws_url)
    carol.wait_for(r"Moves\s+0")
    carol.wait_for(rf"race {code}")
