"""Long games: snapshots keep every load and undo short, whatever a game's length, and a
bad or missing snapshot costs time only, never a wrong position.

A 100,000-move Baker's Game practice game (the protocol's limit) is written straight into
Redis through the server's own code (tests/support/long_game.py); the server's /metrics
count what each request cost: the moves it read from the store and the moves it replayed,
in the event loop or in a worker thread. Speed itself is measured by bench/long_games.py.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
import redis as sync_redis
from support.long_game import BAKERS_SEED, bakers_cycle, expected_view, game_metrics, grow
from support.server_proc import ServerFactory
from support.ws_client import Client

import engine
from server.config import DEFAULT
from server.domain.kinds import GameKind
from server.domain.records import GameRecord
from server.play import snapshots

FAST = {"SOLITAIRE_RATE": "5000", "SOLITAIRE_BURST": "5000"}
EVERY = DEFAULT.snapshot_every
LONG = DEFAULT.max_moves_per_game  # 100,000: the most a practice game may have


def cost(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    names = {
        "loads": "solitaire_game_loads",
        "read": "solitaire_game_moves_read",
        "loop": 'solitaire_game_moves_replayed{where="loop"}',
        "thread": 'solitaire_game_moves_replayed{where="thread"}',
        "bad": "solitaire_game_bad_snapshots",
    }
    return {k: after.get(v, 0.0) - before.get(v, 0.0) for k, v in names.items()}


def snaps_key(ns: str, gid: str) -> str:
    player = gid.split(".")[-1]
    return f"{{{ns}:player:{player}}}:game:{gid}:snaps"


def stored_snapshots(redis_url: str, key: str) -> dict[int, dict[str, Any]]:
    client = sync_redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        rows = client.zrange(key, 0, -1, withscores=True)
    finally:
        client.close()
    return {int(score): msgspec.json.decode(text) for text, score in rows}


def position(moves: list[str]) -> dict[str, Any]:
    game = engine.replay("bakers_game", BAKERS_SEED, moves)
    return {"piles": game.piles, "moves": game.moves}


async def new_practice(c: Client) -> str:
    state = await c.request({"t": "practice", "game": "bakers_game", "seed": BAKERS_SEED})
    assert state["t"] == "state" and state["n"] == 0
    return state["gid"]


async def test_a_100000_move_game_loads_and_undoes_from_its_snapshots(
    servers: ServerFactory, redis_url: str
) -> None:
    server = servers.start(env=FAST)
    moves = bakers_cycle(LONG)
    async with Client.connect(server.ws_url) as c:
        await c.hello("long")
        gid = await new_practice(c)
        await grow(redis_url, servers.namespace, gid, moves)
        before = game_metrics(server.http_url)
        got = await c.request({"t": "get", "gid": gid})
        assert got["n"] == LONG and got["view"] == expected_view(moves)
        refused = await c.request({"t": "move", "gid": gid, "n": LONG, "m": "t7-r0"})
        assert refused["t"] == "error" and refused["code"] == "illegal_move"
        assert "at most 100000 moves" in refused["msg"]
        undos = 3
        for k in range(1, undos + 1):
            undone = await c.request({"t": "undo", "gid": gid})
            assert undone["t"] == "state" and undone["n"] == LONG - k
            assert undone["view"] == expected_view(moves[: LONG - k])
        again = await c.request({"t": "get", "gid": gid})
        assert again["n"] == LONG - undos
        after = game_metrics(server.http_url)
    spent = cost(before, after)
    requests = 2 + 1 + undos
    # Nothing was read or replayed from far back: every load read the snapshots and the
    # last EVERY + 1 moves, and no request replayed more than EVERY moves.
    assert spent["thread"] == 0 and spent["bad"] == 0, spent
    assert 1 <= spent["loads"] <= requests, spent
    assert spent["read"] <= spent["loads"] * (EVERY + 1), spent
    assert spent["loop"] <= requests * EVERY, spent


async def test_bad_or_missing_snapshots_cost_time_never_the_position(
    servers: ServerFactory, redis_url: str
) -> None:
    server = servers.start(env=FAST)
    ns = servers.namespace
    total = 10 * EVERY + EVERY // 2
    moves = bakers_cycle(total)
    async with Client.connect(server.ws_url) as c:
        await c.hello("faults")
        gid = await new_practice(c)
        await grow(redis_url, ns, gid, moves)
        key = snaps_key(ns, gid)
        stored = stored_snapshots(redis_url, key)
        assert sorted(stored) == [EVERY * i for i in range(1, 11)]
        for at, snap in stored.items():
            assert {"piles": snap["piles"], "moves": snap["moves"]} == position(moves[:at])
        # The newest snapshot garbled, the one before it stale (the 9C in another reserve:
        # a legal position, but not this game's), the one before that gone.
        top, stale, gone = 10 * EVERY, 9 * EVERY, 8 * EVERY
        wrong = dict(stored[stale])
        wrong["piles"] = {**wrong["piles"], "r0": [], "r1": wrong["piles"]["r0"]}
        assert wrong["piles"]["r1"] == ["9C"]
        client = sync_redis.Redis.from_url(redis_url, decode_responses=True)
        try:
            client.zremrangebyscore(key, gone, top)
            client.zadd(key, {'{"v": 1, "game": "bakers_g': top})
            client.zadd(key, {msgspec.json.encode(wrong).decode(): stale})
        finally:
            client.close()
        before = game_metrics(server.http_url)
        got = await c.request({"t": "get", "gid": gid})
        assert got["t"] == "state" and got["n"] == total
        assert got["view"] == expected_view(moves)
        spent = cost(before, game_metrics(server.http_url))
        assert spent["bad"] == 2, spent  # the garbled one and the stale one, skipped
        # It replayed from the one before those and stored good ones in their place.
        repaired = stored_snapshots(redis_url, key)
        assert sorted(repaired) == [EVERY * i for i in range(1, 11)]
        for at in (gone, stale, top):
            assert {k: repaired[at][k] for k in ("piles", "moves")} == position(moves[:at])
        log = server.log_text()
        assert f"snapshot at move {top} skipped: undecodable" in log
        assert "3 snapshots stored" in log
        # Undo across a snapshot: each position right, the snapshot past the end dropped.
        for k in range(1, EVERY // 2 + 2):
            undone = await c.request({"t": "undo", "gid": gid})
            assert undone["n"] == total - k
        assert undone["view"] == expected_view(moves[: total - k])
        assert max(stored_snapshots(redis_url, key)) == 9 * EVERY
    # No snapshot at all: a server that has never seen the game replays it from the deal,
    # off the event loop (in a worker thread), and stores the snapshots it made.
    client = sync_redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        client.delete(key)
    finally:
        client.close()
    other = servers.start(env=FAST)
    before = game_metrics(other.http_url)
    async with Client.connect(other.ws_url) as c2:
        await c2.hello("faults", token=c.token)  # its welcome loads the game
        got = await c2.request({"t": "get", "gid": gid})
        spent = cost(before, game_metrics(other.http_url))
        end = total - k
        assert got["n"] == end and got["view"] == expected_view(moves[:end])
        assert spent["thread"] == end and spent["read"] >= end, spent
        assert sorted(stored_snapshots(redis_url, key)) == [EVERY * i for i in range(1, 10)]
        undone = await c2.request({"t": "undo", "gid": gid})
        assert undone["n"] == end - 1 and undone["view"] == expected_view(moves[: end - 1])


async def test_snapshots_follow_moves_undos_and_a_race_close(
    servers: ServerFactory, redis_url: str
) -> None:
    """Snapshots the server writes itself, with the moves of the group commit: an undo back
    past one drops it, a different history writes its own, a resent move from before the
    moves kept in memory is still recognised, and a race's close gives a seat's snapshots
    the time to live of its moves."""
    server = servers.start(env=FAST)
    ns = servers.namespace
    async with Client.connect(server.ws_url) as c:
        await c.hello("writer")
        gid = await new_practice(c)
        key = snaps_key(ns, gid)
        first = bakers_cycle(EVERY + 2)
        for n, move in enumerate(first):
            played = await c.request({"t": "move", "gid": gid, "n": n, "m": move})
            assert played["t"] == "state" and played["n"] == n + 1, played
        assert {at: {k: s[k] for k in ("piles", "moves")}
                for at, s in stored_snapshots(redis_url, key).items()} == {
            EVERY: position(first[:EVERY])}  # fmt: skip
        # Resent moves from before the snapshot (kept only in the store now) are recognised.
        again = await c.request({"t": "move", "gid": gid, "n": EVERY - 1, "m": first[EVERY - 1]})
        assert again["t"] == "state" and again["n"] == EVERY + 2
        wrong = await c.request({"t": "move", "gid": gid, "n": EVERY - 1, "m": "t0-r3"})
        assert wrong["t"] == "error" and wrong["code"] == "out_of_order"
        # Back to before the snapshot: it goes with the move it followed.
        for _ in range(3):
            assert (await c.request({"t": "undo", "gid": gid}))["t"] == "state"
        assert stored_snapshots(redis_url, key) == {}
        # Another history through the same move count: its own snapshot, nothing stale.
        other = bakers_cycle(EVERY + 1, reserve="r2")
        assert other[: EVERY - 1] != first[: EVERY - 1]
        for _ in range(EVERY - 1 - 1):
            assert (await c.request({"t": "undo", "gid": gid}))["t"] == "state"
        got = await c.request({"t": "get", "gid": gid})
        assert got["n"] == 1
        for n, move in enumerate(other[1:], 1):
            played = await c.request({"t": "move", "gid": gid, "n": n, "m": move})
            assert played["t"] == "state", played
        snaps = stored_snapshots(redis_url, key)
        assert list(snaps) == [EVERY]
        assert {k: snaps[EVERY][k] for k in ("piles", "moves")} == position(other[:EVERY])
    # A server that has never seen the game starts from that snapshot.
    fresh = servers.start(env=FAST)
    async with Client.connect(fresh.ws_url) as c2:
        await c2.hello("writer", token=c.token)
        got = await c2.request({"t": "get", "gid": gid})
        assert got["n"] == EVERY + 1 and got["view"] == expected_view(other)
        undone = await c2.request({"t": "undo", "gid": gid})
        assert undone["view"] == expected_view(other[:EVERY])
        undone = await c2.request({"t": "undo", "gid": gid})
        assert undone["view"] == expected_view(other[: EVERY - 1])
        # A race seat: its snapshots live as long as its moves once the race is over.
        created = await c2.request({"t": "create", "game": "bakers_game", "seed": BAKERS_SEED})
        code = created["race"]
        async with Client.connect(fresh.ws_url) as rival:
            await rival.hello("rival")
            await rival.request({"t": "join", "race": code})
            await c2.request({"t": "start", "race": code})
            seat = await c2.next("state", race=code)
            for n, move in enumerate(first[: EVERY + 1]):
                played = await c2.request({"t": "move", "gid": seat["gid"], "n": n, "m": move})
                assert played["t"] == "state", played
            await c2.request({"t": "resign", "gid": seat["gid"]})
            await rival.request({"t": "resign", "gid": f"r.{code}.{rival.player}"})
            await c2.next("result", race=code)
    game_key = f"{{{ns}:race:{code}}}:game:{seat['gid']}"
    client = sync_redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        moves_ttl, snaps_ttl = client.ttl(game_key + ":moves"), client.ttl(game_key + ":snaps")
        assert client.zcard(game_key + ":snaps") == 1
    finally:
        client.close()
    assert snaps_ttl > 0 and abs(moves_ttl - snaps_ttl) <= 2, (moves_ttl, snaps_ttl)


async def test_ranked_games_stop_at_their_move_cap_practice_games_do_not(
    servers: ServerFactory,
) -> None:
    server = servers.start(env={**FAST, "SOLITAIRE_MAX_RANKED_MOVES": "4"})
    moves = bakers_cycle(6)
    async with Client.connect(server.ws_url) as a, Client.connect(server.ws_url) as b:
        await a.hello("capped")
        await b.hello("rival")
        created = await a.request({"t": "create", "game": "bakers_game", "seed": BAKERS_SEED})
        await b.request({"t": "join", "race": created["race"]})
        await a.request({"t": "start", "race": created["race"]})
        seat = await a.next("state", race=created["race"])
        for n, move in enumerate(moves[:4]):
            played = await a.request({"t": "move", "gid": seat["gid"], "n": n, "m": move})
            assert played["t"] == "state", played
        refused = await a.request({"t": "move", "gid": seat["gid"], "n": 4, "m": moves[4]})
        assert refused["t"] == "error" and refused["code"] == "illegal_move"
        assert refused["msg"] == "a race game takes at most 4 moves; this one has them"
        resigned = await a.request({"t": "resign", "gid": seat["gid"]})
        assert resigned["t"] == "state" and resigned["finished"]
        gid = await new_practice(a)
        for n, move in enumerate(moves):
            played = await a.request({"t": "move", "gid": gid, "n": n, "m": move})
            assert played["t"] == "state", played


@pytest.mark.parametrize("game_id", engine.GAMES)
def test_a_snapshot_rebuilds_every_position_exactly(game_id: str) -> None:
    """Through its text, at every move of random games: the same piles, counters, view and
    legal moves, and the same game after the next move."""
    for seed in (1, 2, 3):
        rng = random.Random(seed)
        game = engine.new_game(game_id, seed)
        rec = GameRecord(gid="p.x.y.z", kind=GameKind.PRACTICE, game=game_id, seed=seed, player="z",
                         name="Z")  # fmt: skip
        for n in range(1, 400):
            legal = sorted(game.legal_moves())
            if not legal:
                break
            move = rng.choice(legal)
            game.play(move)
            back = snapshots.restore(snapshots.encode(rec, game, n, move), rec, n, move)
            assert back == game and back.view() == game.view()
            assert sorted(back.legal_moves()) == sorted(game.legal_moves())
            for follow in back.legal_moves():
                twin, again = game.copy(), back.copy()
                twin.play(follow)
                again.play(follow)
                assert again == twin


def test_a_snapshot_that_does_not_fit_is_refused() -> None:
    rec = GameRecord(gid="p.x.y.z", kind=GameKind.PRACTICE, game="bakers_game", seed=BAKERS_SEED,
                     player="z", name="Z")  # fmt: skip
    moves = bakers_cycle(3)
    good = snapshots.encode(rec, engine.replay("bakers_game", BAKERS_SEED, moves), 3, moves[-1])
    assert snapshots.restore(good, rec, 3, moves[-1]) is not None
    twin = msgspec.json.decode(good)
    duplicated = {**twin, "piles": {**twin["piles"], "r1": twin["piles"]["t0"][-1:]}}
    for text, record, n, last in [
        (good[:-3], rec, 3, moves[-1]),  # cut short
        (good, rec.evolve(seed=BAKERS_SEED + 1), 3, moves[-1]),  # another deal
        (good, rec.evolve(game="doublets"), 3, moves[-1]),  # another game
        (good, rec, 4, moves[-1]),  # stored under another move count
        (good, rec, 3, "t0-r1"),  # after another move
        (msgspec.json.encode({**twin, "v": 2}).decode(), rec, 3, moves[-1]),
        (msgspec.json.encode(duplicated).decode(), rec, 3, moves[-1]),  # a card twice
        (msgspec.json.encode({**twin, "moves": "3"}).decode(), rec, 3, moves[-1]),
    ]:
        with pytest.raises(snapshots.BadSnapshot):
            snapshots.restore(text, record, n, last)
