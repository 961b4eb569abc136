"""Races played with the real `solitaire` program in real terminals (tmux) against a
real server: the lobby, a win, the standings, completion, an illegal move, the server
dying and coming back mid-game, a host leaving the lobby, and a finished race looked up
by someone who was not in it. (Coming back to a race under way: test_race_panel.py.)"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

from client_deals import QUATORZE_SEED, QUATORZE_WIN
from client_harness import Terminal
from support.server_proc import ServerFactory, ServerProcess

import engine

CODE = re.compile(r"Race code\s+([2-9A-HJ-NP-Z]{12})")


def open_lobby(
    terminals: Callable[..., Terminal], server: ServerProcess, *alice_args: str
) -> tuple[Terminal, Terminal, str]:
    """alice creates a Quatorze race on deal 1, bob joins it."""
    alice = terminals("alice", "--server", server.ws_url, "--name", "alice", *alice_args,
                      "race", "new", "quatorze", "--seed", str(QUATORZE_SEED))  # fmt: skip
    code = alice.wait_for(CODE.pattern).group(1)
    assert f"{server.http_url}/r/{code}" in alice.screen()
    # bob's terminal has no colours (NO_COLOR) and he asks for ASCII suits.
    bob = terminals("bob", "race", "join", code, "--server", server.ws_url, "--name", "bob",
                    "--ascii", env={"NO_COLOR": "1"})  # fmt: skip
    bob.wait_for(r"Waiting for the host to start")
    alice.wait_for(r"^  bob\s+│")
    return alice, bob, code


def open_race(
    terminals: Callable[..., Terminal], server: ServerProcess, *alice_args: str
) -> tuple[Terminal, Terminal, str]:
    """alice creates a Quatorze race on deal 1, bob joins, alice starts it."""
    alice, bob, code = open_lobby(terminals, server, *alice_args)
    alice.enter()  # the host starts with a key
    alice.wait_for(r"\[ J♦\]")  # deal 1's first cell
    bob.wait_for(r"\[ JD\]")
    for player in (alice, bob):
        player.wait_for(r"Moves\s+0")
    return alice, bob, code


COLOUR = re.compile(r"\x1b\[[0-9;]*(?:38|48);[25];")  # a foreground/background colour


def test_cards_are_coloured_unless_no_color_and_ascii_has_no_symbols(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, bob, _code = open_race(terminals, server)
    assert COLOUR.search(alice.screen(escapes=True))
    plain = bob.screen(escapes=True)
    assert not COLOUR.search(plain), plain
    assert not set("♣♦♥♠") & set(bob.screen())


def test_two_players_race_one_wins_and_both_see_the_standings(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, bob, code = open_race(terminals, server)
    for move in QUATORZE_WIN[:5]:
        alice.enter(move)
    alice.wait_for(r"Moves\s+5")
    # bob's live panel follows alice's progress: 5 pairs, 10 points.
    bob.wait_for(r"alice\s+10\s+5")
    for move in QUATORZE_WIN[5:]:
        alice.enter(move)
    alice.wait_for(r"You won!")
    alice.wait_for(r"Score\s+52 / 52")
    bob.wait_for(r"Walice\s+52\s+26")  # W: won, in ASCII
    bob.enter("resign")
    bob.wait_for(r"Resign\?")  # the screen asks first
    bob.enter("y")
    for player in (alice, bob):
        screen = player.wait_for(rf"Race {code} is over").string
        assert f"Seed {QUATORZE_SEED}" in screen
        assert re.search(r"^ 1  alice\s+won\s+52\s+26", screen, re.M), screen
        assert re.search(r"^ 2  bob\s+resigned\s+0\s+0", screen, re.M), screen
    # Enter leaves; the standings stay on the terminal.
    alice.enter()
    after = alice.wait_for(r"\[exited 0\]").string
    assert f"Race {code} is over" in after and "Seed 1" in after


def test_tab_completion_short_forms_and_an_illegal_move(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, _bob, _code = open_race(terminals, server)
    # c2 (9♥) pairs with c4 (5♦) and c7 (5♥): Tab offers both.
    alice.type("c2-")
    alice.keys("Tab")
    menu = alice.wait_for(r"c2-c4").string
    assert "c2-c7" in menu
    alice.keys("Escape", "C-u")
    # c0 (J♦) has one partner, c15 (3♥): Tab completes the whole move.
    alice.type("c0")
    alice.keys("Tab")
    alice.wait_for(r"move> c0-c15\s*$")
    alice.keys("C-u")
    # J♦ and 2♦ do not add up to 14: the server refuses, with its reason; nothing changes.
    alice.enter("c0-c1")
    alice.wait_for(r"Illegal move c0-c1: \S.*")
    alice.wait_for(r"Moves\s+0")
    assert "[ J♦]" in alice.screen()
    # A cell alone plays its only pair.
    alice.enter("c0")
    alice.wait_for(r"Moves\s+1")
    alice.wait_for(r"Score\s+2 / 52")
    # A cell with several pairs plays nothing and lists them.
    alice.enter("c2")
    alice.wait_for(r"c2: several moves")
    alice.wait_for(r"Moves\s+1")


def an_illegal_pair(played: list[str]) -> tuple[str, str]:
    """A well-formed Quatorze move that is illegal after `played`, and the engine's reason."""
    game = engine.new_game("quatorze", QUATORZE_SEED)
    for move in played:
        game.play(move)
    legal = set(game.legal_moves())
    for a in range(25):
        for b in range(a + 1, 25):
            move = f"c{a}-c{b}"
            if move in legal:
                continue
            try:
                game.copy().play(move)
            except engine.IllegalMove as exc:
                return move, str(exc)
    raise AssertionError("no illegal pair")


