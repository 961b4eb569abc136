"""Quick races and ratings over real WebSockets, real servers and the real store: queue,
matched, lobby, the start by itself, a rated result checked against openskill called here
directly, the ratings board and stats; two instances sharing one queue; unqueue; the bot
offer; who may not queue."""

from __future__ import annotations

import json
import urllib.request

from helpers import seat_race
from openskill.models import PlackettLuce
from support.ws_client import Client

import engine

QUICK = {
    "SOLITAIRE_QUICK_COUNTDOWN_S": "1",
    "SOLITAIRE_QUICK_ROUND_S": "0.1",
    "SOLITAIRE_QUICK_BOT_AFTER_S": "600",
}


def shown(mu: float) -> int:
    """The display mapping the README states: 1500 + 60 (mu - 25)."""
    return round(1500 + 60 * (mu - 25))


async def connect(url: str, name: str) -> Client:
    c = await Client.connect(url)
    assert (await c.hello(name))["t"] == "welcome"
    return c


async def matched_race(clients: list[Client], game: str) -> str:
    """Each client hears `matched` then the lobby with every seat, then start and state."""
    codes = set()
    for c in clients:
        m = await c.next("matched", timeout=10)
        assert m["game"] == game and m["starts_at_ms"] > 0
        lobby = await c.next("lobby", race=m["race"])
        assert sorted(s["player"] for s in lobby["players"]) == sorted(x.player for x in clients)
        codes.add(m["race"])
    assert len(codes) == 1
    return codes.pop()


async def test_a_quick_race_from_queue_to_rated_result(servers):
    server = servers.start(env=QUICK)
    ann, bob = await connect(server.ws_url, "ann"), await connect(server.ws_url, "bob")
    try:
        q = await ann.request({"t": "queue", "game": "quatorze"})
        assert q["t"] == "queued" and q["game"] == "quatorze" and q["rating"] == 1500
        assert (await bob.request({"t": "queue", "game": "quatorze"}))["t"] == "queued"
        code = await matched_race([ann, bob], "quatorze")
        # Nobody may join it: it is full, and its players picked nobody.
        cat = await connect(server.ws_url, "cat")
        assert (await cat.request({"t": "join", "race": code}))["code"] == "race_full"
        await cat.close()
        # It starts by itself: the usual start and state.
        states = {}
        for c in (ann, bob):
            await c.next("start", race=code, timeout=10)
            states[c.player] = await c.next("state", race=code)
        # ann resigns first, then bob: equal scores, ann's time lower.
        st = states[ann.player]
        r1 = await ann.request({"t": "resign", "gid": st["gid"]})
        assert r1["t"] == "state" and r1["finished"]
        r2 = await bob.request({"t": "resign", "gid": states[bob.player]["gid"]})
        assert r2["t"] == "state" and r2["finished"]
        results = [await c.next("result", race=code) for c in (ann, bob)]
        assert results[0] == results[1]
        result = results[0]
        order = [s["player"] for s in result["standings"]]
        ranks = [s["rank"] for s in result["standings"]]
        # Both 0 points; ann resigned first, so her time is lower: she ranks first.
        assert order == [ann.player, bob.player] and ranks == [1, 2]
        model = PlackettLuce()
        [[a], [b]] = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])
        assert result["rating"] == {
            ann.player: {"before": 1500, "after": shown(a.mu)},
            bob.player: {"before": 1500, "after": shown(b.mu)},
        }
        assert shown(a.mu) > 1500 > shown(b.mu)
        board = await ann.request({"t": "ratings", "game": "quatorze"})
        assert board["t"] == "ratings" and board["total"] == 2
        assert [(e["rank"], e["player"], e["rating"], e["games"], e["provisional"])
                for e in board["entries"]] == [
            (1, ann.player, shown(a.mu), 1, True),
            (2, bob.player, shown(b.mu), 1, True),
        ]  # fmt: skip
        assert board["me"]["player"] == ann.player
        stats = await bob.request({"t": "stats"})
        mine = stats["ratings"]["quatorze"]
        assert mine["rating"] == shown(b.mu) and mine["games"] == 1 and mine["provisional"]
        assert [(h["race"], h["rank"], h["seats"], h["before"], h["after"])
                for h in mine["history"]] == [(code, 2, 2, 1500, shown(b.mu))]  # fmt: skip
        # The same board on the web, as JSON and as a page.
        with urllib.request.urlopen(f"{server.http_url}/ratings/quatorze.json") as r:
            page = json.loads(r.read())
        assert [e["player"] for e in page["entries"]] == [ann.player, bob.player]
        with urllib.request.urlopen(f"{server.http_url}/ratings/quatorze") as r:
            html = r.read().decode()
        assert "ann" in html and str(shown(a.mu)) in html
    finally:
        await ann.close()
        await bob.close()


