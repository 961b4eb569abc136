"""Spectators (`watch`) over real WebSockets, real servers and a real Redis: every seat's
board live and nothing it hides, never seated and unable to act, only races that take
spectators, across instances, and fifty of them on one race while its players play."""

from __future__ import annotations

import asyncio
import datetime as dt
import urllib.request
from typing import Any

import redis.asyncio as aioredis
from helpers import Seat, close_all, seat_race
from support.fairness import is_fair_subset
from support.server_proc import ServerFactory, ServerProcess
from support.ws_client import Client
from test_bad_input import snapshot

import engine
from engine.cards import NAMES
from server.store.keys import Keys

GAME = "quatorze"  # its stock is face down
RACE_SEED = 1_234_567  # large enough never to be taken for a score or a count
PRACTICE_SEED = 7_654_321
CARD_NAMES = frozenset(NAMES)


def strings(value: Any) -> set[str]:
    """Every string anywhere in a decoded frame, keys included."""
    out: set[str] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, dict):
            stack += [*v.keys(), *v.values()]
        elif isinstance(v, list):
            stack += v
    return out


def integers(value: Any) -> set[int]:
    out: set[int] = set()
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            out.add(v)
        elif isinstance(v, dict):
            stack += v.values()
        elif isinstance(v, list):
            stack += v
    return out


def has_key(value: Any, key: str) -> bool:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            if key in v:
                return True
            stack += v.values()
        elif isinstance(v, list):
            stack += v
    return False


def check_spectator_frames(
    frames: list[dict[str, Any]],
    moves: dict[str, list[str]],
    seed: int,
    secrets: set[int],
) -> None:
    """Every frame a spectator received, against the engine: each seat board is that seat's
    public view after its first `n` moves, less cards another seat had not seen (counted
    face down: tests/server/test_spectator_fairness.py checks which, move by move), so it
    names no card that the seat's game holds face down; no other frame names a card, and
    no seed (the race's, a daily's or a practice game's) appears anywhere before the
    race's result."""
    assert frames, "the spectator received nothing"
    kinds = [f.get("t") for f in frames]
    if "result" in kinds:
        assert "seat" not in kinds[kinds.index("result") :], "a board came after the result"
    for frame in frames:
        kind = frame.get("t")
        assert kind in ("lobby", "start", "seat", "progress", "result", "error"), frame
        if kind == "result":
            continue
        assert not has_key(frame, "seed"), frame
        assert not integers(frame) & ({seed} | secrets), frame
        if kind != "seat":
            assert not strings(frame) & CARD_NAMES, frame
            continue
        game = engine.replay(GAME, seed, moves[frame["player"]][: frame["n"]])
        assert is_fair_subset(frame["view"], game.view()), frame
        hidden = {c for code in game.HIDDEN for c in game.piles[code]}
        assert hidden, "the deal shows no face-down card to hide"
        assert not strings(frame) & hidden, frame


def game_loads(server: ServerProcess) -> float:
    """The server's count of games loaded from the store (its /metrics)."""
    with urllib.request.urlopen(server.http_url + "/metrics", timeout=10) as reply:
        text = reply.read().decode()
    for line in text.splitlines():
        if line.startswith("solitaire_game_loads_total "):
            return float(line.split()[1])
    raise AssertionError("no solitaire_game_loads_total in /metrics")


async def watching(client: Client, code: str) -> list[dict[str, Any]]:
    """Ask to watch; the reply and the events that came with it."""
    reply = await client.request({"t": "watch", "race": code})
    assert reply["t"] == "lobby", reply
    return [reply, *await client.quiet(0.3)]


async def boards_until(client: Client, want: dict[str, int], timeout: float = 15) -> None:
    """Wait until the spectator has seen every seat's board at (at least) its `n`."""

    def seen() -> dict[str, int]:
        out: dict[str, int] = {}
        for m in client.history:
            if m.get("t") == "seat":
                out[m["player"]] = max(out.get(m["player"], -1), m["n"])
        return out

    async with asyncio.timeout(timeout):
        while any(seen().get(p, -1) < n for p, n in want.items()):
            await asyncio.sleep(0.02)


