"""The daily challenge through the real client: played to its end in a terminal, by a
bot in plain mode, then the leaderboard and stats commands."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

from client_harness import SOLITAIRE, Bot, Terminal
from support.server_proc import ServerProcess
from support.ws_client import Client

import engine


def saved_token(config_home: Path, server: ServerProcess) -> str:
    config = tomllib.loads((config_home / "solitaire-race" / "config.toml").read_text())
    return config["tokens"][server.ws_url]


def peek_daily(server: ServerProcess, token: str) -> dict:
    """The player's daily state, seen through a second connection of the same player."""

    async def peek() -> dict:
        async with Client.connect(server.ws_url) as client:
            await client.hello("carol", token=token)
            return await client.request({"t": "daily", "game": "quatorze", "confirm": True})

    return asyncio.run(peek())


def test_a_bot_and_a_person_play_the_daily_to_its_end_and_see_their_ranks(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    # A bot plays today's Quatorze first, always the first legal move, until the end.
    bot = Bot(tmp_path / "bot", "--server", server.ws_url, "--name", "botty",
              "daily", "quatorze", "--confirm")  # fmt: skip
    try:
        state = bot.next("state")
        assert state["kind"] == "daily" and state["date"]
        while not state["finished"]:
            bot.send(state["legal"][0])
            state = bot.next("state")
        board = bot.next("leaderboard")
        assert board["me"]["name"] == "botty" and board["me"]["rank"] == 1
        bot.close_input()
        assert bot.wait() == 0
    finally:
        bot.kill()
    bot_score = state["score"]

    # A person plays the same deal in a terminal; the test reads the legal moves
    # through its own connection and types them, one at a time.
    carol = terminals("carol", "--server", server.ws_url, "--name", "carol",
                      "daily", "quatorze")  # fmt: skip
    carol.wait_for(r"Deal it now\? \[y/N\]")
    carol.enter("y")
    carol.wait_for(r"daily \d{4}-\d\d-\d\d")
    carol.wait_for(r"Moves\s+0")
    token = saved_token(tmp_path / "players" / "carol", server)
    moves = 0
    while True:
        peeked = peek_daily(server, token)
        if peeked["t"] == "error":  # the attempt is over
            assert peeked["code"] == "already_played"
            break
        legal = engine.legal_moves_from_view(peeked["view"])
        carol.enter(sorted(legal)[-1])  # a different line from the bot's
        moves += 1
        carol.wait_for(rf"Moves\s+{moves}\b")
    screen = carol.wait_for(r"Daily Quatorze, \d{4}-\d\d-\d\d: you are #(\d) of 2").string
    assert "botty" in screen and "carol" in screen
    # Both were made today, so the board marks them new.
    assert re.search(rf"▶\s*\d\s+carol\s+(won)?\s+\d+\s+{moves}\s+[\d:]+ new\b", screen), screen
    assert re.search(rf"botty\s+(won)?\s+{bot_score}\s+\d+\s+[\d:]+ new\b", screen), screen
    assert "new: a player made on that day" in screen

    # Once played, the daily command shows where you stand instead.
    again = terminals("carol", "--server", server.ws_url, "daily", "quatorze")
    again.wait_for(r"played today's deal already")
    again.wait_for(r"you are #\d of 2")

    # The leaderboard and stats commands, plain text and JSON.
    env = {"XDG_CONFIG_HOME": str(tmp_path / "players" / "carol"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([SOLITAIRE, "--server", server.ws_url, "leaderboard", "quatorze"],
                         env=env, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert re.search(r"Daily Quatorze, .*: you are #\d of 2", out.stdout)
    assert "botty" in out.stdout and "carol" in out.stdout
    out = subprocess.run([SOLITAIRE, "--plain", "--server", server.ws_url, "leaderboard",
                          "quatorze", "--date", "all"],
                         env=env, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["t"] == "leaderboard"
    out = subprocess.run([SOLITAIRE, "--server", server.ws_url, "stats"],
                         env=env, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "statistics for carol" in out.stdout
    assert re.search(r"^Quatorze\s+1\s", out.stdout, re.M), out.stdout


def daily_status(server: ServerProcess, token: str, name: str) -> dict:
    """Where the player stands at today's Hopscotch, asked without dealing anything."""

    async def ask() -> dict:
        async with Client.connect(server.ws_url) as client:
            await client.hello(name, token=token)
            return await client.request({"t": "daily", "game": "hopscotch"})

    return asyncio.run(ask())


def test_the_screen_asks_before_dealing_the_ranked_attempt(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    dora = terminals("dora", "--server", server.ws_url, "--name", "dora", "daily", "hopscotch")
    dora.wait_for(r"Today's Hopscotch daily \(\d{4}-\d\d-\d\d, UTC\) is your one ranked")
    dora.wait_for(r"day ends in \d+ h \d\d min\.\nDeal it now\? \[y/N\]")
    dora.enter("n")
    dora.wait_for(r"Not dealt\.")
    dora.wait_for(r"\[exited 0\]")
    token = saved_token(tmp_path / "players" / "dora", server)
    assert daily_status(server, token, "dora")["status"] == "not_started"

    again = terminals("dora", "--server", server.ws_url, "daily", "hopscotch")
    again.wait_for(r"Deal it now\? \[y/N\]")
    again.enter("y")
    again.wait_for(r"Moves\s+0")
    status = daily_status(server, token, "dora")
    assert status["status"] == "in_progress"
    again.enter("quit")
    again.wait_for(r"\[exited 0\]")

    # An attempt under way is resumed without a question.
    back = terminals("dora", "--server", server.ws_url, "daily", "hopscotch")
    back.wait_for(r"Moves\s+0")
    assert "Deal it now" not in back.screen()


def test_plain_mode_deals_the_attempt_only_with_confirm(
    server: ServerProcess, tmp_path: Path
) -> None:
    home = tmp_path / "script"
    asked = Bot(home, "--server", server.ws_url, "--name", "scripted", "daily", "hopscotch")
    try:
        status = asked.next("daily")
        assert status["status"] == "not_started" and "view" not in status
        assert asked.wait() == 1
        assert "--confirm" in asked.proc.stderr.read()
    finally:
        asked.kill()
    token = saved_token(home, server)
    assert daily_status(server, token, "scripted")["status"] == "not_started"

    played = Bot(home, "--server", server.ws_url, "daily", "hopscotch", "--confirm")
    try:
        state = played.next("state")
        assert state["kind"] == "daily" and state["n"] == 0
        played.send("quit")
        assert played.wait() == 0
    finally:
        played.kill()
    assert daily_status(server, token, "scripted")["gid"] == state["gid"]
