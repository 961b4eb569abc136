"""`solitaire replay` through the real client and server: a finished race played back on
the screen (steps, jumps, autoplay), in --plain mode and without a terminal; and nothing
shown of a race still running or a daily still in its day."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from client_deals import QUATORZE_SEED, QUATORZE_WIN
from client_harness import SOLITAIRE, Terminal
from support.server_proc import ServerProcess
from support.ws_client import Client

import engine
from client_cli.boards import render_text
from client_cli.replay_refs import parse_ref, web_base, web_page


async def race(server: ServerProcess, finish: bool) -> tuple[str, dict[str, list[str]], dict]:
    """alice and bob race on Quatorze deal 1: alice wins, bob plays two pairs and resigns
    (unless not `finish`: then bob is still playing, and alice is in today's Hopscotch
    daily). Returns the code, each player's moves, and their welcomes."""
    alice, bob = await Client.connect(server.ws_url), await Client.connect(server.ws_url)
    await alice.hello("alice")
    await bob.hello("bob")
    code = (await alice.request({"t": "create", "game": "quatorze", "seed": QUATORZE_SEED}))["race"]
    await bob.request({"t": "join", "race": code})
    await alice.request({"t": "start", "race": code})
    played = {alice.player: QUATORZE_WIN, bob.player: QUATORZE_WIN[:2]}
    for client in (alice, bob):
        gid = f"r.{code}.{client.player}"
        for n, move in enumerate(played[client.player]):
            reply = await client.request({"t": "move", "gid": gid, "n": n, "m": move})
            assert reply["t"] == "state", reply
    if finish:
        await bob.request({"t": "resign", "gid": f"r.{code}.{bob.player}"})
        await alice.next("result")
    else:
        daily = await alice.request({"t": "daily", "game": "hopscotch", "confirm": True})
        await alice.request({"t": "move", "gid": daily["gid"], "n": 0, "m": "deal"})
    welcomes = {"alice": alice.welcome, "bob": bob.welcome}
    await alice.close()
    await bob.close()
    return code, {"alice": played[alice.player], "bob": played[bob.player]}, welcomes


async def resign(server: ServerProcess, welcome: dict, gid: str) -> None:
    async with Client.connect(server.ws_url) as c:
        await c.hello(welcome["name"], token=welcome["token"])
        assert (await c.request({"t": "resign", "gid": gid}))["finished"]


def board_at(moves: list[str], n: int) -> str:
    return render_text(engine.replay("quatorze", QUATORZE_SEED, moves[:n]).view())


def on_screen(board: str, screen: str) -> bool:
    """The board's lines are the screen's, left of the side panel."""
    shown = [line.split("│")[0].rstrip() for line in screen.splitlines()[1:]]
    return all(line.rstrip() in shown for line in board.splitlines() if line.strip())


def run(
    server: ServerProcess, home: Path, *args: str, stdin: str = ""
) -> subprocess.CompletedProcess:
    env = {"XDG_CONFIG_HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run([SOLITAIRE, "--server", server.ws_url, *args], env=env, input=stdin,
                          capture_output=True, text=True, timeout=30)  # fmt: skip