async def test_a_spectator_follows_every_seat_sees_nothing_hidden_and_cannot_act(
    server: ServerProcess, redis_url: str, redis_namespace: str
) -> None:
    ann, bob, sam = [await Client.connect(server.ws_url) for _ in range(3)]
    r = aioredis.from_url(redis_url, decode_responses=True)
    try:
        for c, name in ((ann, "ann"), (bob, "bob"), (sam, "sam")):
            assert (await c.hello(name))["t"] == "welcome"
        # A daily in progress for ann and a practice game for bob, beside the race.
        daily = await ann.request({"t": "daily", "game": GAME, "confirm": True}, timeout=60)
        assert daily["t"] == "state" and daily["kind"] == "daily"
        today = dt.datetime.now(dt.UTC).date().isoformat()
        daily_seed = int(await r.hget(Keys(redis_namespace).day_deal(GAME, today), "seed"))
        practice = await bob.request({"t": "practice", "game": GAME, "seed": PRACTICE_SEED})
        assert practice["seed"] == PRACTICE_SEED

        created = await ann.request({"t": "create", "game": GAME, "seed": RACE_SEED})
        assert created["t"] == "created" and "spectators" not in created  # absent: welcome
        code = created["race"]
        first = await watching(sam, code)
        assert [s["name"] for s in first[0]["players"]] == ["ann"] and len(first) == 1
        assert (await bob.request({"t": "join", "race": code}))["t"] == "lobby"
        lobby = await sam.next("lobby")
        assert [s["name"] for s in lobby["players"]] == ["ann", "bob"]
        # A spectator never starts a race, and is never seated.
        refused = await sam.request({"t": "start", "race": code})
        assert refused["t"] == "error" and refused["code"] == "not_host"
        assert (await ann.request({"t": "start", "race": code}))["t"] == "start"
        await sam.next("start", race=code)
        states = {c.player: await c.next("state", race=code) for c in (ann, bob)}
        seats = {p: Seat(c, states[p]["gid"], engine.new_game(GAME, RACE_SEED))
                 for p, c in ((ann.player, ann), (bob.player, bob))}  # fmt: skip
        await boards_until(sam, {ann.player: 0, bob.player: 0})

        a, b = seats[ann.player], seats[bob.player]
        for _ in range(3):
            assert (await a.play())["t"] == "state"
        assert (await b.play())["t"] == "state"
        # Their other games move on meanwhile: none of it reaches the spectator.
        daily_move = sorted(engine.replay(GAME, daily_seed, []).legal_moves())[0]
        moved = await ann.request({"t": "move", "gid": daily["gid"], "n": 0, "m": daily_move})
        assert moved["t"] == "state" and moved["kind"] == "daily"
        practice_move = sorted(engine.new_game(GAME, PRACTICE_SEED).legal_moves())[0]
        moved = await bob.request({"t": "move", "gid": practice["gid"], "n": 0, "m": practice_move})
        assert moved["t"] == "state" and moved["kind"] == "practice"
        assert (await b.play())["t"] == "state"
        await boards_until(sam, {ann.player: 3, bob.player: 2})
        progress = [m for m in sam.history if m.get("t") == "progress"]
        assert [m["moves"] for m in progress if m["player"] == ann.player] == [1, 2, 3]

        # The spectator cannot act on a seat's game: refused, and nothing changes.
        before = snapshot(redis_url, redis_namespace)
        for request in (
            {"t": "move", "gid": a.gid, "n": 3, "m": sorted(a.game.legal_moves())[0]},
            {"t": "resign", "gid": a.gid},
            {"t": "get", "gid": b.gid},
            {"t": "undo", "gid": b.gid},
            {"t": "watch", "race": code},  # again: answered, and nothing is written
        ):
            reply = await sam.request(request)
            if request["t"] == "watch":
                assert reply["t"] == "lobby", reply
                continue
            assert reply["t"] == "error" and reply["code"] == "not_found", (request, reply)
        assert snapshot(redis_url, redis_namespace) == before
        # Nor can it take a seat now (a refused join notes the seat's gid among the
        # asker's games, to be pruned later, as for anyone: no change of the race).
        reply = await sam.request({"t": "join", "race": code})
        assert reply["t"] == "error" and reply["code"] == "race_started", reply

        for s in (b, a):
            assert (await s.client.request({"t": "resign", "gid": s.gid}))["finished"]
        result = await sam.next("result", race=code)
        assert result["seed"] == RACE_SEED  # revealed with the result, as to anyone
        assert sam.player not in [row["player"] for row in result["standings"]]
        await sam.quiet(0.3)
        frames = [m for m in sam.history if m.get("t") != "welcome"]
        moves = {p: s.moves for p, s in seats.items()}
        check_spectator_frames(frames, moves, RACE_SEED, {daily_seed, PRACTICE_SEED})
        assert frames[-1]["t"] == "result"
    finally:
        await close_all([Seat(c) for c in (ann, bob, sam)])
        await r.aclose()


