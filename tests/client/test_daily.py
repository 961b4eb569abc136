"""The daily challenge through the real client: played to its end in a terminal, by a
bot in plain mode, then the leaderboard and stats commands."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

from client_harness import SOLITAIRE, Bot, Terminal
from support.server_proc import ServerFactory, ServerProcess
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


def test_resigning_a_daily_on_the_screen_is_asked_first(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    dana = terminals("dana", "--server", server.ws_url, "--name", "dana", "daily", "quatorze")
    dana.wait_for(r"Deal it now\? \[y/N\]")
    dana.enter("y")
    dana.wait_for(r"Moves\s+0")
    # One ranked attempt a day: resign asks first, and anything but y calls it off.
    dana.enter("resign")
    screen = dana.wait_for(r"Resign\? This ends your one ranked attempt at today's").string
    assert re.search(r"^resign\? y/n>", screen, re.M), screen
    dana.enter("no")
    dana.wait_for(r"Not resigned: play on\.")
    screen = dana.wait_for(r"^move>").string  # the attempt is still being played
    assert re.search(r"Moves\s+0", screen) and "you are #" not in screen
    dana.enter("resign")
    dana.wait_for(r"Resign\?")
    dana.enter("y")
    dana.wait_for(r"Daily Quatorze, \d{4}-\d\d-\d\d: you are #1 of 1")


def test_without_a_terminal_daily_shows_where_a_player_stands(
    server: ServerProcess, tmp_path: Path
) -> None:
    # A bot's resign (--plain) is immediate: it ends the attempt with no question asked.
    bot = Bot(tmp_path / "players" / "dana", "--server", server.ws_url, "--name", "dana",
              "daily", "quatorze", "--confirm")  # fmt: skip
    try:
        assert not bot.next("state")["finished"]
        bot.send("resign")
        assert bot.next("state")["finished"]
        assert bot.next("leaderboard")["me"]["rank"] == 1
        bot.close_input()
        assert bot.wait() == 0
    finally:
        bot.kill()
    # Without a terminal (a pipe, no --plain) the command shows where dana stands.
    env = {"XDG_CONFIG_HOME": str(tmp_path / "players" / "dana"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([SOLITAIRE, "--server", server.ws_url, "daily", "quatorze"],
                         env=env, capture_output=True, text=True, timeout=30,
                         stdin=subprocess.DEVNULL)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("You have played today's deal already; here is where you")
    assert re.search(r"you are #1 of 1", out.stdout) and "dana" in out.stdout

    # Someone who has not played is told that playing needs a terminal, and no attempt
    # (no clock) is started for them.
    fresh = tmp_path / "players" / "eve"
    env = {"XDG_CONFIG_HOME": str(fresh), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([SOLITAIRE, "--server", server.ws_url, "--name", "eve", "daily",
                          "quatorze"], env=env, capture_output=True, text=True, timeout=30,
                         stdin=subprocess.DEVNULL)  # fmt: skip
    assert out.returncode == 1
    assert "not played yet" in out.stderr and "needs a terminal" in out.stderr
    assert "--plain" in out.stderr

    async def eves_games() -> list[dict]:
        async with Client.connect(server.ws_url) as client:
            welcome = await client.hello("eve", token=saved_token(fresh, server))
            return welcome["active"]

    assert asyncio.run(eves_games()) == []


def test_a_past_days_leaderboard_shows_its_par_and_winning_line(
    servers: ServerFactory, tmp_path: Path
) -> None:
    # A server whose clock is a day behind plays "today" as the real yesterday.
    yesterday = (dt.datetime.now(dt.UTC).date() - dt.timedelta(days=1)).isoformat()
    behind = servers.start(env={"SOLITAIRE_CLOCK_OFFSET_S": str(-86400)})
    bot = Bot(tmp_path / "bot", "--server", behind.ws_url, "--name", "botty",
              "daily", "quatorze", "--confirm")  # fmt: skip
    try:
        state = bot.next("state")
        assert state["date"] == yesterday
        while not state["finished"]:
            bot.send(state["legal"][0])
            state = bot.next("state")
        bot.next("leaderboard")
        bot.close_input()
        assert bot.wait() == 0
    finally:
        bot.kill()
    # For a server on today's clock that day is over: its seed, par and line are public.
    today = servers.start()
    env = {"XDG_CONFIG_HOME": str(tmp_path / "reader"), "PATH": "/usr/bin:/bin"}
    json_out = subprocess.run([SOLITAIRE, "--plain", "--server", today.ws_url, "leaderboard",
                               "quatorze", "--date", yesterday],
                              env=env, capture_output=True, text=True, timeout=30)  # fmt: skip
    board = json.loads(json_out.stdout)
    assert board["par"] == len(board["line"]) and board["seed"]
    assert engine.replay("quatorze", board["seed"], board["line"]).won
    out = subprocess.run([SOLITAIRE, "--server", today.ws_url, "leaderboard", "quatorze",
                          "--date", yesterday],
                         env=env, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert f"Seed {board['seed']} (the day is over)" in out.stdout
    assert f"Par {board['par']}: a winning line found by the solver:" in out.stdout
    printed = out.stdout.split("found by the solver:\n", 1)[1].split()
    assert printed == board["line"]
    assert all(len(line) <= 78 for line in out.stdout.splitlines())


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
