"""Players who leave a lobby, over real WebSockets: a player with no connection left for
`lobby_leave_grace_s` leaves the lobbies they wait in, and a leaving host hands the race to
the next seated person; one who comes back in time, on any instance, keeps their seat."""

from __future__ import annotations

import asyncio
import re

import redis.asyncio as aioredis
from support.server_proc import ServerProcess
from support.ws_client import Client

from server.domain.ids import race_gid
from server.store.keys import Keys

GRACE = {"SOLITAIRE_LOBBY_LEAVE_GRACE_S": "0.5"}


async def wait_for_log(server: ServerProcess, pattern: str, timeout: float = 15) -> str:
    """The first log line matching `pattern`, once the server has written it."""
    regex = re.compile(pattern)
    async with asyncio.timeout(timeout):
        while True:
            for line in server.log_text().splitlines():
                if regex.search(line):
                    return line
            await asyncio.sleep(0.05)


async def players(url: str, *names: str) -> list[Client]:
    clients = []
    for name in names:
        c = await Client.connect(url)
        assert (await c.hello(name))["t"] == "welcome"
        clients.append(c)
    return clients


async def test_a_leaving_host_hands_the_race_to_the_next_seated_person(
    servers, redis_url, redis_namespace
):
    server = servers.start(env=GRACE)
    host, bob, cat = await players(server.ws_url, "ann", "bob", "cat")
    r = aioredis.Redis.from_url(redis_url)
    try:
        created = await host.request({"t": "create", "game": "quatorze", "bots": 1})
        code = created["race"]
        bot = (await host.next("lobby"))["players"][1]["player"]
        assert bot.startswith("bot-")
        for c in (bob, cat):
            assert (await c.request({"t": "join", "race": code}))["t"] == "lobby"
        await host.take(lambda m: m.get("t") == "lobby" and len(m["players"]) == 4)
        await bob.take(lambda m: m.get("t") == "lobby" and len(m["players"]) == 4)
        # cat closes her only connection: after the grace she is out, the host unchanged.
        await cat.close()
        for c in (host, bob):
            lobby = await c.take(lambda m: m.get("t") == "lobby" and len(m["players"]) == 3)
            assert lobby["host"] == host.player
            assert [p["player"] for p in lobby["players"]] == [host.player, bot, bob.player]
        assert f"race {code}: player {cat.player} left the lobby" in server.log_text()
        # Her seat and its game are gone from the store.
        keys = Keys(redis_namespace)
        game = keys.game(race_gid(code, cat.player))
        assert game is not None and not await r.exists(game.meta)
        assert len(await r.lrange(keys.race_seats(code), 0, -1)) == 3
        # The host goes: the race passes to bob, the next seated person (not the bot).
        await host.close()
        lobby = await bob.next("lobby", race=code)
        assert lobby["host"] == bob.player
        assert [p["player"] for p in lobby["players"]] == [bot, bob.player]
        assert f"host {host.player} left the lobby; {bob.player} is the host now" in (
            server.log_text()
        )
        # bob may start it now.
        start = await bob.request({"t": "start", "race": code})
        assert start["t"] == "start"
        assert (await bob.next("state", race=code))["n"] == 0
        # ann comes back too late: she is no longer seated, and the race has started.
        ann = await Client.connect(server.ws_url)
        welcome = await ann.hello("ann", token=host.token)
        assert welcome["active"] == []
        assert (await ann.request({"t": "join", "race": code}))["code"] == "race_started"
        await ann.close()
    finally:
        for c in (host, bob, cat):
            await c.close()
        await r.aclose()


async def test_a_host_alone_keeps_the_lobby_to_come_back_to(servers):
    server = servers.start(env=GRACE)
    (host,) = await players(server.ws_url, "ann")
    try:
        code = (await host.request({"t": "create", "game": "doublets"}))["race"]
        await host.close()
        await wait_for_log(server, rf"race {code}: host \S+ left, no other player")
        back = await Client.connect(server.ws_url)
        await back.hello("ann", token=host.token)
        lobby = await back.next("lobby", race=code)
        assert lobby["host"] == host.player
        assert [p["player"] for p in lobby["players"]] == [host.player]
        assert (await back.request({"t": "start", "race": code}))["t"] == "start"
        await back.close()
    finally:
        await host.close()


async def test_a_host_back_within_the_grace_on_another_instance_keeps_the_race(servers):
    grace = {"SOLITAIRE_LOBBY_LEAVE_GRACE_S": "3"}
    first, second = servers.start(env=grace), servers.start(env=grace)
    host, bob = await players(first.ws_url, "ann", "bob")
    back = None
    try:
        code = (await host.request({"t": "create", "game": "doublets"}))["race"]
        assert (await bob.request({"t": "join", "race": code}))["t"] == "lobby"
        await host.take(lambda m: m.get("t") == "lobby" and len(m["players"]) == 2)
        # The host's connection to the first instance drops; they reconnect to the second,
        # as through a balancer, while the lobby waits for them.
        await host.close()
        back = await Client.connect(second.ws_url)
        await back.hello("ann", token=host.token)
        assert (await back.next("lobby", race=code))["host"] == host.player
        await wait_for_log(first, rf"player {host.player} is back: they stay in {code}")
        assert [m for m in await bob.quiet(0.3) if m.get("t") == "lobby"] == []
        assert (await back.request({"t": "start", "race": code}))["t"] == "start"
        assert (await bob.next("start", race=code))["race"] == code
    finally:
        for c in (host, bob, back):
            if c is not None:
                await c.close()