async def test_watching_a_race_under_way_gets_every_board_as_it_stands(
    server: ServerProcess,
) -> None:
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob", "cy"], GAME, RACE_SEED)
    ann, bob, cy = seats
    sam = await Client.connect(server.ws_url)
    try:
        await sam.hello("sam")
        for _ in range(2):
            await ann.play()
        await bob.play()
        assert (await cy.client.request({"t": "resign", "gid": cy.gid}))["finished"]
        got = await watching(sam, f"  {code.lower()} ")  # typed as a person would
        kinds = [m["t"] for m in got]
        assert kinds == ["lobby", "start", "seat", "seat", "seat", *["progress"] * 3], kinds
        order = [s.client.player for s in seats]
        boards = [m for m in got if m["t"] == "seat"]
        assert [m["player"] for m in boards] == order
        assert [m["n"] for m in boards] == [2, 1, 0]
        assert boards[2]["finished"] and not boards[0]["finished"]
        moves = {s.client.player: s.moves for s in seats}
        check_spectator_frames(got, moves, RACE_SEED, set())
        # Live from then on, after what the reply said.
        await ann.play()
        board = await sam.next("seat", player=ann.client.player)
        assert board["n"] == 3 and is_fair_subset(board["view"], ann.game.view())
        # Watching again is answered again, and the boards do not come twice after.
        again = await watching(sam, code)
        assert [m["t"] for m in again].count("seat") == 3
        await bob.play()
        await sam.next("seat", player=bob.client.player)
        assert not [m for m in await sam.quiet(0.3) if m["t"] == "seat"]
    finally:
        await close_all([*seats, Seat(sam)])


async def test_races_without_spectators_dailies_and_unknown_races_cannot_be_watched(
    server: ServerProcess, redis_url: str, redis_namespace: str
) -> None:
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], GAME, RACE_SEED)
    private, pseats, _ = await seat_race(
        server.ws_url, ["cy", "dee"], GAME, RACE_SEED, spectators=False
    )
    ann = seats[0]
    sam = await Client.connect(server.ws_url)
    try:
        await sam.hello("sam")
        daily = await ann.client.request({"t": "daily", "game": GAME, "confirm": True}, timeout=60)
        assert daily["t"] == "state"
        before = snapshot(redis_url, redis_namespace)
        for race, code_ in (
            (private, "no_spectators"),  # its creator said so
            (private.lower(), "no_spectators"),
            (daily["gid"], "bad_request"),  # a daily is no race: longer than any code
            (daily["gid"][2:12], "not_found"),  # its date, as a code
            (daily["gid"].rsplit(".", 1)[1][:12].upper(), "not_found"),
            ("ZZZZZZZZZZZZ", "not_found"),
            ("??", "not_found"),
            (code + "2", "not_found"),
        ):
            reply = await sam.request({"t": "watch", "race": race})
            assert reply["t"] == "error" and reply["code"] == code_, (race, reply)
        # A seat of a race under way may watch it: the boards show no card that a seat
        # still playing has not seen (tests/server/test_spectator_fairness.py).
        reply = await ann.client.request({"t": "watch", "race": code})
        assert reply["t"] == "lobby", reply
        await ann.client.quiet(0.3)
        for bad in ({"t": "watch"}, {"t": "watch", "race": 5}, {"t": "watch", "race": "X" * 17},
                    {"t": "watch", "race": ""}):  # fmt: skip
            reply = await sam.request(bad)
            assert reply["t"] == "error" and reply["code"] == "bad_request", (bad, reply)
        assert snapshot(redis_url, redis_namespace) == before
        assert [m for m in await sam.quiet(0.3) if m["t"] != "error"] == []
        # Its own seats too, and once it is over: nobody ever watches a private race.
        for s in pseats:
            assert (await s.client.request({"t": "resign", "gid": s.gid}))["finished"]
        await pseats[0].client.next("result", race=private)
        reply = await pseats[0].client.request({"t": "watch", "race": private})
        assert reply["t"] == "error" and reply["code"] == "no_spectators"
    finally:
        await close_all([*seats, *pseats, Seat(sam)])


