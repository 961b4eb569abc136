"""The race's side panel and end states, with the real `solitaire` program in real
terminals (tmux) against real servers: the other players' starting scores, coming back
to a race under way, what a finished player waits for, and a time limit running out."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from client_deals import QUATORZE_SEED, QUATORZE_WIN
from client_harness import Terminal, panel_row, race_of_two
from support.server_proc import ServerFactory, ServerProcess

import engine


@pytest.mark.parametrize(("game", "seed"), [("doublets", 1), ("bakers_game", 2)])
def test_other_players_start_with_the_deals_score(
    terminals: Callable[..., Terminal], server: ServerProcess, game: str, seed: int
) -> None:
    # By hand: Doublets' foundation starts with its base card; Baker's Game deal 2 deals
    # A♠ on top of t0 (engine.game_class("bakers_game").dealt_piles(2)), which auto-play
    # sends home at the deal.
    start = engine.new_game(game, seed).score
    assert start == 1
    alice, bob, _code = race_of_two(terminals, server, game, seed)
    alice.wait_for(rf"Score\s+{start} / ")
    # Nobody has moved: every seat is where the deal left it, score 1, not 0.
    alice.wait_for(panel_row("bob", str(start), "0"))
    bob.wait_for(panel_row("alice", str(start), "0"))
    # Doublets has a deal, Baker's Game has none: the panel offers `d: deal` accordingly.
    assert ("d: deal" in alice.screen()) == (game == "doublets")


def rejoin_after_moves(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> tuple[Terminal, Terminal, str]:
    """A timed Quatorze race: alice plays 3 pairs, bob 1; bob leaves (Ctrl-C) and comes back."""
    alice, bob, code = race_of_two(terminals, server, "quatorze", QUATORZE_SEED,
                                   "--time-limit", "600")  # fmt: skip
    for move in QUATORZE_WIN[:3]:
        alice.enter(move)
    alice.wait_for(r"Moves\s+3")
    bob.enter(QUATORZE_WIN[0])
    bob.wait_for(r"Moves\s+1")
    # What bob sees having never left: both rows with their figures, and the time left.
    bob.wait_for(panel_row("alice", "6", "3"))
    bob.wait_for(panel_row("bob", "2", "1"))
    bob.wait_for(r"Left\s+\d+:\d\d")
    bob.keys("C-c")
    bob.wait_for(rf"solitaire race join {code}")
    bob = terminals("bob", "--server", server.ws_url, "race", "join", code)
    bob.wait_for(r"Welcome back")
    return alice, bob, code


def test_rejoining_a_race_names_every_player(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    _alice, bob, _code = rejoin_after_moves(terminals, server)
    # bob's own row has his name and figures (not "you"), and alice is listed at once,
    # before she moves again (her figures as far as this client knows them).
    bob.wait_for(panel_row("bob", "2", "1"))
    screen = bob.wait_for(panel_row("alice", r"\S+", r"\S+")).string
    assert not re.search(panel_row("you", r"\S+", r"\S+"), screen, re.M), screen


def test_rejoining_a_race_shows_what_a_player_who_never_left_sees(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, bob, _code = rejoin_after_moves(terminals, server)
    bob.wait_for(panel_row("bob", "2", "1"))
    # A move of bob's own: its reply comes after whatever the server sent on the rejoin,
    # so once it shows, so has everything the server sent with the lobby.
    bob.enter(QUATORZE_WIN[1])
    bob.wait_for(r"Moves\s+2")
    screen = bob.wait_until(
        lambda s: bool(re.search(panel_row("alice", "6", "3"), s, re.M)),
        "alice's row with her 3 pairs",
        timeout=5,
    )
    assert re.search(r"Left\s+\d+:\d\d", screen), screen
    # And he follows the race from then on.
    alice.enter(QUATORZE_WIN[3])
    bob.wait_for(panel_row("alice", "8", "4"))


def test_a_finished_player_is_told_what_they_wait_for(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, bob, code = race_of_two(terminals, server, "quatorze", QUATORZE_SEED)
    bob.enter("resign")
    bob.wait_for(r"Resign\? Your game in this race ends")
    bob.enter("y")
    bob.wait_for(r"You resigned\.")
    screen = bob.wait_for(r"Waiting for 1 player").string
    assert "to finish, then the" in screen
    assert re.search(r"The standings appear once every player has finished", screen), screen
    bob.wait_for(r"^waiting for the standings>")
    # A move now is not sent: the player is told again what comes next.
    bob.enter(QUATORZE_WIN[0])
    bob.wait_for(r"Your game is over\. The standings appear once")
    alice.enter("resign")
    alice.enter("y")
    for player in (alice, bob):
        player.wait_for(rf"Race {code} is over")


def test_a_time_limit_that_runs_out_says_times_up(
    terminals: Callable[..., Terminal], servers: ServerFactory
) -> None:
    first = servers.start()
    alice, bob, code = race_of_two(terminals, first, "quatorze", QUATORZE_SEED,
                                   "--time-limit", "30")  # fmt: skip
    alice.enter(QUATORZE_WIN[0])
    alice.wait_for(r"Moves\s+1")
    # A second server on the same store whose clock is an hour ahead: for it the race's
    # time limit has long passed, so it closes the race as it starts; the result reaches
    # alice and bob through their own server, neither having finished.
    servers.start(env={"SOLITAIRE_CLOCK_OFFSET_S": "3600"})
    for player in (alice, bob):
        screen = player.wait_for(rf"Race {code} is over").string
        assert "Time's up: the race ended before your game did." in screen
        # Each seat's time is the limit, and nothing is left of it.
        assert re.search(r"Time\s+0:30", screen), screen
        assert re.search(r"Left\s+0:00", screen), screen
        assert "Time's up!" in screen
