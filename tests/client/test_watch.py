"""`solitaire watch CODE`, the real program against a real server: the full screen in a
real terminal (tmux) and `--plain`, while two players race (in terminals and as bots)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from client_deals import QUATORZE_SEED, QUATORZE_WIN
from client_harness import Bot, Terminal, race_of_two
from support.fairness import SeatHistory, allowed, fair_view
from support.server_proc import ServerProcess

import engine
from client_cli.boards import render_text
from client_cli.theme import Theme

BOARD_ROWS = 19  # the watch screen's board, under the line that names the player


@pytest.fixture
def bots() -> Iterator[list[Bot]]:
    started: list[Bot] = []
    yield started
    for bot in started:
        bot.kill()


def board_area(screen: str, top: int, rows: int) -> list[str]:
    """The board's part of the screen: `rows` lines from `top`, left of the side panel."""
    return [line.split("│")[0].rstrip() for line in screen.splitlines()[top : top + rows]]


def test_the_watch_screen_follows_every_board_live_and_ends_with_the_standings(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, bob, code = race_of_two(terminals, server, "quatorze", QUATORZE_SEED)
    sam = terminals("sam", "--server", server.ws_url, "--name", "sam", "watch", code.lower())
    sam.wait_for(rf"watching race {code} · Quatorze")
    sam.wait_for(r"^alice\s+1/2")
    sam.wait_for(r"▶ alice\s+0\s+0")
    for move in QUATORZE_WIN[:5]:
        alice.enter(move)
    alice.wait_for(r"Moves\s+5")
    sam.wait_for(r"▶ alice\s+10\s+5")
    # alice's board on sam's screen is the board as the client draws alice's own view, less
    # the cards bob (at the deal, still playing) has not seen: they are drawn as gaps.
    game = engine.replay("quatorze", QUATORZE_SEED, QUATORZE_WIN[:5])
    histories = [SeatHistory.deal("quatorze", QUATORZE_SEED) for _ in range(2)]
    for move in QUATORZE_WIN[:5]:
        histories[0].play(move)
    fair = fair_view(game.view(), allowed(histories))
    assert fair != game.view(), "bob has seen less than alice: something is held back"
    want = render_text(fair).splitlines()
    seen = board_area(sam.wait_for(r"▶ alice\s+10\s+5").string, 2, BOARD_ROWS)
    assert seen[: len(want)] == [line.rstrip() for line in want], "\n".join(seen)
    # So no card of alice's face-down stock shows anywhere on the screen.
    hidden = {c for code_ in game.HIDDEN for c in game.piles[code_]}
    assert hidden
    labels = {f"[{Theme().card_text(c)}]" for c in hidden}
    assert not [label for label in labels if label in sam.screen()]
    # Tab shows bob's board: still at the deal.
    sam.keys("Tab")
    sam.wait_for(r"^bob\s+2/2")
    at_deal = render_text(engine.new_game("quatorze", QUATORZE_SEED).view()).splitlines()
    seen = board_area(sam.screen(), 2, BOARD_ROWS)
    assert seen[: len(at_deal)] == [line.rstrip() for line in at_deal]
    bob.enter(QUATORZE_WIN[0])
    sam.wait_for(r"▶ bob\s+2\s+1")
    sam.keys("1")
    sam.wait_for(r"^alice\s+1/2")
    for move in QUATORZE_WIN[5:]:
        alice.enter(move)
    sam.wait_for(r"✓alice\s+52\s+26")
    bob.enter("resign")
    bob.wait_for(r"Resign\?")
    bob.enter("y")
    sam.wait_for(r"The race is over")
    sam.keys("s")
    standings = sam.wait_for(rf"Race {code} is over").string
    assert re.search(r"1  alice\s+won\s+52\s+26", standings), standings
    assert "sam" not in standings.split("Players")[0]  # never seated
    sam.keys("q")
    sam.wait_for(rf"Race {code} is over: 1\. alice 52, 2\. bob 2\.")
    sam.wait_for(r"\[exited 0\]")


def test_plain_watch_prints_each_board_until_the_result(
    server: ServerProcess, bots: list[Bot], tmp_path: Path
) -> None:
    host = Bot(tmp_path / "host", "--server", server.ws_url, "--name", "hostbot",
               "race", "new", "quatorze", "--seed", str(QUATORZE_SEED))  # fmt: skip
    bots.append(host)
    code = host.next("created")["race"]
    sam = Bot(tmp_path / "sam", "--server", server.ws_url, "--name", "sam", "watch", code)
    bots.append(sam)
    sam.close_input()  # a spectator types nothing: the end of stdin is not a quit
    lobby = sam.next("lobby")
    assert [p["name"] for p in lobby["players"]] == ["hostbot"]
    host.send("start")
    host.next("state")
    assert sam.next("start")["race"] == code
    board = sam.next("seat")
    assert board["n"] == 0 and board["view"] == engine.new_game("quatorze", QUATORZE_SEED).view()
    for n, move in enumerate(QUATORZE_WIN[:3]):
        host.send(move)
        host.next("state")
        board = sam.next("seat")
        game = engine.replay("quatorze", QUATORZE_SEED, QUATORZE_WIN[: n + 1])
        assert board["n"] == n + 1 and board["view"] == game.view()
        assert "gid" not in board and "seed" not in board
    host.send("resign")
    result = sam.next("result")
    assert [s["name"] for s in result["standings"]] == ["hostbot"]
    assert sam.wait() == 0
    assert all("seed" not in m for m in sam.seen if m["t"] != "result")
    kinds = {m["t"] for m in sam.seen}
    assert kinds <= {"lobby", "start", "seat", "progress", "result"}, kinds


def test_watch_says_why_it_cannot(server: ServerProcess, bots: list[Bot], tmp_path: Path) -> None:
    host = Bot(tmp_path / "host", "--server", server.ws_url, "--name", "hostbot",
               "race", "new", "quatorze", "--no-spectators")  # fmt: skip
    bots.append(host)
    created = host.next("created")
    assert created["spectators"] is False
    sam = Bot(tmp_path / "sam", "--server", server.ws_url, "--name", "sam", "watch",
              created["race"])  # fmt: skip
    bots.append(sam)
    assert sam.wait() == 1
    assert sam.proc.stderr is not None
    err = sam.proc.stderr.read()
    assert f"cannot watch race {created['race']}: race {created['race']} does not take " in err
    assert "(no_spectators)" in err
    nobody = Bot(tmp_path / "sam", "--server", server.ws_url, "watch", "ZZZZZZZZZZZZ")
    bots.append(nobody)
    assert nobody.wait() == 1
    assert nobody.proc.stderr is not None
    assert "no race ZZZZZZZZZZZZ (not_found) (check the code" in nobody.proc.stderr.read()
    typo = Bot(tmp_path / "sam", "--server", server.ws_url, "watch", "no!")
    bots.append(typo)
    assert typo.wait() == 2