async def test_two_instances_share_one_queue(servers):
    one, two = servers.start(env=QUICK), servers.start(env=QUICK)
    ann, bob = await connect(one.ws_url, "ann"), await connect(two.ws_url, "bob")
    try:
        assert (await ann.request({"t": "queue", "game": "doublets"}))["t"] == "queued"
        assert (await bob.request({"t": "queue", "game": "doublets"}))["t"] == "queued"
        code = await matched_race([ann, bob], "doublets")
        for c in (ann, bob):
            await c.next("start", race=code, timeout=10)
    finally:
        await ann.close()
        await bob.close()


async def test_unqueue_and_one_queue_per_player(servers):
    server = servers.start(env=QUICK)
    ann, bob = await connect(server.ws_url, "ann"), await connect(server.ws_url, "bob")
    try:
        first = await ann.request({"t": "queue", "game": "quatorze"})
        again = await ann.request({"t": "queue", "game": "quatorze"})
        assert again["since_ms"] == first["since_ms"]  # the same entry, not a second one
        # Another game replaces the entry: ann now waits for hopscotch only.
        assert (await ann.request({"t": "queue", "game": "hopscotch"}))["game"] == "hopscotch"
        assert (await bob.request({"t": "queue", "game": "quatorze"}))["t"] == "queued"
        assert not [m for m in await ann.quiet(1.0) if m["t"] == "matched"]
        assert (await bob.request({"t": "unqueue"}))["t"] == "unqueued"
        assert (await ann.request({"t": "unqueue"}))["t"] == "unqueued"
        assert (await ann.request({"t": "unqueue"}))["t"] == "unqueued"  # not waiting: fine
        assert (await ann.request({"t": "queue", "game": "nope"}))["code"] == "bad_request"
    finally:
        await ann.close()
        await bob.close()


async def test_no_queue_while_racing(servers):
    server = servers.start(env=QUICK)
    code, seats, _states = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    try:
        ann = seats[0].client
        refused = await ann.request({"t": "queue", "game": "quatorze"})
        assert refused["t"] == "error" and refused["code"] == "race_started"
        assert code in refused["msg"]
    finally:
        for s in seats:
            await s.client.close()


async def test_a_lone_player_is_offered_a_bot(servers):
    server = servers.start(env={**QUICK, "SOLITAIRE_QUICK_BOT_AFTER_S": "1",
                                "SOLITAIRE_BOT_THINK_SCALE": "0.01"})  # fmt: skip
    ann = await connect(server.ws_url, "ann")
    try:
        q = await ann.request({"t": "queue", "game": "bakers_game"})
        offer = await ann.next("queued", timeout=10)
        assert offer["bot"] == "medium" and offer["since_ms"] == q["since_ms"]
        m = await ann.next("matched", timeout=10)
        lobby = await ann.take(lambda x: x.get("t") == "lobby" and len(x["players"]) == 2)
        assert lobby["race"] == m["race"]
        await ann.next("start", race=m["race"], timeout=10)
        st = await ann.next("state", race=m["race"])
        await ann.request({"t": "resign", "gid": st["gid"]})
        result = await ann.next("result", race=m["race"], timeout=60)
        assert "rating" not in result  # a bot race is unrated
    finally:
        await ann.close()


async def test_rated_create_and_unrated_create(servers):
    server = servers.start(env=QUICK)
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "hopscotch", 3, rated=True)
    try:
        for s in seats:
            await s.client.request({"t": "resign", "gid": s.gid})
        result = await seats[0].client.next("result")
        assert set(result["rating"]) == {s.client.player for s in seats}
        assert engine.GAMES
    finally:
        for s in seats:
            await s.client.close()
    _code, seats, _ = await seat_race(server.ws_url, ["cat", "dan"], "hopscotch", 3)
    try:
        for s in seats:
            await s.client.request({"t": "resign", "gid": s.gid})
        assert "rating" not in await seats[0].client.next("result")
        bad = await seats[0].client.request(
            {"t": "create", "game": "hopscotch", "rated": True, "bots": 1}
        )
        assert bad["code"] == "bad_request"
    finally:
        for s in seats:
            await s.client.close()