def test_a_finished_race_plays_back_on_the_screen(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    code, moves, welcomes = asyncio.run(race(server, finish=True))
    win = moves["alice"]
    viewer = terminals("viewer", "--server", server.ws_url, "--name", "viewer",
                       "replay", f"{code}:1", "--speed", "32")  # fmt: skip
    screen = viewer.wait_for(r"Move\s+0 / 26").string
    assert f"alice in race {code}" in screen and "(the deal)" in screen
    assert re.search(r"Ended\s+won", screen) and "52/52, 26 moves" in screen
    assert "#1 of 2" in screen and on_screen(board_at(win, 0), screen)
    viewer.keys("Right")
    screen = viewer.wait_for(r"Move\s+1 / 26").string
    assert re.search(r"Last\s+c0-c15", screen) and on_screen(board_at(win, 1), screen)
    viewer.keys("Right", "Right", "Left")
    screen = viewer.wait_for(r"Move\s+2 / 26").string
    assert on_screen(board_at(win, 2), screen)
    viewer.keys("End")
    screen = viewer.wait_for(r"Move\s+26 / 26").string
    assert "The end of the game" in screen and on_screen(board_at(win, 26), screen)
    viewer.keys("Home")
    viewer.wait_for(r"Move\s+0 / 26")
    viewer.keys("Space")  # autoplay, at 32 moves a second: to the end by itself
    viewer.wait_for(r"playing, 32 moves/s")
    screen = viewer.wait_for(r"Move\s+26 / 26", timeout=20).string
    assert "paused" in screen and on_screen(board_at(win, 26), screen)
    viewer.keys("-")
    viewer.wait_for(r"paused \(16 moves/s\)")
    viewer.keys("q")
    out = viewer.wait_for(r"\[exited 0\]").string
    assert f"Replay of alice in race {code} (Quatorze): won, score 52/52, 26 moves" in out
    assert f"On the web: {server.http_url}/replay/r.{code}." in out

    # bob's seat (line 2), by its id, starting at the end.
    bob_gid = f"r.{code}.{welcomes['bob']['player']}"
    other = terminals("viewer", "--server", server.ws_url, "--name", "viewer", "replay", bob_gid,
                      "--at", "end")  # fmt: skip
    screen = other.wait_for(r"Move\s+2 / 2").string
    assert re.search(r"Ended\s+resigned", screen) and "#2 of 2" in screen


def test_plain_and_text_replays_and_nothing_before_the_end(
    server: ServerProcess, tmp_path: Path
) -> None:
    code, moves, welcomes = asyncio.run(race(server, finish=False))
    alice, bob = welcomes["alice"]["player"], welcomes["bob"]["player"]
    today = dt.datetime.now(dt.UTC).date().isoformat()
    home = tmp_path / "reader"
    # The race runs and the daily is in its day: nothing is shown, nothing said but why.
    for ref, why in ((f"{code}:1", f"race {code} is not over"),
                     (f"r.{code}.{bob}", f"race {code} is not over"),
                     (f"d.{today}.hopscotch.{alice}", "shown once its day is over")):  # fmt: skip
        for args in ((), ("--plain",)):
            out = run(server, home, *args, "replay", ref)
            assert out.returncode == 1 and out.stdout == "", (ref, out)
            assert why in out.stderr and "not_over" in out.stderr, (ref, out.stderr)
            assert "seed" not in out.stderr and "deal" not in out.stderr
            assert not any(m in out.stderr for m in moves["alice"])
    for bad in ("", "x:y", f"{code}:0"):
        out = run(server, home, "replay", bad)
        assert out.returncode == 2, (bad, out)
        assert "RACE:SEAT" in out.stderr or "name a game" in out.stderr, (bad, out)

    asyncio.run(resign(server, welcomes["bob"], f"r.{code}.{bob}"))
    # Without a terminal: the game, its moves and its last board (bob's, line 2).
    out = run(server, home, "replay", f"{code}:2")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith(f"Quatorze replay: bob in race {code}, deal {QUATORZE_SEED}\n")
    assert "Ended: resigned, score 4/52, 2 moves" in out.stdout and "#2 of 2" in out.stdout
    assert "Moves: 1. c0-c15  2. c0-c2" in out.stdout
    assert out.stdout.split("After move 2 of 2 (c0-c2):\n", 1)[1].startswith(
        board_at(moves["bob"], 2)
    )
    assert f"On the web: {server.http_url}/replay/r.{code}.{bob}" in out.stdout

    # --plain: the replay, then a position per line of stdin.
    out = run(server, home, "--plain", "replay", f"{code}:1",
              stdin="next\nend\nback\n3\nbogus\nstart\n")  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    replay = lines[0]
    assert replay["t"] == "replay" and replay["moves"] == moves["alice"]
    assert replay["seed"] == QUATORZE_SEED and replay["result"]["won"]
    positions = [m for m in lines[1:] if m["t"] == "position"]
    assert [m["n"] for m in positions] == [0, 1, 26, 25, 3, 0]
    for m in positions:
        view = engine.replay("quatorze", QUATORZE_SEED, moves["alice"][: m["n"]]).view()
        assert m["view"] == view and m["move"] == (moves["alice"][m["n"] - 1] if m["n"] else None)
    assert [m["input"] for m in lines if m["t"] == "notice"] == ["bogus"]


def test_replays_are_named_by_id_race_and_seat_or_web_address() -> None:
    assert parse_ref("r.7K3M2P.5f0c").gid == "r.7K3M2P.5f0c"
    by_seat = parse_ref(" 7k3m2p:2 ")
    assert (by_seat.race, by_seat.seat, by_seat.gid) == ("7k3m2p", 2, None)
    page = parse_ref("http://game.example:8765/replay/d.2026-11-29.quatorze.5f0c.json")
    assert page.gid == "d.2026-11-29.quatorze.5f0c"
    assert parse_ref("http://h/replay/7K3M2P:1?n=4").seat == 1
    for bad in ("7K3M2P:", "7K3M2P:0", "7K3M2P:x", ":2", " "):
        try:
            parse_ref(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was taken for a replay")
    assert web_base("ws://127.0.0.1:8765/ws") == "http://127.0.0.1:8765"
    assert web_base("wss://game.example/ws") == "https://game.example"
    assert web_page("ws://h:1/ws", "7K3M2P:1") == "http://h:1/replay/7K3M2P:1"


def test_ones_own_practice_game_is_replayed_by_the_id_its_summary_gives(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    me = terminals("me", "--server", server.ws_url, "--name", "me",
                   "practice", "hopscotch", "--seed", "4")  # fmt: skip
    me.wait_for(r"Moves\s+0")
    me.enter("deal")
    me.wait_for(r"Moves\s+1")
    me.enter("resign")
    me.wait_for(r"Resign this practice game\?")
    me.enter("y")
    me.wait_for(r"undo \(u\) or quit")
    me.enter("quit")
    out = me.wait_for(r"\[exited 0\]").string
    gid = re.search(r"Replay this game with: solitaire replay (p\.hopscotch\.\S+)", out)[1]
    mine = run(server, tmp_path / "players" / "me", "replay", gid)
    assert mine.returncode == 0, mine.stderr
    assert mine.stdout.startswith("Hopscotch replay: me's practice game, deal 4\n")
    assert "Ended: resigned, score" in mine.stdout and "Moves: 1. deal" in mine.stdout
    assert "On the web" not in mine.stdout  # nobody is known there: practice is private
    theirs = run(server, tmp_path / "someone", "--name", "someone", "replay", gid)
    assert theirs.returncode == 1 and "no such game (not_found)" in theirs.stderr
    assert theirs.stdout == ""
