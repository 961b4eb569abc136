"""The end of a race as its players see it: a game with no move left says "stuck" in the
standings (terminal and web page), a finished race joined again shows every seat's real
figures, and a rematch asked for meanwhile is on the screen. The real client in tmux."""

from __future__ import annotations

import urllib.request
from collections.abc import Callable

from client_harness import Terminal, panel_row, race_of_two
from support.server_proc import ServerProcess

import engine

# Quatorze deal 162: two pairs (the first legal move each time), then no pair is left.
STUCK_SEED = 162


def stuck_line() -> tuple[list[str], int]:
    game = engine.new_game("quatorze", STUCK_SEED)
    line = []
    while game.legal_moves():
        move = sorted(game.legal_moves())[0]
        game.play(move)
        line.append(move)
    assert not game.won and len(line) == 2
    return line, game.score


def test_stuck_standings_real_figures_and_an_existing_rematch(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    line, score = stuck_line()
    alice, bob, code = race_of_two(terminals, server, "quatorze", STUCK_SEED)
    for move in line:
        alice.enter(move)
    bob.enter("resign")
    bob.wait_for(r"resign\? y/n")
    bob.enter("y")
    for player in (alice, bob):
        player.wait_for(rf"Race {code} is over")
    # alice's game ended with no move left: "stuck", not an empty status.
    assert alice.wait_for(r"^ 1  alice\s+stuck\s+\d+\s+2 ")
    assert bob.wait_for(r"^ 2  bob\s+resigned ")
    with urllib.request.urlopen(f"{server.http_url}/race/{code}", timeout=10) as page:
        html = page.read().decode()
    assert "<td>stuck</td>" in html and "<td>resigned</td>" in html

    # bob leaves; alice asks for a rematch; bob comes back to the finished race.
    bob.enter("")
    bob.wait_for(r"\[exited 0\]")
    alice.keys("r")
    rematch = alice.wait_for(r"Rematch: race ([2-9A-HJ-NP-Z]{12})").group(1)
    back = terminals("bob", "--server", server.ws_url, "race", "join", code)
    back.wait_for(rf"Race {code} is over")
    back.wait_for(r"alice asks for a rematch:")
    back.wait_for(rf"press r to join race {rematch}")
    # The side panel has every seat's final score and moves, not "?" and 0.
    back.wait_for(panel_row("alice", str(score), "2"))
    start = engine.new_game("quatorze", STUCK_SEED).score
    back.wait_for(panel_row("bob", str(start), "0"))
    # Someone who never sat in it sees the same figures.
    carol = terminals("carol", "--server", server.ws_url, "--name", "carol",
                      "race", "join", code)  # fmt: skip
    carol.wait_for(rf"Race {code} is over")
    carol.wait_for(panel_row("alice", str(score), "2"))
    assert "?" not in "".join(row.split("│", 1)[-1] for row in carol.screen().splitlines())
