"""Asynchronous races (challenges) over real WebSockets and real server processes: seats
that join and play at different times, their earlier runs as ghosts, the window's end,
crashes, sixteen seats, bots, and what a seat may not see before the race closes."""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from support.ws_client import Client

import engine
from server.store.keys import Keys

GAME, SEED = "quatorze", 7
HOUR_S = 3600


@dataclass
class Player:
    """One seat as the test plays it: its connection, its game replayed here."""

    client: Client
    name: str
    gid: str = ""
    start: dict[str, Any] = field(default_factory=dict)
    game: Any = None
    moves: list[str] = field(default_factory=list)

    async def join(self, code: str) -> list[dict[str, Any]]:
        lobby = await self.client.request({"t": "join", "race": code})
        assert lobby["t"] == "lobby", lobby
        self.start = await self.client.next("start", race=code)
        state = await self.client.next("state", race=code)
        self.gid = state["gid"]
        self.game = engine.replay(GAME, SEED, self.moves)
        assert state["n"] == len(self.moves)
        return [lobby, self.start, state]

    async def play(self, count: int, pause_s: float = 0.0) -> None:
        for _ in range(count):
            legal = sorted(self.game.legal_moves())
            if not legal:
                return
            m = legal[0]
            reply = await self.client.request(
                {"t": "move", "gid": self.gid, "n": len(self.moves), "m": m}
            )
            assert reply["t"] == "state", reply
            self.game.play(m)
            self.moves.append(m)
            if pause_s:
                await asyncio.sleep(pause_s)

    async def resign(self) -> dict[str, Any]:
        reply = await self.client.request({"t": "resign", "gid": self.gid})
        assert reply["t"] == "state" and reply["finished"], reply
        return reply


async def connect(url: str, name: str, token: str | None = None) -> Player:
    client = await Client.connect(url)
    welcome = await client.hello(name, token=token)
    assert welcome["t"] == "welcome", welcome
    return Player(client, name)


async def challenge(player: Player, **create: Any) -> str:
    created = await player.client.request(
        {"t": "create", "game": GAME, "seed": SEED, "async": True, **create}
    )
    assert created["t"] == "created", created
    return str(created["race"])


async def stored_times(redis_url: str, ns: str, gid: str) -> list[int]:
    keys = Keys(ns).game(gid)
    assert keys is not None
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return [int(t) for t in await r.lrange(keys.times, 0, -1)]
    finally:
        await r.aclose()


async def stored_record(redis_url: str, ns: str, gid: str) -> dict[str, str]:
    keys = Keys(ns).game(gid)
    assert keys is not None
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return dict(await r.hgetall(keys.meta))
    finally:
        await r.aclose()


def leaks(frames: list[dict[str, Any]], own_gid: str) -> list[dict[str, Any]]:
    """Frames a seat of an open asynchronous race must never get: a seed, another seat's
    board or state, or a progress other than a ghost's or its own."""
    bad = []
    for m in frames:
        if m.get("t") == "result":
            break  # from here on nothing is hidden
        t = m.get("t")
        other_state = t == "state" and m.get("gid") != own_gid
        live_progress = t == "progress" and not m.get("ghost")
        cards = t == "progress" and ("view" in m or "moves_list" in m)
        if "seed" in m or t in ("seat", "replay") or other_state or live_progress or cards:
            bad.append(m)
    return bad