async def test_a_disconnect_past_the_grace_period_leaves_the_queue(
    servers, redis_url, redis_namespace
):
    import asyncio

    import redis.asyncio as aioredis

    from server.store.keys import Keys

    server = servers.start(env={**QUICK, "SOLITAIRE_LOBBY_LEAVE_GRACE_S": "1"})
    r = aioredis.Redis.from_url(redis_url)
    entries = Keys(redis_namespace).queue_entries()
    try:
        ann = await connect(server.ws_url, "ann")
        assert (await ann.request({"t": "queue", "game": "quatorze"}))["t"] == "queued"
        assert await r.hlen(entries) == 1
        await ann.close()
        for _ in range(100):
            if await r.hlen(entries) == 0:
                break
            await asyncio.sleep(0.1)
        assert await r.hlen(entries) == 0
        # Back within the grace period, a player keeps their place.
        bob = await connect(server.ws_url, "bob")
        assert (await bob.request({"t": "queue", "game": "doublets"}))["t"] == "queued"
        await bob.close()
        again = await Client.connect(server.ws_url)
        assert (await again.hello("bob", token=bob.token))["t"] == "welcome"
        await asyncio.sleep(2.0)
        assert await r.hget(entries, bob.player) is not None
        await again.close()
    finally:
        await r.aclose()


async def test_the_leaderboard_page_links_to_the_ratings(servers):
    server = servers.start(env=QUICK)
    with urllib.request.urlopen(f"{server.http_url}/leaderboard/hopscotch/all") as r:
        html = r.read().decode()
    assert 'href="/ratings/hopscotch"' in html
    with urllib.request.urlopen(f"{server.http_url}/ratings/hopscotch") as r:
        page = r.read().decode()
    assert "No one has a rating in this game yet" in page
    assert 'href="/ratings/quatorze"' in page


async def test_the_ratings_board_shares_ranks_and_centres_on_the_asker(
    servers, redis_url, redis_namespace
):
    """30 rated players written to the store as a rated close writes them (ratings 1000 to
    1580 by 20, two of them tied at 1300), and the asker among them at 1300: the top page,
    a page around the asker, shared ranks, and the asker's own row."""
    import redis.asyncio as aioredis

    from server.store.keys import Keys

    server = servers.start(env=QUICK)
    keys = Keys(redis_namespace)
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    me = await connect(server.ws_url, "me")
    try:
        rows = {f"p{i:02d}": 1000 + 20 * i for i in range(30)}  # p15 is 1300
        rows[me.player] = 1300
        for player, shown in rows.items():
            mu = 25 + (shown - 1500) / 60
            await r.hset(keys.rating("doublets", player), mapping={
                "name": player[:6], "mu": repr(mu), "sigma": "3.0", "games": "12", "ver": "12",
            })  # fmt: skip
            await r.zadd(keys.rating_board("doublets"), {player: shown})
        top = await me.request({"t": "ratings", "game": "doublets", "limit": 3})
        assert top["total"] == 31
        assert [(e["rank"], e["rating"]) for e in top["entries"]] == [
            (1, 1580), (2, 1560), (3, 1540),
        ]  # fmt: skip
        assert not any(e["provisional"] for e in top["entries"])
        # 14 players are above 1300: both at 1300 share rank 15.
        assert top["me"]["rank"] == 15 and top["me"]["rating"] == 1300
        around = await me.request(
            {"t": "ratings", "game": "doublets", "limit": 5, "around_me": True}
        )
        ratings = [e["rating"] for e in around["entries"]]
        assert me.player in [e["player"] for e in around["entries"]]
        assert len(ratings) == 5 and ratings == sorted(ratings, reverse=True)
        assert 1300 in ratings and ratings[0] <= 1340 and ratings[-1] >= 1260
        ranks = {e["player"]: e["rank"] for e in around["entries"]}
        assert ranks[me.player] == 15
        with urllib.request.urlopen(f"{server.http_url}/ratings/doublets.json?limit=2") as resp:
            page = json.loads(resp.read())
        assert [e["rating"] for e in page["entries"]] == [1580, 1560] and "me" not in page
    finally:
        await me.close()
        await r.aclose()


async def test_creating_or_joining_a_race_leaves_the_queue(servers, redis_url, redis_namespace):
    import redis.asyncio as aioredis

    from server.store.keys import Keys

    server = servers.start(env=QUICK)
    r = aioredis.Redis.from_url(redis_url)
    entries = Keys(redis_namespace).queue_entries()
    ann, bob = await connect(server.ws_url, "ann"), await connect(server.ws_url, "bob")
    try:
        # Each alone in a game of its own: nobody is matched meanwhile.
        assert (await ann.request({"t": "queue", "game": "bakers_game"}))["t"] == "queued"
        assert (await bob.request({"t": "queue", "game": "doublets"}))["game"] == "doublets"
        assert await r.hlen(entries) == 2
        created = await ann.request({"t": "create", "game": "quatorze"})
        assert await r.hget(entries, ann.player) is None
        await bob.request({"t": "join", "race": created["race"]})
        assert await r.hlen(entries) == 0
    finally:
        await ann.close()
        await bob.close()
        await r.aclose()
