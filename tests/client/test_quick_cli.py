"""`solitaire quick` and `solitaire ratings` with the real program in real terminals (tmux)
against a real server: the waiting timer, Ctrl-C leaving the queue (the store's queue is
empty after), two players matched into one race that starts by itself and is played on
the usual screen, and the ratings it leaves, as a table and as JSON."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable

import redis
from client_harness import SOLITAIRE, Terminal
from support.server_proc import ServerFactory

from server.store.keys import Keys

QUICK = {"SOLITAIRE_QUICK_COUNTDOWN_S": "1", "SOLITAIRE_QUICK_ROUND_S": "0.1"}


def test_waiting_shows_a_timer_and_ctrl_c_leaves_the_queue(
    terminals: Callable[..., Terminal], servers: ServerFactory, redis_url: str,
    redis_namespace: str,
) -> None:  # fmt: skip
    server = servers.start(env=QUICK)
    alice = terminals("alice", "--server", server.ws_url, "--name", "alice", "quick", "hopscotch")
    alice.wait_for(r"Quick Hopscotch race for alice \(1500\): waiting 0:0\d, Ctrl-C leaves")
    alice.wait_for(r"0:0[2-9]")  # the timer moves
    r = redis.Redis.from_url(redis_url)
    entries = Keys(redis_namespace).queue_entries()
    assert r.hlen(entries) == 1
    alice.keys("C-c")
    alice.wait_for(r"Left the queue\.")
    alice.wait_for(r"\[exited 130\]")
    assert r.hlen(entries) == 0


def test_two_players_race_a_quick_race_and_see_their_ratings(
    terminals: Callable[..., Terminal], servers: ServerFactory, tmp_path
) -> None:
    server = servers.start(env={**QUICK, "SOLITAIRE_QUICK_COUNTDOWN_S": "4"})
    alice = terminals("alice", "--server", server.ws_url, "--name", "alice", "quick", "quatorze")
    alice.wait_for(r"Quick Quatorze race for alice")
    bob = terminals("bob", "--server", server.ws_url, "--name", "bob", "quick", "quatorze")
    # Matched: the lobby says it starts by itself (Enter does not start it, and nothing
    # invites others in), then the play screen with both seats once it has.
    alice.wait_for(r"A quick race, rated: it starts by itself")
    assert "Share it" not in alice.screen()
    alice.enter()
    alice.wait_for(r"A quick race starts by itself\.")
    for player in (alice, bob):
        player.wait_for(r"Moves\s+0", timeout=30)
    for player, other in ((alice, "bob"), (bob, "alice")):
        assert other in player.screen()
    for player in (alice, bob):
        player.enter("resign")
        player.wait_for(r"(?i)resign\?|sure|y/n")
        player.type("y")
        player.keys("Enter")
    alice.wait_for(r"1500 → \d{4}|1500 -> \d{4}", timeout=30)
    env = {"XDG_CONFIG_HOME": str(tmp_path / "players" / "alice"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([SOLITAIRE, "ratings", "quatorze"], capture_output=True, text=True,
                         env=env, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "Quatorze ratings: you are #" in out.stdout
    rows = [line for line in out.stdout.splitlines() if "alice" in line or "bob" in line]
    assert len(rows) == 2 and all("*" in row for row in rows)  # both provisional
    out = subprocess.run([SOLITAIRE, "--plain", "ratings", "quatorze"], capture_output=True,
                         text=True, env=env, timeout=30)  # fmt: skip
    board = json.loads(out.stdout)
    assert board["t"] == "ratings" and board["total"] == 2
    assert sorted(e["name"] for e in board["entries"]) == ["alice", "bob"]
    assert {e["games"] for e in board["entries"]} == {1}
    out = subprocess.run([SOLITAIRE, "stats", "quatorze"], capture_output=True, text=True,
                         env=env, timeout=30)  # fmt: skip
    assert "Quatorze rating:" in out.stdout and "(provisional) after 1 rated race" in out.stdout