async def test_a_spectator_on_another_instance_follows_the_race(servers: ServerFactory) -> None:
    one, two = servers.start(), servers.start()
    code, seats, _ = await seat_race(one.ws_url, ["ann", "bob"], GAME, RACE_SEED)
    sam = await Client.connect(two.ws_url)
    try:
        await sam.hello("sam")
        await watching(sam, code)
        ann, bob = seats
        for _ in range(2):
            await ann.play()
            await bob.play()
        await boards_until(sam, {ann.client.player: 2, bob.client.player: 2})
        # Watching there now, where no seat's game is in play: the boards are loaded from
        # the store once (and kept for the next spectator, who gets the same).
        loads = []
        for name in ("tim", "uma"):
            late = await Client.connect(two.ws_url)
            try:
                await late.hello(name)
                got = await watching(late, code)
                boards = {m["player"]: m for m in got if m["t"] == "seat"}
                for s in seats:
                    assert boards[s.client.player]["n"] == 2
                    assert boards[s.client.player]["view"] == s.game.view()
                loads.append(game_loads(two))
            finally:
                await late.close()
        assert loads[1] == loads[0] >= 2, loads
        for s in seats:
            assert (await s.client.request({"t": "resign", "gid": s.gid}))["finished"]
        await sam.next("result", race=code)
        moves = {s.client.player: s.moves for s in seats}
        frames = [m for m in sam.history if m.get("t") != "welcome"]
        check_spectator_frames(frames, moves, RACE_SEED, set())
    finally:
        await close_all([*seats, Seat(sam)])


async def test_a_spectator_who_takes_a_seat_no_longer_sees_the_others_boards(
    server: ServerProcess,
) -> None:
    ann, sam = [await Client.connect(server.ws_url) for _ in range(2)]
    try:
        await ann.hello("ann")
        await sam.hello("sam")
        code = (await ann.request({"t": "create", "game": GAME, "seed": RACE_SEED}))["race"]
        await watching(sam, code)
        assert (await sam.request({"t": "join", "race": code}))["t"] == "lobby"
        await ann.request({"t": "start", "race": code})
        state = await sam.next("state", race=code)
        a = Seat(ann, (await ann.next("state", race=code))["gid"], engine.new_game(GAME, RACE_SEED))
        await a.play()
        await sam.next("progress", player=ann.player)
        assert [m for m in sam.history if m.get("t") == "seat"] == []
        assert state["n"] == 0
    finally:
        await close_all([Seat(ann), Seat(sam)])


async def test_fifty_spectators_cost_the_players_none_of_their_moves(
    servers: ServerFactory, redis_url: str, redis_namespace: str
) -> None:
    server = servers.start(env={"SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR": "0"})
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob", "cy"], GAME, RACE_SEED)
    spectators = [await Client.connect(server.ws_url) for _ in range(50)]
    try:
        for i, s in enumerate(spectators):
            assert (await s.hello(f"fan{i}"))["t"] == "welcome"
        await asyncio.gather(*(watching(s, code) for s in spectators))

        async def play(seat: Seat, count: int) -> int:
            done = 0
            while done < count and seat.game.legal_moves():
                reply = await seat.play()
                assert reply["t"] == "state", reply
                done += 1
            return done

        played = await asyncio.gather(*(play(s, 8) for s in seats))
        assert all(n > 0 for n in played)
        # Every move acknowledged is stored: the store's move lists are the players' own.
        r = aioredis.from_url(redis_url, decode_responses=True)
        try:
            keys = Keys(redis_namespace)
            for s in seats:
                game_keys = keys.game(s.gid)
                assert game_keys is not None
                assert await r.lrange(game_keys.moves, 0, -1) == s.moves
        finally:
            await r.aclose()
        want = {s.client.player: len(s.moves) for s in seats}
        await asyncio.gather(*(boards_until(fan, want, timeout=30) for fan in spectators))
    finally:
        await close_all([*seats, *(Seat(s) for s in spectators)])
