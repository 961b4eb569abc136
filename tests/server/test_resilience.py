"""Crashes, restarts, reconnects and several server processes on one store."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from helpers import close_all, play_until_cut, seat_race
from support.server_proc import ServerProcess
from support.ws_client import Client

import engine
from server.store.keys import Keys


async def test_sigkill_mid_race_loses_no_acknowledged_move(servers):
    # A generous rate limit, so that the player is as fast as the server lets it be.
    server = servers.start(env={"SOLITAIRE_RATE": "5000", "SOLITAIRE_BURST": "5000"})
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "doublets", 11)
    ann, bob = seats
    log: dict = {"acked": [], "in_flight": None}
    player = asyncio.create_task(play_until_cut(ann.client, ann.gid, "doublets", 11, log))
    while len(log["acked"]) < 30:  # Doublets has well over 100 moves: kill mid-game
        await asyncio.sleep(0.001)
    server.kill()
    await asyncio.wait_for(player, 10)
    acked = list(log["acked"])
    assert len(acked) >= 5, "the player should have had moves acknowledged before the kill"
    await close_all(seats)

    server.start()  # same port, same store
    again = await Client.connect(server.ws_url)
    try:
        w = await again.hello("ann", token=ann.client.token)
        assert w["player"] == ann.client.player
        [state] = w["active"]
        assert state["gid"] == ann.gid and state["race"] == code
        # Every acknowledged move is there; at most the one in flight was stored besides.
        stored_n = state["n"]
        assert len(acked) <= stored_n <= len(acked) + (1 if log["in_flight"] else 0)
        stored = acked + ([log["in_flight"]] if stored_n > len(acked) else [])
        assert state["view"] == engine.replay("doublets", 11, stored).view()
        # The in-flight move, resent, is either applied now or recognised as a retransmission.
        if log["in_flight"]:
            r = await again.request(
                {"t": "move", "gid": ann.gid, "n": len(acked), "m": log["in_flight"]}
            )
            assert r["t"] == "state" and r["n"] == len(acked) + 1
        # The race goes on: bob comes back, both finish, the result arrives.
        bob2 = await Client.connect(server.ws_url)
        await bob2.hello("bob", token=bob.client.token)
        for c, gid in ((again, ann.gid), (bob2, bob.gid)):
            assert (await c.request({"t": "resign", "gid": gid}))["finished"]
        result = await again.next("result", race=code)
        assert (await bob2.next("result", race=code)) == result
        ann_row = next(r for r in result["standings"] if r["player"] == ann.client.player)
        assert (
            ann_row["moves"]
            == engine.replay(
                "doublets",
                result["seed"],
                stored
                + ([log["in_flight"]] if log["in_flight"] and stored_n == len(acked) else []),
            ).moves
        )
        await bob2.close()
    finally:
        await again.close()


async def test_race_timer_survives_sigkill(servers):
    server = servers.start()
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7, time_limit_s=30)
    ann, _bob = seats
    await ann.play()
    await close_all(seats)
    server.kill()
    # Restarted with its clock 40 s later: the race's stored deadline has passed.
    server.env["SOLITAIRE_CLOCK_OFFSET_S"] = "40"
    server.start()
    c = await Client.connect(server.ws_url)
    try:
        w = await c.hello("ann", token=ann.client.token)
        assert w["active"] == []  # the race was closed on start-up, by its stored deadline
        st = await c.request({"t": "get", "gid": ann.gid})
        assert st["finished"] and st["elapsed_ms"] == 30_000 and st["n"] == 1 and st["score"] == 2
        r = await c.request({"t": "move", "gid": ann.gid, "n": 1, "m": "c0-c1"})
        assert r["code"] == "illegal_move"
        assert f"race {code} finished (time limit)" in server.log_text()
    finally:
        await c.close()


async def test_two_server_processes_share_one_race(servers):
    s1, s2 = servers.start(), servers.start()
    code, seats, states = await seat_race([s1.ws_url, s2.ws_url], ["ann", "bob", "cat"])
    ann, bob, cat = seats  # ann and cat on s1, bob on s2
    ann_on_s2 = await Client.connect(s2.ws_url)
    try:
        assert states[0]["view"] == states[1]["view"] == states[2]["view"]
        await ann_on_s2.hello("ann", token=ann.client.token)
        await bob.play()
        await bob.play()
        for s in (ann, cat):
            got = [await s.client.next("progress", player=bob.client.player) for _ in range(2)]
            assert [g["moves"] for g in got] == [1, 2] and got[-1]["score"] == 4
        reply = await ann.play()
        # ann's other connection, on the other server, follows her game.
        pushed = await ann_on_s2.next("state", gid=ann.gid)
        assert pushed["n"] == reply["n"] and pushed["view"] == reply["view"]
        assert (await bob.client.next("progress", player=ann.client.player))["moves"] == 1
        # A move of the same game through the other server continues from the stored count.
        via_s2 = await ann_on_s2.request(
            {"t": "move", "gid": ann.gid, "n": 1, "m": sorted(ann.game.legal_moves())[0]}
        )
        assert via_s2["t"] == "state" and via_s2["n"] == 2
        stale = await ann.client.request(
            {"t": "move", "gid": ann.gid, "n": 1, "m": sorted(ann.game.legal_moves())[1]}
        )
        assert stale["code"] == "out_of_order"
        for s in (cat, bob, ann):
            await s.client.request({"t": "resign", "gid": s.gid})
        results = [await s.client.next("result", race=code) for s in seats]
        assert results[0] == results[1] == results[2]
        assert results[0]["standings"][0]["player"] == bob.client.player
    finally:
        await ann_on_s2.close()
        await close_all(seats)


async def test_joins_through_two_servers_are_decided_on_the_stored_race(servers):
    """A server decides a new seat on the lobby as it last wrote it; once another server has
    changed the race, the store refuses that guess and the join is decided on the stored
    race: a full race stays full, a seat taken elsewhere is not taken twice."""
    s1, s2 = servers.start(), servers.start()
    host, bob, cat = [await Client.connect(url) for url in (s1.ws_url, s2.ws_url, s1.ws_url)]
    bob_on_s1 = await Client.connect(s1.ws_url)
    try:
        for name, client in (("host", host), ("bob", bob), ("cat", cat)):
            await client.hello(name)
        await bob_on_s1.hello("bob", token=bob.token)
        full = (await host.request({"t": "create", "game": "doublets", "max_players": 2}))["race"]
        assert len((await bob.request({"t": "join", "race": full}))["players"]) == 2
        # s1 wrote the lobby with its host alone; s2 has seated bob since.
        assert (await cat.request({"t": "join", "race": full}))["code"] == "race_full"

        room = (await host.request({"t": "create", "game": "doublets", "max_players": 3}))["race"]
        assert len((await bob.request({"t": "join", "race": room}))["players"]) == 2
        again = await bob_on_s1.request({"t": "join", "race": room})
        assert again["t"] == "lobby"
        assert [s["player"] for s in again["players"]] == [host.player, bob.player]
        joined = await cat.request({"t": "join", "race": room})
        assert [s["player"] for s in joined["players"]] == [host.player, bob.player, cat.player]
    finally:
        for client in (host, bob, cat, bob_on_s1):
            await client.close()


async def test_a_player_on_two_servers_hears_races_joined_on_either(servers):
    s1, s2 = servers.start(), servers.start()
    ann1, ann2, bob = [await Client.connect(u) for u in (s1.ws_url, s2.ws_url, s1.ws_url)]
    try:
        await ann1.hello("ann")
        await ann2.hello("ann", token=ann1.token)
        await bob.hello("bob")
        # ann creates through s1, her connection to s2 hears everything too.
        code = (await ann1.request({"t": "create", "game": "quatorze", "seed": 7}))["race"]
        assert (await ann2.next("lobby", race=code))["host"] == ann1.player
        await bob.request({"t": "join", "race": code})
        lobby = await ann2.next("lobby", race=code)
        assert [p["player"] for p in lobby["players"]] == [ann1.player, bob.player]
        await ann1.request({"t": "start", "race": code})
        await ann2.next("start", race=code)
        gid = (await ann2.next("state", race=code))["gid"]
        # ...and may play it from s2 while bob, on s1, sees the progress.
        m = sorted(engine.new_game("quatorze", 7).legal_moves())[0]
        reply = await ann2.request({"t": "move", "gid": gid, "n": 0, "m": m})
        assert reply["t"] == "state" and reply["n"] == 1, reply
        assert (await bob.next("progress", player=ann1.player))["moves"] == 1
        assert (await ann1.next("state", gid=gid))["n"] == 0  # the start's
        assert (await ann1.next("state", gid=gid))["n"] == 1  # the move made on s2
        # s1 kept ann's game from the start (n = 0): the same move sent again through s1
        # is a retransmission answered with the stored state, not a second move.
        again = await ann1.request({"t": "move", "gid": gid, "n": 0, "m": m})
        assert again["t"] == "state" and again["n"] == 1, again
        nxt = sorted(engine.replay("quatorze", 7, [m]).legal_moves())[0]
        assert (await ann1.request({"t": "move", "gid": gid, "n": 1, "m": nxt}))["n"] == 2
    finally:
        for c in (ann1, ann2, bob):
            await c.close()


async def test_a_player_on_two_servers_hears_a_race_joined_through_either(servers):
    s1, s2, s3 = servers.start(), servers.start(), servers.start()
    ann = await Client.connect(s1.ws_url)
    cat_here, cat_there = [await Client.connect(u) for u in (s2.ws_url, s3.ws_url)]
    try:
        await ann.hello("ann")
        await cat_here.hello("cat")
        await cat_there.hello("cat", token=cat_here.token)
        code = (await ann.request({"t": "create", "game": "quatorze", "seed": 7}))["race"]
        # cat joins through s2; s3, where she is connected too, had no part in the race.
        await cat_here.request({"t": "join", "race": code})
        lobby = await cat_there.next("lobby", race=code)
        assert [p["player"] for p in lobby["players"]] == [ann.player, cat_here.player]
        await ann.request({"t": "start", "race": code})
        assert (await cat_there.next("start", race=code))["race"] == code
    finally:
        for c in (ann, cat_here, cat_there):
            await c.close()


async def test_reconnect_with_token_in_lobby_and_mid_race(server):
    host = await Client.connect(server.ws_url)
    guest = await Client.connect(server.ws_url)
    try:
        await host.hello("host")
        first = await guest.hello("guest")
        code = (await host.request({"t": "create", "game": "quatorze", "seed": 7}))["race"]
        await guest.request({"t": "join", "race": code})
        token = guest.token
        await guest.close()
        # Back while the race waits: no game yet, and the lobby follows the welcome.
        guest = await Client.connect(server.ws_url)
        bad = await guest.hello("guest", token="not-a-token")
        assert bad["t"] == "error" and bad["code"] == "auth_failed"
        w = await guest.hello("guest", token=token)  # the same connection may try again
        assert w["player"] == first["player"] and w["token"] == token and w["active"] == []
        lobby = await guest.next("lobby", race=code)
        assert [p["player"] for p in lobby["players"]] == [host.player, guest.player]
        await host.request({"t": "start", "race": code})
        gid = (await guest.next("state", race=code))["gid"]
        g = engine.new_game("quatorze", 7)
        m = sorted(g.legal_moves())[0]
        assert (await guest.request({"t": "move", "gid": gid, "n": 0, "m": m}))["n"] == 1
        g.play(m)
        await guest.close()
        # Back mid-race: the welcome carries the game as it stands; play on from there.
        guest = await Client.connect(server.ws_url)
        w = await guest.hello("guest", token=token)
        [state] = w["active"]
        assert state["gid"] == gid and state["n"] == 1 and state["view"] == g.view()
        m = sorted(g.legal_moves())[0]
        assert (await guest.request({"t": "move", "gid": gid, "n": 1, "m": m}))["n"] == 2
        assert (await host.next("progress", player=guest.player))["moves"] == 1
        assert (await host.next("progress", player=guest.player))["moves"] == 2
    finally:
        await host.close()
        await guest.close()


async def test_sigterm_closes_clients_with_1001_and_keeps_moves(servers):
    server = servers.start(env={"SOLITAIRE_RATE": "5000", "SOLITAIRE_BURST": "5000"})
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "doublets", 11)
    ann, _bob = seats
    log: dict = {"acked": [], "in_flight": None}
    player = asyncio.create_task(play_until_cut(ann.client, ann.gid, "doublets", 11, log))
    while len(log["acked"]) < 20:
        await asyncio.sleep(0.001)
    # In a thread: our clients must keep answering the closing handshake meanwhile.
    assert await asyncio.to_thread(server.stop) == 0
    await asyncio.wait_for(player, 10)
    for s in seats:
        assert await s.client.wait_closed() == 1001
    acked = log["acked"]
    server.start()
    c = await Client.connect(server.ws_url)
    try:
        w = await c.hello("ann", token=ann.client.token)
        [state] = w["active"]
        # Requests in flight at SIGTERM were finished: every acknowledged move is stored.
        assert len(acked) <= state["n"] <= len(acked) + 1
        assert "closed 2 connections with 1001" in server.log_text()
    finally:
        await c.close()
        await close_all(seats)


async def test_default_start_uses_embedded_valkey_and_keeps_games(tmp_path):
    """No REDIS_URL and no data dir (the README's start): the server runs its own
    valkey-server in ./data, and finds the games again after a restart, even one after
    SIGKILL."""
    server = ServerProcess(
        redis_url=None, namespace="sr", data_dir=tmp_path / "data", default_data_dir=True
    )
    server.start()
    try:
        assert "starting embedded valkey-server" in server.log_text()
        code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
        ann = seats[0]
        for _ in range(3):
            assert (await ann.play())["t"] == "state"
        await close_all(seats)
        server.kill()
        server.start()
        c = await Client.connect(server.ws_url)
        w = await c.hello("ann", token=ann.client.token)
        [state] = w["active"]
        assert state["race"] == code and state["n"] == 3 and state["view"] == ann.game.view()
        assert (
            await c.request(
                {"t": "move", "gid": ann.gid, "n": 3, "m": sorted(ann.game.legal_moves())[0]}
            )
        )["n"] == 4
        await c.close()
        assert server.stop() == 0
        assert (tmp_path / "data" / "valkey").is_dir()
    finally:
        server.stop()


async def test_concurrent_moves_through_two_servers_apply_exactly_one(servers):
    """The check of n against the stored count and the append are one atomic step."""
    s1, s2 = servers.start(), servers.start()
    _code, seats, _ = await seat_race(s1.ws_url, ["ann", "bob"], "quatorze", 7)
    ann = seats[0]
    other = await Client.connect(s2.ws_url)
    try:
        await other.hello("ann", token=ann.client.token)
        g = engine.new_game("quatorze", 7)
        applied: list[str] = []
        for n in range(6):
            first, second = sorted(g.legal_moves())[:2]
            r1, r2 = await asyncio.gather(
                ann.client.request({"t": "move", "gid": ann.gid, "n": n, "m": first}),
                other.request({"t": "move", "gid": ann.gid, "n": n, "m": second}),
            )
            winners = [(r, m) for r, m in ((r1, first), (r2, second)) if r["t"] == "state"]
            losers = [r for r in (r1, r2) if r["t"] == "error"]
            assert len(winners) == 1 and len(losers) == 1, (r1, r2)
            assert losers[0]["code"] == "out_of_order"
            reply, move = winners[0]
            assert reply["n"] == n + 1
            g.play(move)
            applied.append(move)
        stored = await other.request({"t": "get", "gid": ann.gid})
        assert stored["n"] == 6
        assert stored["view"] == engine.replay("quatorze", 7, applied).view()
    finally:
        await other.close()
        await close_all(seats)


async def test_a_redis_that_lost_its_scripts_still_takes_every_write(
    server, redis_url, redis_namespace
):
    """Redis restarted from its data (or a failover) keeps the keys but not the scripts
    the server loaded: each kind of write loads its script again and goes through."""
    r = aioredis.Redis.from_url(redis_url)
    ann, bob = await Client.connect(server.ws_url), await Client.connect(server.ws_url)
    try:
        await ann.hello("ann")
        await bob.hello("bob")
        await r.script_flush()
        code = (await ann.request({"t": "create", "game": "quatorze", "seed": 7}))["race"]
        await r.script_flush()
        assert (await bob.request({"t": "join", "race": code}))["t"] == "lobby"
        await r.script_flush()
        assert (await ann.request({"t": "start", "race": code}))["t"] == "start"
        state = await ann.next("state", race=code)
        game = engine.new_game("quatorze", 7)
        m = sorted(game.legal_moves())[0]
        await r.script_flush()
        reply = await ann.request({"t": "move", "gid": state["gid"], "n": 0, "m": m})
        assert reply["t"] == "state" and reply["n"] == 1, reply
        await r.script_flush()
        assert (await ann.request({"t": "resign", "gid": state["gid"]}))["finished"] is True
        await r.script_flush()
        bob_gid = (await bob.next("state", race=code))["gid"]
        await bob.request({"t": "resign", "gid": bob_gid})
        result = await bob.next("result", race=code)
        assert [s["player"] for s in result["standings"]] == [ann.player, bob.player]
        assert await r.zscore(Keys(redis_namespace).running_index(), code) is None
    finally:
        await ann.close()
        await bob.close()
        await r.aclose()