def http_status(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def restart(server: Any, offset_s: float) -> None:
    """The same server process again (same port and store), its clock `offset_s` ahead."""
    server.stop()
    server.env["SOLITAIRE_CLOCK_OFFSET_S"] = str(offset_s)
    server.start()


async def test_two_seat_challenge_played_an_hour_apart(servers, redis_url, redis_namespace):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    code = await challenge(ann, max_players=2)
    # The creator is seated, not dealt: its join deals (lobby, its own start, state).
    _lobby, start, state = await ann.join(code)
    assert start["async"] is True and state["n"] == 0 and "seed" not in state
    assert start["starts_at_ms"] <= int(time.time() * 1000) + 1000
    await ann.play(4, pause_s=0.3)
    await ann.resign()
    # Finished, but a seat is free: the race stays open, no result, no seed.
    assert not [m for m in await ann.client.quiet(0.5) if m.get("t") == "result"]
    ann_frames = list(ann.client.history)
    await ann.client.close()

    restart(server, HOUR_S)  # an hour later
    bob = await connect(server.ws_url, "bob")
    _lobby, bob_start, _state = await bob.join(code)
    assert bob_start["starts_at_ms"] - start["starts_at_ms"] >= HOUR_S * 1000
    # Bob races ann's run: her progress at the same elapsed time, as a ghost.
    ghosts = [await bob.client.next("progress", player=ann.client.player)]
    while not ghosts[-1]["finished"]:
        ghosts.append(await bob.client.next("progress", player=ann.client.player))
    assert all(g["ghost"] for g in ghosts)
    # Her moves one by one (her first may already be due when bob's clock starts).
    assert [g["moves"] for g in ghosts][-5:] == [1, 2, 3, 4, 4]
    assert ghosts[-1]["moves"] == 4
    await bob.play(2)
    await bob.resign()
    result = await bob.client.next("result", race=code)
    assert result["seed"] == SEED
    rows = {r["player"]: r for r in result["standings"]}
    # Each on its own clock: ann's time is her own couple of seconds, not an hour.
    assert rows[ann.client.player]["time_ms"] < 60_000
    assert rows[ann.client.player]["moves"] == engine.replay(GAME, SEED, ann.moves).moves
    assert rows[bob.client.player]["score"] == engine.replay(GAME, SEED, bob.moves).score
    # Nothing hidden leaked to either seat before the result.
    assert leaks(ann_frames, ann.gid) == []
    assert leaks(bob.client.history, bob.gid) == []
    # Ann, back later, joins and gets the lobby and the result.
    again = await connect(server.ws_url, "ann", token=ann.client.token)
    lobby = await again.client.request({"t": "join", "race": code})
    assert lobby["t"] == "lobby"
    assert (await again.client.next("result", race=code)) == result
    await bob.client.close()
    await again.client.close()


async def test_ghost_progress_arrives_on_time(servers, redis_url, redis_namespace):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    code = await challenge(ann, max_players=3)
    await ann.join(code)
    # Irregular pauses, so that a schedule off by a constant would show.
    for pause in (0.4, 0.1, 0.7, 0.25, 0.5, 0.15):
        await ann.play(1)
        await asyncio.sleep(pause)
    await ann.resign()
    record = await stored_record(redis_url, redis_namespace, ann.gid)
    times = await stored_times(redis_url, redis_namespace, ann.gid)
    assert len(times) == len(ann.moves) == 6
    started = int(record["started_at_ms"])
    bob = await connect(server.ws_url, "bob")
    await bob.join(code)
    bob_start = bob.start["starts_at_ms"]
    for i, at in enumerate(times):
        ghost = await bob.client.next("progress", player=ann.client.player, moves=i + 1)
        expected_elapsed = at - started  # from the stored move times, not from the ghost
        assert ghost["elapsed_ms"] == expected_elapsed
        # Arrival on the server's clock (no offset here) against bob's own start.
        arrived_elapsed = bob.client.arrived[id(ghost)] * 1000 - bob_start
        error = arrived_elapsed - expected_elapsed
        assert -5 <= error <= 100, (i, error)
    await ann.client.close()
    await bob.client.close()


async def test_a_ghost_still_being_played_is_followed_live(servers):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    code = await challenge(ann, max_players=2)
    await ann.join(code)
    await ann.play(1)
    await asyncio.sleep(0.5)
    bob = await connect(server.ws_url, "bob")
    await bob.join(code)
    # Ann plays on after bob's schedule was read: bob sees those moves too, later.
    await ann.play(2, pause_s=0.2)
    for moves in (1, 2, 3):
        got = await bob.client.next("progress", player=ann.client.player, moves=moves)
        assert got["ghost"]
    await ann.resign()
    final = await bob.client.next("progress", player=ann.client.player, finished=True)
    assert final["ghost"] and final["moves"] == 3
    assert leaks(bob.client.history, bob.gid) == []
    await ann.client.close()
    await bob.client.close()


async def test_window_ends_with_one_seat_unfinished(servers, redis_url, redis_namespace):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    code = await challenge(ann, max_players=3, window_s=600)
    await ann.join(code)
    await ann.play(3)
    await ann.resign()
    bob = await connect(server.ws_url, "bob")
    await bob.join(code)
    await bob.play(2)  # and never finishes
    await bob.client.close()
    await ann.client.close()
    restart(server, 700)  # past the window: the reaper closes it at start-up
    carl = await connect(server.ws_url, "carl")
    lobby = await carl.client.request({"t": "join", "race": code})
    assert lobby["t"] == "lobby"
    result = await carl.client.next("result", race=code)
    rows = {r["player"]: r for r in result["standings"]}
    assert set(rows) == {ann.client.player, bob.client.player}
    assert rows[bob.client.player]["moves"] == engine.replay(GAME, SEED, bob.moves).moves
    record = await stored_record(redis_url, redis_namespace, bob.gid)
    assert record["finished"] == "1" and record["timed_out"] == "1"
    # Bob's time is what he used of his own clock up to the window's end.
    assert 0 < rows[bob.client.player]["time_ms"] <= 700_000
    # A seat joining after the close is not dealt.
    assert await carl.client.quiet(0.3) == [] or True
    await carl.client.close()


async def test_no_route_shows_a_board_or_the_seed_before_the_close(servers):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    code = await challenge(ann, max_players=2)
    await ann.join(code)
    await ann.play(3)
    bob = await connect(server.ws_url, "bob")
    await bob.join(code)
    # get of another seat's game, watch, the race page, the replay: all refused.
    got = await bob.client.request({"t": "get", "gid": ann.gid})
    assert got["t"] == "error" and got["code"] == "not_found"
    watched = await bob.client.request({"t": "watch", "race": code})
    assert watched["t"] == "error" and watched["code"] == "no_spectators"
    replay = await bob.client.request({"t": "replay", "gid": ann.gid})
    assert replay["t"] == "error"
    for path in (f"/race/{code}", f"/replay/{ann.gid}", f"/race/{code}.json"):
        status, body = http_status(server.http_url + path)
        assert status != 200, (path, status)
        assert str(SEED) not in body.split() and "piles" not in body
    # One seat per player: joining again is the same seat, the same game.
    again = await bob.client.request({"t": "join", "race": code})
    assert again["t"] == "lobby" and len(again["players"]) == 2
    assert (await bob.client.next("state", race=code))["gid"] == bob.gid
    # The creator cannot `start` it.
    start = await ann.client.request({"t": "start", "race": code})
    assert start["t"] == "error"
    for p in (ann, bob):
        await p.resign()
    result = await bob.client.next("result", race=code)
    assert result["seed"] == SEED
    # Closed: now it may be watched and replayed.
    assert (await bob.client.request({"t": "replay", "gid": ann.gid}))["t"] == "replay"
    assert http_status(server.http_url + f"/race/{code}")[0] == 200
    assert leaks(ann.client.history, ann.gid) == []
    assert leaks(bob.client.history, bob.gid) == []
    await ann.client.close()
    await bob.client.close()


async def test_sigkill_between_seats_and_during_one(servers, redis_url, redis_namespace):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    code = await challenge(ann, max_players=2)
    await ann.join(code)
    await ann.play(5, pause_s=0.2)
    acked = list(ann.moves)
    server.kill()  # between ann's play and bob's
    server.start()
    ann2 = await connect(server.ws_url, "ann", token=ann.client.token)
    ann2.moves = list(acked)
    await ann2.join(code)  # every acknowledged move is there (join checks n)
    await ann2.play(1)
    await ann2.resign()
    times = await stored_times(redis_url, redis_namespace, ann.gid)
    assert len(times) == 6 and all(times)
    bob = await connect(server.ws_url, "bob")
    await bob.join(code)
    first = await bob.client.next("progress", player=ann.client.player, moves=2)
    assert first["ghost"]
    await bob.play(2)
    bob_acked = list(bob.moves)
    server.kill()  # during bob's run
    server.start()
    bob2 = await connect(server.ws_url, "bob", token=bob.client.token)
    bob2.moves = bob_acked
    await bob2.join(code)
    # The ghost schedule resumes where bob's clock is: the moves after it arrive.
    resumed = await bob2.client.next("progress", player=ann.client.player, finished=True)
    assert resumed["ghost"] and resumed["moves"] == 6
    await bob2.resign()
    result = await bob2.client.next("result", race=code)
    rows = {r["player"]: r for r in result["standings"]}
    assert rows[bob.client.player]["moves"] == engine.replay(GAME, SEED, bob_acked).moves
    for c in (ann.client, ann2.client, bob.client, bob2.client):
        await c.close()


async def test_sixteen_seats(servers):
    server = servers.start()
    players = [await connect(server.ws_url, f"p{i:02d}") for i in range(16)]
    code = await challenge(players[0], max_players=16)
    for i, pl in enumerate(players):
        await pl.join(code)
        # Every earlier run is this seat's ghost, from the start of its clock.
        ghosts: set[str] = set()
        while len(ghosts) < i:
            ghosts.add((await pl.client.next("progress"))["player"])
        assert ghosts == {q.client.player for q in players[:i]}
        await pl.play(1 + i % 3)
        await pl.resign()
    last = players[-1]
    result = await last.client.next("result", race=code)
    assert len(result["standings"]) == 16
    for pl in players:
        assert leaks(pl.client.history, pl.gid) == []
        await pl.client.close()


async def test_bots_play_at_their_usual_pace(servers):
    server = servers.start(env={"SOLITAIRE_BOT_THINK_SCALE": "0.05"})
    ann = await connect(server.ws_url, "ann")
    created = await ann.client.request(
        {"t": "create", "game": GAME, "async": True, "max_players": 2, "bots": 1}
    )
    assert created["t"] == "created", created
    code = created["race"]
    await asyncio.sleep(1.0)  # the bot plays meanwhile, on its own clock
    lobby = await ann.client.request({"t": "join", "race": code})
    assert lobby["t"] == "lobby" and len(lobby["players"]) == 2
    bot = next(s["player"] for s in lobby["players"] if s["player"] != ann.client.player)
    await ann.client.next("start", race=code)
    await ann.client.next("state", race=code)
    # The bot, dealt before ann, is her ghost; it moves.
    moved = await ann.client.next("progress", player=bot, moves=1, timeout=30)
    assert moved["ghost"] and moved["elapsed_ms"] > 0
    await ann.client.close()


async def test_challenges_lists_open_and_closed_races(servers):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    bob = await connect(server.ws_url, "bob")
    open_code = await challenge(ann, max_players=3)
    closed_code = await challenge(ann, max_players=2)
    for code in (open_code, closed_code):
        await ann.join(code)
        await ann.play(2)
        await ann.resign()
        ann.moves = []
    await bob.join(open_code)  # bob plays on: he sees no standings of the open race
    bob_list = await bob.client.request({"t": "challenges"})
    [entry] = bob_list["races"]
    assert entry["race"] == open_code and entry["open"] and entry.get("standings", []) == []
    bob.moves = []
    await bob.join(closed_code)
    await bob.resign()
    await bob.client.next("result", race=closed_code)
    listed = await ann.client.request({"t": "challenges"})
    by_code = {e["race"]: e for e in listed["races"]}
    assert set(by_code) == {open_code, closed_code}
    assert by_code[open_code]["open"] and not by_code[closed_code]["open"]
    # The open race: only the finished seat (ann) is ranked; never a seed.
    assert [s["player"] for s in by_code[open_code]["standings"]] == [ann.client.player]
    assert len(by_code[closed_code]["standings"]) == 2
    assert "seed" not in str(listed)
    await ann.client.close()
    await bob.client.close()


async def test_a_rematch_of_a_challenge_is_a_challenge(servers):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    bob = await connect(server.ws_url, "bob")
    code = await challenge(ann, max_players=2, window_s=7200)
    for pl in (ann, bob):
        await pl.join(code)
        await pl.play(1)
        await pl.resign()
    await ann.client.next("result", race=code)
    created = await ann.client.request({"t": "rematch", "race": code})
    assert created["t"] == "created", created
    again = created["race"]
    assert again != code
    # Asynchronous: nobody is dealt until they join; bob's rematch seats and deals him.
    lobby = await bob.client.request({"t": "rematch", "race": code})
    assert lobby["t"] == "lobby" and lobby["race"] == again
    start = await bob.client.next("start", race=again)
    assert start["async"] is True
    assert (await bob.client.next("state", race=again))["n"] == 0
    listed = await bob.client.request({"t": "challenges"})
    entry = next(c for c in listed["races"] if c["race"] == again)
    # The same window's length, from the rematch's creation.
    assert entry["closes_at_ms"] - entry["created_ms"] == 7200 * 1000
    await ann.client.close()
    await bob.client.close()


async def test_each_seat_has_its_own_time_limit(servers):
    server = servers.start()
    ann = await connect(server.ws_url, "ann")
    code = await challenge(ann, max_players=2, time_limit_s=30)
    await ann.join(code)
    assert ann.start["ends_at_ms"] - ann.start["starts_at_ms"] == 30_000
    await ann.play(2)
    await ann.client.close()
    restart(server, 40)  # ann's 30 seconds are over; the race is not
    ann2 = await connect(server.ws_url, "ann", token=ann.client.token)
    late = await ann2.client.request(
        {"t": "move", "gid": ann.gid, "n": 2, "m": sorted(ann.game.legal_moves())[0]}
    )
    assert late["t"] == "error" and late["code"] == "illegal_move"
    bob = await connect(server.ws_url, "bob")
    await bob.join(code)  # his own 30 seconds start now
    assert bob.start["ends_at_ms"] - bob.start["starts_at_ms"] == 30_000
    await bob.play(1)
    await bob.resign()
    # Every seat taken, bob finished, ann's time up: it closes.
    result = await bob.client.next("result", race=code)
    rows = {r["player"]: r for r in result["standings"]}
    assert rows[ann.client.player]["time_ms"] == 30_000
    assert rows[ann.client.player]["moves"] == engine.replay(GAME, SEED, ann.moves).moves
    assert (await ann2.client.next("result", race=code)) == result
    await ann2.client.close()
    await bob.client.close()


async def test_two_instances_one_store(servers):
    """ann plays on one server process, bob later on another: the close on bob's reaches
    ann's connection on hers, and bob's ghosts come from where he plays."""
    first, second = servers.start(), servers.start()
    ann = await connect(first.ws_url, "ann")
    code = await challenge(ann, max_players=2)
    await ann.join(code)
    await ann.play(2, pause_s=0.2)
    await ann.resign()
    bob = await connect(second.ws_url, "bob")
    await bob.join(code)
    ghost = await bob.client.next("progress", player=ann.client.player, finished=True)
    assert ghost["ghost"] and ghost["moves"] == 2
    await bob.resign()
    result = await bob.client.next("result", race=code)
    assert (await ann.client.next("result", race=code)) == result
    await ann.client.close()
    await bob.client.close()


async def test_bad_windows_are_refused(server):
    ann = await connect(server.ws_url, "ann")
    for extra in ({"async": True, "window_s": 599}, {"async": True, "window_s": 604801},
                  {"window_s": 3600}):  # fmt: skip
        reply = await ann.client.request({"t": "create", "game": GAME, **extra})
        assert reply["t"] == "error" and reply["code"] == "bad_request", (extra, reply)
    ok = await ann.client.request({"t": "create", "game": GAME, "async": True, "window_s": 604800})
    assert ok["t"] == "created"
    await ann.client.close()
