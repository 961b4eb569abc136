"""A race from create to result, and the rules of moves, over real WebSockets."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from helpers import close_all, seat_race
from support.ws_client import Client

import engine
from server.store.keys import Keys


def expected_ranking(rows: list[dict]) -> list[tuple[int, str]]:
    """docs/protocol.md's ranking, written out independently of the server's code."""
    order = sorted(rows, key=lambda r: (-r["score"], r["resigned"], r["time_ms"], r["moves"]))
    out, prev, rank = [], None, 0
    for i, r in enumerate(order):
        key = (r["score"], r["resigned"], r["time_ms"], r["moves"])
        if key != prev:
            rank = i + 1
        prev = key
        out.append((rank, r["player"]))
    return out


async def test_three_player_race_from_create_to_result(server, redis_url, redis_namespace):
    code, seats, states = await seat_race(server.ws_url, ["ann", "bob", "cat"], "quatorze", 7)
    index = Keys(redis_namespace).running_index()
    r = aioredis.Redis.from_url(redis_url)
    try:
        # Started: the race has its timer in the running index.
        assert await r.zscore(index, code) is not None
        # The same deal for all three: identical views, no seed anywhere before the result.
        assert states[0]["view"] == states[1]["view"] == states[2]["view"]
        assert all(s["n"] == 0 and s["kind"] == "race" and s["race"] == code for s in states)
        assert len({s["gid"] for s in states}) == 3
        assert all("seed" not in m for s in seats for m in s.client.history)
        ann, bob, cat = seats
        for _ in range(3):
            assert (await ann.play())["t"] == "state"
        assert (await bob.play())["t"] == "state"
        # Progress of every move reaches every seat, the mover included.
        for s in seats:
            got = [await s.client.next("progress", player=ann.client.player) for _ in range(3)]
            assert [g["moves"] for g in got] == [1, 2, 3]
            assert got[-1]["score"] == ann.game.score == 6
            assert "view" not in got[-1]
            bob_p = await s.client.next("progress", player=bob.client.player)
            assert bob_p["score"] == 2
        # Everyone finishes: cat and bob resign, ann resigns last.
        for s in (cat, bob, ann):
            final = await s.client.request({"t": "resign", "gid": s.gid})
            assert final["t"] == "state" and final["finished"] is True
        results = [await s.client.next("result", race=code) for s in seats]
        assert results[0] == results[1] == results[2]
        result = results[0]
        assert result["seed"] == 7 and result["game"] == "quatorze"
        rows = result["standings"]
        assert [(r["rank"], r["player"]) for r in rows] == expected_ranking(rows)
        assert [r["player"] for r in rows] == [
            ann.client.player,
            bob.client.player,
            cat.client.player,
        ]
        assert all(r["resigned"] for r in rows)
        # The revealed seed replays every player's moves to the score in the standings.
        by_player = {r["player"]: r for r in rows}
        for s in seats:
            replayed = engine.replay("quatorze", result["seed"], s.moves)
            assert replayed.score == by_player[s.client.player]["score"]
            assert replayed.moves == by_player[s.client.player]["moves"]
            assert replayed.view() == (await s.client.request({"t": "get", "gid": s.gid}))["view"]
        # time_ms runs from the start: later finishers took longer.
        assert by_player[cat.client.player]["time_ms"] <= by_player[ann.client.player]["time_ms"]
        # Closed: no timer is left for it.
        assert await r.zscore(index, code) is None
    finally:
        await close_all(seats)
        await r.aclose()


async def test_ranking_ties_share_rank_in_finishing_order(server):
    # Two seats resign at once with no moves: equal score and moves; times may tie.
    code, seats, _ = await seat_race(server.ws_url, ["a", "b", "c"], "bakers_game", 3)
    try:
        a, b, c = seats
        await a.play()
        for s in (b, c, a):
            assert (await s.client.request({"t": "resign", "gid": s.gid}))["finished"]
        rows = (await a.client.next("result", race=code))["standings"]
        assert [(r["rank"], r["player"]) for r in rows] == expected_ranking(rows)
        # b finished before c: if they tie they are listed b then c.
        pos = {r["player"]: i for i, r in enumerate(rows)}
        tie = rows[pos[b.client.player]]["time_ms"] == rows[pos[c.client.player]]["time_ms"]
        if tie and rows[pos[b.client.player]]["score"] == rows[pos[c.client.player]]["score"]:
            assert pos[b.client.player] < pos[c.client.player]
    finally:
        await close_all(seats)


async def test_illegal_out_of_order_retransmission_and_resign(server):
    _code, seats, states = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    ann, bob = seats
    try:
        view0 = states[0]["view"]
        # Malformed and illegal moves: illegal_move, nothing applied.
        for bad in ("c3-c4x", "deal", "c03-c8", "c0-c0", "t0-f"):
            r = await ann.client.request({"t": "move", "gid": ann.gid, "n": 0, "m": bad})
            assert r["t"] == "error" and r["code"] == "illegal_move", (bad, r)
            assert r["msg"]
        st = await ann.client.request({"t": "get", "gid": ann.gid})
        assert st["n"] == 0 and st["view"] == view0
        # A legal move, then its retransmission: same state, nothing applied twice.
        first = sorted(ann.game.legal_moves())[0]
        applied = await ann.play(first)
        assert applied["t"] == "state" and applied["n"] == 1
        again = await ann.client.request({"t": "move", "gid": ann.gid, "n": 0, "m": first})
        assert again["t"] == "state" and again["n"] == 1 and again["view"] == applied["view"]
        # Wrong n: too high, or too low with a different move.
        other = sorted(ann.game.legal_moves())[0]
        for n, m in ((5, other), (2, other), (0, other)):
            r = await ann.client.request({"t": "move", "gid": ann.gid, "n": n, "m": m})
            assert r["t"] == "error" and r["code"] == "out_of_order", (n, m, r)
        assert (await ann.client.request({"t": "get", "gid": ann.gid}))["n"] == 1
        # Resign ends the game; further moves are illegal, but the last retransmission still works.
        final = await ann.client.request({"t": "resign", "gid": ann.gid})
        assert final["t"] == "state" and final["finished"] and not final["won"]
        late = await ann.client.request({"t": "move", "gid": ann.gid, "n": 1, "m": other})
        assert late["code"] == "illegal_move"
        again = await ann.client.request({"t": "move", "gid": ann.gid, "n": 0, "m": first})
        assert again["t"] == "state" and again["finished"]
        again = await ann.client.request({"t": "resign", "gid": ann.gid})
        assert again["code"] == "illegal_move"
        # bob plays on undisturbed.
        assert (await bob.play())["t"] == "state"
    finally:
        await close_all(seats)


async def test_lobby_rules_host_full_started(server):
    clients = [await Client.connect(server.ws_url) for _ in range(4)]
    try:
        for i, c in enumerate(clients):
            await c.hello(f"p{i}")
        host, b, c3, late = clients
        created = await host.request({"t": "create", "game": "doublets", "max_players": 2})
        assert created["max_players"] == 2 and created["time_limit_s"] is None
        code = created["race"]
        # 12 characters of 32: 60 random bits, not to be guessed (docs/protocol.md, "Races").
        assert len(code) == 12 and set(code) <= set("23456789ABCDEFGHJKLMNPQRSTUVWXYZ")
        lobby = await b.request({"t": "join", "race": code.lower()})  # codes are not case-sensitive
        assert [p["player"] for p in lobby["players"]] == [host.player, b.player]
        assert lobby["host"] == host.player
        assert (await host.next("lobby"))["players"] == [{"player": host.player, "name": "p0"}]
        assert len((await host.next("lobby"))["players"]) == 2
        assert (await c3.request({"t": "join", "race": code}))["code"] == "race_full"
        assert (await b.request({"t": "start", "race": code}))["code"] == "not_host"
        for wrong in ("ZZZZZZ", "ZZZZZZZZZZZZ", code[:6]):
            assert (await b.request({"t": "join", "race": wrong}))["code"] == "not_found"
        assert (await host.request({"t": "start", "race": code}))["t"] == "start"
        assert (await late.request({"t": "join", "race": code}))["code"] == "race_started"
        assert (await host.request({"t": "start", "race": code}))["code"] == "race_started"
        # The refused players saw nothing of the race.
        assert not [m for m in c3.history + late.history if m.get("t") in ("lobby", "start")]
    finally:
        for c in clients:
            await c.close()


async def test_time_limit_expiry_closes_the_race(servers):
    """A second server whose clock runs 40 s ahead sees the 30 s limit pass and closes the race."""
    now_server = servers.start()
    code, seats, _ = await seat_race(
        now_server.ws_url, ["ann", "bob"], "quatorze", 7, time_limit_s=30
    )
    try:
        ann, bob = seats
        await ann.play()
        await ann.play()
        start_events = [m for m in ann.client.history if m.get("t") == "start"]
        assert (
            start_events
            and start_events[0]["ends_at_ms"] - start_events[0]["starts_at_ms"] == 30_000
        )
        ahead = servers.start(env={"SOLITAIRE_CLOCK_OFFSET_S": "40"})
        result = await ann.client.next("result", race=code, timeout=15)
        assert (await bob.client.next("result", race=code)) == result
        rows = {r["player"]: r for r in result["standings"]}
        assert rows[ann.client.player]["score"] == 4
        assert rows[ann.client.player]["rank"] == 1
        for r in rows.values():
            assert r["time_ms"] == 30_000 and not r["resigned"]
        # Out of time: moves are refused and the games are finished.
        r = await bob.play()
        assert r["code"] == "illegal_move"
        st = await bob.client.request({"t": "get", "gid": bob.gid})
        assert st["finished"] and st["elapsed_ms"] == 30_000
        assert f"race {code} finished (time limit)" in ahead.log_text()
        # The result reaches each seat exactly once (relayed by the closer, never repeated).
        await asyncio.sleep(1.5)
        for s in seats:
            assert len([m for m in s.client.history if m.get("t") == "result"]) == 1
    finally:
        await close_all(seats)


async def test_every_connection_of_a_player_gets_its_events(server):
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    ann, _bob = seats
    second = await Client.connect(server.ws_url)
    try:
        w = await second.hello("ann", token=ann.client.token)
        assert w["player"] == ann.client.player and w["token"] == ann.client.token
        assert [a["gid"] for a in w["active"]] == [ann.gid]
        reply = await ann.play()
        pushed = await second.next("state", gid=ann.gid)
        assert pushed["n"] == reply["n"] == 1 and pushed["view"] == reply["view"]
        assert (await second.next("progress"))["player"] == ann.client.player
        await asyncio.sleep(0.2)
        assert [m for m in ann.client.inbox if m.get("t") == "state"] == []
    finally:
        await second.close()
        await close_all(seats)


async def test_a_seat_offline_at_the_result_gets_it_by_joining_again(server):
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    ann, bob = seats
    try:
        await ann.play()
        assert (await ann.client.request({"t": "resign", "gid": ann.gid}))["finished"]
        # While the race runs, joining again brings its lobby (and where the seats stand),
        # no result.
        again = await ann.client.request({"t": "join", "race": code})
        assert again["t"] == "lobby" and again["race"] == code
        assert [m for m in await ann.client.quiet(0.5) if m.get("t") == "result"] == []
        token = ann.client.token
        await ann.client.close()
        # The race ends while ann has no connection: only bob hears its result.
        await bob.play()
        await bob.client.request({"t": "resign", "gid": bob.gid})
        sent = await bob.client.next("result", race=code)
        sent_raw = bob.client.raw[bob.client.history.index(sent)]
        # Back with the token: the finished game is not in `active`, so ann asks with join.
        ann.client = await Client.connect(server.ws_url)
        welcome = await ann.client.hello("ann", token=token)
        assert welcome["t"] == "welcome" and welcome["active"] == []
        lobby = await ann.client.request({"t": "join", "race": code})
        assert lobby["t"] == "lobby" and lobby["race"] == code
        assert [s["name"] for s in lobby["players"]] == ["ann", "bob"]
        got = await ann.client.next("result", race=code)
        # The result follows its lobby reply, and is the very frame bob was sent.
        assert ann.client.history.index(got) == ann.client.history.index(lobby) + 1
        assert got == sent
        assert ann.client.raw[ann.client.history.index(got)] == sent_raw
        assert got["seed"] == 7
        rows = got["standings"]
        assert {r["player"] for r in rows} == {ann.client.player, bob.client.player}
        assert [(r["rank"], r["player"]) for r in rows] == expected_ranking(rows)
    finally:
        await close_all(seats)


async def test_rejoining_a_running_race_gets_its_start_and_every_seats_progress(server):
    code, seats, _ = await seat_race(
        server.ws_url, ["ann", "bob", "cat"], "quatorze", 7, time_limit_s=600
    )
    ann, bob, cat = seats
    try:
        for _ in range(3):
            await ann.play()
        await bob.play()
        start = next(m for m in cat.client.history if m.get("t") == "start")
        # cat never leaves: the last progress of each seat as cat heard it.
        heard = {}
        for player, moves in ((ann.client.player, 3), (bob.client.player, 1)):
            heard[player] = await cat.client.next("progress", player=player, moves=moves)
        token = bob.client.token
        await bob.client.close()
        bob.client = await Client.connect(server.ws_url)
        welcome = await bob.client.hello("bob", token=token)
        assert [a["gid"] for a in welcome["active"]] == [bob.gid]
        lobby = await bob.client.request({"t": "join", "race": code})
        assert lobby["t"] == "lobby" and lobby["host"] == ann.client.player
        assert [s["name"] for s in lobby["players"]] == ["ann", "bob", "cat"]
        # After the lobby: the race's start (its time limit with it), then one progress
        # per seat in seat order, as a seat that never left last heard them.
        again = await bob.client.next("start", race=code)
        assert again == start and again["ends_at_ms"] - again["starts_at_ms"] == 600_000
        got = [await bob.client.next("progress", race=code) for _ in seats]
        history = bob.client.history
        assert [history.index(m) for m in (lobby, again, *got)] == list(
            range(history.index(lobby), history.index(lobby) + 5)
        )
        assert [g["player"] for g in got] == [s.client.player for s in seats]
        by_player = {g["player"]: g for g in got}
        for player, last in heard.items():
            assert {k: v for k, v in by_player[player].items() if k != "elapsed_ms"} == {
                k: v for k, v in last.items() if k != "elapsed_ms"
            }
        # Figures checked by hand: ann played 3 pairs (2 points each), bob 1, cat none.
        assert [(g["name"], g["score"], g["moves"]) for g in got] == [
            ("ann", 6, 3), ("bob", 2, 1), ("cat", 0, 0),
        ]  # fmt: skip
        assert all(0 <= g["elapsed_ms"] <= 600_000 and not g["finished"] for g in got)
        # bob hears the race from then on like everyone else.
        await cat.play()
        assert (await bob.client.next("progress", player=cat.client.player))["moves"] == 1
    finally:
        await close_all(seats)


async def test_anyone_joining_a_finished_race_gets_its_result(server):
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    outsider = await Client.connect(server.ws_url)
    try:
        ann, bob = seats
        await ann.play()
        for s in seats:
            await s.client.request({"t": "resign", "gid": s.gid})
        sent = await bob.client.next("result", race=code)
        # eve never sat in the race: she is answered with its lobby and then its result,
        # the very frame its seats were sent (the seed is public once the race is over).
        await outsider.hello("eve")
        lobby = await outsider.request({"t": "join", "race": code.lower()})
        assert lobby["t"] == "lobby" and lobby["race"] == code
        assert [s["name"] for s in lobby["players"]] == ["ann", "bob"]
        got = await outsider.next("result", race=code)
        assert outsider.history.index(got) == outsider.history.index(lobby) + 1
        assert got == sent and got["seed"] == 7
        assert (
            outsider.raw[outsider.history.index(got)]
            == bob.client.raw[bob.client.history.index(sent)]
        )
        # She is not seated by it: back with her token, she has no game and no lobby.
        token = outsider.token
        await outsider.close()
        outsider = await Client.connect(server.ws_url)
        assert (await outsider.hello("eve", token=token))["active"] == []
        assert [m for m in await outsider.quiet(0.3) if m.get("t") in ("lobby", "result")] == []
    finally:
        await outsider.close()
        await close_all(seats)


async def test_at_equal_score_playing_on_ranks_before_resigning_at_once(servers):
    """ann resigns at once; bob plays no card and runs out of time, with the same score: bob
    took longer, but giving up early must not beat playing on (docs/protocol.md, Races)."""
    server = servers.start(env={"SOLITAIRE_MIN_TIME_LIMIT_S": "1"})
    code, seats, _states = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7,
                                           time_limit_s=2)  # fmt: skip
    ann, bob = seats
    try:
        final = await ann.client.request({"t": "resign", "gid": ann.gid})
        assert final["finished"] is True
        result = await bob.client.next("result", race=code, timeout=20)
        rows = result["standings"]
        assert [(r["name"], r["rank"], r["resigned"]) for r in rows] == [
            ("bob", 1, False),
            ("ann", 2, True),
        ]
        assert rows[0]["score"] == rows[1]["score"]
        assert rows[0]["time_ms"] > rows[1]["time_ms"]
        assert [(r["rank"], r["player"]) for r in rows] == expected_ranking(rows)
    finally:
        await close_all(seats)
