"""Players' names are unique (case ignored), and an address may make only so many new
players a day (server/edge/admission.py): on a real server, Redis and WebSockets."""

from __future__ import annotations

import re
import urllib.request

import redis as sync_redis
from support.server_proc import ServerFactory, ServerProcess
from support.ws_client import Client

from server.store.keys import Keys
from server.store.player_repo import hash_token


def metric(server: ServerProcess, name: str) -> float:
    """One sample of /metrics (0 when the series is absent)."""
    with urllib.request.urlopen(server.http_url + "/metrics", timeout=5) as reply:
        text = reply.read().decode()
    match = re.search(rf"^{re.escape(name)} (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


async def name_of(client: Client, player: str) -> str:
    stats = await client.request({"t": "stats", "player": player})
    assert stats["t"] == "stats", stats
    return stats["name"]


async def test_a_name_taken_in_any_case_is_refused_and_the_hello_may_be_said_again(
    server: ServerProcess,
) -> None:
    async with Client.connect(server.ws_url) as alice, Client.connect(server.ws_url) as other:
        assert (await alice.hello("Alice"))["t"] == "welcome"
        for name in ("alice", "ALICE", " Alice ", "Ａｌｉｃｅ"):  # the last in full-width forms
            refused = await other.hello(name)
            assert refused["t"] == "error" and refused["code"] == "name_taken", (name, refused)
            assert repr(name) in refused["msg"], refused
        # The connection stays open for another hello, under a free name.
        welcome = await other.hello("Alicia")
        assert welcome["t"] == "welcome" and welcome["name"] == "Alicia"
        assert await name_of(alice, alice.player) == "Alice"
    assert metric(server, "solitaire_players_created_total") == 2
    assert metric(server, 'solitaire_players_refused_total{reason="name_taken"}') == 4


async def test_renaming_frees_the_old_name_and_cannot_take_anothers(server: ServerProcess) -> None:
    async with Client.connect(server.ws_url) as ann, Client.connect(server.ws_url) as bob:
        await ann.hello("ann")
        await bob.hello("bob")
        token = ann.token
    async with Client.connect(server.ws_url) as ann2, Client.connect(server.ws_url) as new:
        # ann comes back as "Annie": "ann" is free again, "annie" is hers.
        assert (await ann2.hello("Annie", token=token))["name"] == "Annie"
        assert (await new.hello("annie"))["code"] == "name_taken"
        assert (await new.hello("ANN"))["t"] == "welcome"
    async with Client.connect(server.ws_url) as bob2:
        # bob may not rename to a held name; he stays bob, and may change its case.
        refused = await bob2.hello("Annie", token=bob.token)
        assert refused["t"] == "error" and refused["code"] == "name_taken"
        assert (await bob2.hello("BOB", token=bob.token))["name"] == "BOB"
        assert await name_of(bob2, bob.player) == "BOB"
    async with Client.connect(server.ws_url) as anyone:
        assert (await anyone.hello("Bob"))["code"] == "name_taken"


async def test_players_who_shared_a_name_before_reservations_both_keep_it(
    server: ServerProcess, redis_url: str, redis_namespace: str
) -> None:
    """Two players of old data named "Bob" (stored as before names were reserved): both
    play on under it, and nobody else can take it."""
    keys = Keys(redis_namespace)
    r = sync_redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        old = (("0000000000000b01", "old-token-1"), ("0000000000000b02", "old-token-2"))
        for player, token in old:
            r.hset(keys.player_meta(player), mapping={"name": "Bob", "created_ms": 1})
            r.set(keys.token(hash_token(token)), player)
    finally:
        r.close()
    async with Client.connect(server.ws_url) as first, Client.connect(server.ws_url) as second:
        assert (await first.hello("Bob", token="old-token-1"))["player"] == "0000000000000b01"
        assert (await second.hello("Bob", token="old-token-2"))["player"] == "0000000000000b02"
    async with Client.connect(server.ws_url) as newcomer:
        assert (await newcomer.hello("bob"))["code"] == "name_taken"
    # The one who renames gives up nothing the other holds.
    async with Client.connect(server.ws_url) as first, Client.connect(server.ws_url) as other:
        assert (await first.hello("Robert", token="old-token-1"))["name"] == "Robert"
        assert (await other.hello("BOB"))["code"] == "name_taken"


async def test_names_ending_in_bot_are_the_bots_and_bots_take_no_names(
    server: ServerProcess,
) -> None:
    async with Client.connect(server.ws_url) as host, Client.connect(server.ws_url) as other:
        assert (await host.hello("Ada (bot)"))["code"] == "name_taken"
        await host.hello("host")
        names = []
        for _ in range(2):  # two races seat bots of the same names
            created = await host.request({"t": "create", "game": "quatorze", "bots": 2})
            assert created["t"] == "created", created
            lobby = await host.next("lobby", race=created["race"])
            names.append(sorted(s["name"] for s in lobby["players"] if s["player"] != host.player))
        assert names[0] == names[1] and all(n.endswith(" (bot)") for n in names[0])
        # A bot's name minus its suffix is a person's to take.
        assert (await other.hello(names[0][0].removesuffix(" (bot)")))["t"] == "welcome"


async def test_an_address_makes_at_most_its_limit_of_new_players_a_day(
    servers: ServerFactory,
) -> None:
    server = servers.start(env={"SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_DAY": "2"})
    tokens = []
    for name in ("one", "two"):
        async with Client.connect(server.ws_url) as c:
            assert (await c.hello(name))["t"] == "welcome"
            tokens.append(c.token)
    async with Client.connect(server.ws_url) as third:
        refused = await third.hello("three")
        assert refused["t"] == "error" and refused["code"] == "rate_limited", refused
        assert "today (at most 2)" in refused["msg"], refused
        # A refused name does not use up the allowance either way; players with a token
        # come back as often as they like.
        assert (await third.hello("one", token=tokens[0]))["t"] == "welcome"
    async with Client.connect(server.ws_url) as again:
        assert (await again.hello("two", token=tokens[1]))["t"] == "welcome"
    assert metric(server, "solitaire_players_created_total") == 2
    assert metric(server, 'solitaire_players_refused_total{reason="day_limit"}') == 1


async def test_a_name_refused_as_taken_does_not_count_against_the_address(
    servers: ServerFactory,
) -> None:
    server = servers.start(env={"SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_DAY": "2"})
    async with Client.connect(server.ws_url) as c, Client.connect(server.ws_url) as d:
        await c.hello("first")
        for _ in range(3):
            assert (await d.hello("FIRST"))["code"] == "name_taken"
        assert (await d.hello("second"))["t"] == "welcome"
