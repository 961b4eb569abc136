"""The daily's share text through the real client: after an attempt on the screen, from a
bot in --plain mode, and where one stands later; never a card, a move or the deal's seed."""

from __future__ import annotations

import datetime as dt
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import redis
from client_harness import SOLITAIRE, Bot, Terminal
from support.server_proc import ServerProcess

import engine
from client_cli.share import BARS

MOVE = re.compile(r"\bc\d+-c\d+\b")


def todays_deal(server: ServerProcess, game: str) -> int:
    """The seed of today's deal, as the server stored it (the test may know it; no client)."""
    r = redis.Redis.from_url(server.redis_url, decode_responses=True)
    try:
        today = dt.datetime.now(dt.UTC).date().isoformat()
        return int(r.hget(f"{{{server.namespace}:day:{game}:{today}}}:deal", "seed"))
    finally:
        r.close()


def test_a_bot_gets_the_share_text_after_its_attempt(server: ServerProcess, tmp_path: Path) -> None:
    bot = Bot(tmp_path / "bot", "--server", server.ws_url, "--name", "botty",
              "daily", "quatorze", "--confirm")  # fmt: skip
    try:
        state = bot.next("state")
        played = []
        while not state["finished"]:
            played.append(state["legal"][0])
            bot.send(played[-1])
            state = bot.next("state")
        board = bot.next("leaderboard")
        share = bot.next("share")["text"]
        bot.close_input()
        assert bot.wait() == 0
    finally:
        bot.kill()
    me = board["me"]
    won = "Won ✓" if me["won"] else "Not won"
    lines = share.splitlines()
    assert lines[:2] == [
        f"solitaire-race · Quatorze daily {state['date']}",
        f"{won} · {me['score']}/52 · {len(played)} move{'' if len(played) == 1 else 's'} · "
        f"{me['time_ms'] // 60000}:{me['time_ms'] // 1000 % 60:02} · #1 of 1",
    ]
    assert len(lines) == 3 and len(lines[2]) == 10 and set(lines[2]) <= set(BARS)
    assert "█" in lines[2]  # the tenth with the most pairs removed is the full bar
    assert str(todays_deal(server, "quatorze")) not in share and not MOVE.search(share)


def test_the_screen_leaves_the_share_text_and_so_does_where_one_stands(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    dana = terminals("dana", "--server", server.ws_url, "--name", "dana", "daily", "quatorze")
    dana.wait_for(r"Deal it now\? \[y/N\]")
    dana.enter("y")
    dana.wait_for(r"Moves\s+0")
    seed = todays_deal(server, "quatorze")
    game = engine.new_game("quatorze", seed)
    for n in (1, 2):  # two pairs removed, then resigned
        move = sorted(game.legal_moves())[0]
        game.play(move)
        dana.enter(move)
        dana.wait_for(rf"Moves\s+{n}\b")
    dana.enter("resign")
    dana.wait_for(r"Resign\?")
    dana.enter("y")
    dana.wait_for(r"Daily Quatorze, \d{4}-\d\d-\d\d: you are #1 of 1")
    dana.enter()
    out = dana.wait_for(r"\[exited 0\]").string
    date = re.search(r"Daily Quatorze, (\d{4}-\d\d-\d\d)", out)[1]
    share = out.split("Share your result (no spoilers):\n", 1)[1].split("\n[exited")[0]
    # Two moves: their tenths are the 3rd (move 1) and the 8th (move 2), a pair each.
    assert share.strip().splitlines() == [
        f"solitaire-race · Quatorze daily {date}",
        "Not won · 4/52 · 2 moves · " + share.split(" · ")[4] + " · #1 of 1",
        "▁▁█▁▁▁▁█▁▁",
    ]
    assert re.fullmatch(r"0:\d\d", share.split(" · ")[4])
    assert str(seed) not in share and not MOVE.search(share)

    # Later, without a terminal: where dana stands, and the same text without its picture
    # (the scores of its moves are not known there).
    env = {"XDG_CONFIG_HOME": str(tmp_path / "players" / "dana"), "PATH": "/usr/bin:/bin"}
    later = subprocess.run([SOLITAIRE, "--server", server.ws_url, "daily", "quatorze"],
                           env=env, capture_output=True, text=True, timeout=30,
                           stdin=subprocess.DEVNULL)  # fmt: skip
    assert later.returncode == 0, later.stderr
    text = later.stdout.split("Share your result (no spoilers):\n", 1)[1]
    assert text.splitlines()[0] == f"solitaire-race · Quatorze daily {date}"
    assert text.splitlines()[1].startswith("Not won · 4/52 · 2 moves · ")
    assert len(text.strip().splitlines()) == 2
    assert str(seed) not in later.stdout and not MOVE.search(later.stdout)