def test_the_server_dies_mid_game_and_the_client_carries_on(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    log = tmp_path / "alice.log"
    alice, bob, code = open_race(terminals, server, "--log-file", str(log))
    for move in QUATORZE_WIN[:3]:
        alice.enter(move)
    alice.wait_for(r"Moves\s+3")
    # The server freezes: alice's next move goes out and is never answered; then it dies.
    assert server.proc is not None
    os.kill(server.proc.pid, signal.SIGSTOP)
    alice.enter(QUATORZE_WIN[3])
    time.sleep(0.5)  # it leaves the client at once; the frozen server never answers
    server.kill()
    alice.wait_for(r"Connection lost")
    alice.wait_for(r"retrying in \d+\.\d s")
    assert re.search(r"Moves\s+3", alice.screen())
    # A move typed while the server is away waits behind the unanswered one, and says so;
    # so does an illegal one typed after it, which the server then refuses with its reason.
    alice.enter(QUATORZE_WIN[4])
    alice.wait_for(rf"{QUATORZE_WIN[4]}: pending, sent once the connection is back")
    illegal, reason = an_illegal_pair(QUATORZE_WIN[:5])
    alice.enter(illegal)
    alice.wait_for(rf"{illegal}: pending")
    server.start()
    alice.wait_for(r"Reconnected to the server", timeout=30)
    bob.wait_for(r"Reconnected to the server", timeout=30)
    # The unanswered move was resent with the same n and applied once, then the next.
    alice.wait_for(r"Moves\s+5")
    alice.wait_for(r"Score\s+10 / 52")
    # The engine's reason, its cards as the screen writes them (A♣ for AC).
    said = r"\S+".join(re.escape(part) for part in re.split(r"\b[2-9TJQKA][CDHS]\b", reason))
    alice.wait_for(re.escape(f"Illegal move {illegal}: ") + said)
    resent = [line for line in log.read_text().splitlines() if "resending" in line]
    assert len(resent) == 1 and "'n': 3, 'm': 'c3-c23'" in resent[0], resent
    # The good news gives way once alice types: the help has both notice lines to itself.
    alice.enter("help")
    screen = alice.wait_for(r"Commands: resign, quit\.$").string
    assert "Reconnected" not in screen and "Moves: c3-c8 removes the pair" in screen
    for move in QUATORZE_WIN[5:]:
        alice.enter(move)
    alice.wait_for(r"You won!")
    # bob leaves and comes back with the race code: his game is where he left it.
    bob.enter("quit")
    bob.wait_for(rf"solitaire race join {code}")
    bob = terminals("bob", "race", "join", code, "--server", server.ws_url)
    bob.wait_for(r"Welcome back")
    bob.wait_for(r"✓alice\s+52\s+26|Moves\s+0")
    bob.enter("resign")
    bob.wait_for(r"Resign\?")
    bob.enter("y")
    for player in (alice, bob):
        screen = player.wait_for(rf"Race {code} is over").string
        assert re.search(r"^ 1  alice\s+won\s+52\s+26", screen, re.M), screen


def test_when_the_host_leaves_the_lobby_the_next_player_is_told_and_may_start(
    terminals: Callable[..., Terminal], servers: ServerFactory
) -> None:
    server = servers.start(env={"SOLITAIRE_LOBBY_LEAVE_GRACE_S": "0.5"})
    alice, bob, _code = open_lobby(terminals, server)
    alice.keys("C-c")  # the host leaves before starting
    alice.wait_for(r"\[exited 0\]")
    screen = bob.wait_for(r"alice left the lobby\. You are the host now").string
    assert "Press Enter to start the race." in screen
    assert "bob (host) (you)" in screen and "alice" not in screen.split("Players")[1], screen
    bob.enter()
    bob.wait_for(r"\[ JD\]")
    bob.wait_for(r"Moves\s+0")


def test_joining_a_finished_race_shows_its_standings(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, bob, code = open_race(terminals, server)
    alice.enter(QUATORZE_WIN[0])
    alice.wait_for(r"Moves\s+1")
    for player in (alice, bob):
        player.enter("resign")
        player.wait_for(r"Resign\? Your game in this race ends")
        player.enter("y")
    for player in (alice, bob):
        player.wait_for(rf"Race {code} is over")
    # carol was never in it: she sees its standings and seed, as its players did.
    carol = terminals("carol", "race", "join", code, "--server", server.ws_url,
                      "--name", "carol")  # fmt: skip
    screen = carol.wait_for(rf"Race {code} is over").string
    assert f"Seed {QUATORZE_SEED}" in screen
    assert re.search(r"^ 1  alice\s+resigned\s+2\s+1", screen, re.M), screen
    assert re.search(r"^ 2  bob\s+resigned\s+0\s+0", screen, re.M), screen
    carol.enter()
    after = carol.wait_for(r"\[exited 0\]").string
    assert f"Race {code} is over" in after
