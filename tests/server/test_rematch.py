"""Rematches over real WebSockets and real server processes: a new race like a finished
one (its game, seats, time limit and bots, a new deal), offered to every seat of the
finished race, decided once however many ask, and refused with nothing changed to anyone
but its players, before it is over, or for a race that does not exist."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import redis.asyncio as aioredis
from support.server_proc import ServerFactory, ServerProcess
from support.ws_client import Client

from server.store.keys import Keys

FAST = {"SOLITAIRE_BOT_THINK_SCALE": "0.01"}


@asynccontextmanager
async def players(urls: list[str], *names: str) -> AsyncIterator[list[Client]]:
    """One greeted client per name, round-robin over `urls`."""
    clients = []
    try:
        for i, name in enumerate(names):
            c = await Client.connect(urls[i % len(urls)])
            assert (await c.hello(name))["t"] == "welcome"
            clients.append(c)
        yield clients
    finally:
        for c in clients:
            await c.close()


async def race_to_the_end(host: Client, others: list[Client], **create: Any) -> str:
    """`host` creates a race (settings `create`), the others join, it starts, every person
    resigns (bots play to their end); its code, once everyone has its result."""
    created = await host.request({"t": "create", **create})
    assert created["t"] == "created", created
    code = created["race"]
    for c in others:
        assert (await c.request({"t": "join", "race": code}))["t"] == "lobby"
    return await play_to_the_end(host, others, code)


async def play_to_the_end(host: Client, others: list[Client], code: str) -> str:
    """`host` starts race `code`, where `others` are seated, and everyone resigns."""
    assert (await host.request({"t": "start", "race": code}))["t"] == "start"
    for c in (host, *others):
        gid = f"r.{code}.{c.player}"
        await c.next("state", gid=gid)
        assert (await c.request({"t": "resign", "gid": gid}))["finished"]
    for c in (host, *others):
        await c.next("result", race=code, timeout=60)
    return code


async def race_meta(redis_url: str, ns: str, code: str) -> dict[str, str]:
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return await r.hgetall(Keys(ns).race_meta(code))
    finally:
        await r.aclose()


async def races_stored(redis_url: str, ns: str) -> list[str]:
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return sorted([k async for k in r.scan_iter(f"{{{ns}:race:*}}:meta")])
    finally:
        await r.aclose()


async def test_a_rematch_is_the_same_race_on_a_new_deal_and_every_seat_is_invited(
    servers: ServerFactory, redis_url: str, redis_namespace: str
) -> None:
    # ann and bob are on different server processes: the invitation reaches bob's.
    a, b = servers.start(env=FAST), servers.start(env=FAST)
    async with players([a.ws_url, b.ws_url], "ann", "bob") as (ann, bob):
        settings = {"game": "quatorze", "max_players": 4, "time_limit_s": 600,
                    "bots": 1, "bot_strength": "easy"}  # fmt: skip
        old = await race_to_the_end(ann, [bob], **settings)
        old_meta = await race_meta(redis_url, redis_namespace, old)
        old_bot = next(s for s in (await ann.request({"t": "join", "race": old}))["players"]
                       if s["player"].startswith("bot-"))  # fmt: skip
        # bob asks: he is the new race's host, and it is made as `create` would make it.
        created = await bob.request({"t": "rematch", "race": old.lower()})
        assert created["t"] == "created", created
        new = created["race"]
        assert new != old and len(new) == 12
        assert (created["game"], created["max_players"], created["time_limit_s"]) == (
            "quatorze", 4, 600,
        )  # fmt: skip
        lobby = await bob.next("lobby", race=new)
        assert lobby["host"] == bob.player and lobby["game"] == "quatorze"
        assert lobby["players"][0] == {"player": bob.player, "name": "bob"}
        bot = lobby["players"][1]
        assert len(lobby["players"]) == 2
        # A bot seat again, seated as `create` seats one: a new bot player, as strong.
        assert bot["player"].startswith("bot-") and bot["name"].endswith(" (bot)")
        assert bot["player"] != old_bot["player"]
        r = aioredis.Redis.from_url(redis_url, decode_responses=True)
        try:
            assert await r.hgetall(Keys(redis_namespace).race_bots(new)) == {bot["player"]: "easy"}
        finally:
            await r.aclose()
        # A new deal; the finished race now names its rematch.
        new_meta = await race_meta(redis_url, redis_namespace, new)
        assert new_meta["seed"] != old_meta["seed"]
        assert (await race_meta(redis_url, redis_namespace, old))["rematch"] == new
        # ann, on the other server, is told who asked and where to go, and joins with `join`.
        offer = await ann.next("rematch")
        assert offer == {"t": "rematch", "race": old, "next": new, "player": bob.player,
                         "name": "bob"}  # fmt: skip
        joined = await ann.request({"t": "join", "race": offer["next"]})
        assert [s["player"] for s in joined["players"]] == [bob.player, bot["player"], ann.player]
        assert len((await bob.next("lobby", race=new))["players"]) == 3
        # bob's own connection got its answer, not the invitation.
        assert not [m for m in await bob.quiet(0.3) if m.get("t") == "rematch"]
        assert f"rematch of race {old} made by player {bob.player}" in b.log_text()


async def test_a_rematch_of_a_rematch_and_two_players_asking_at_once_get_one_race(
    servers: ServerFactory, redis_url: str, redis_namespace: str
) -> None:
    a, b = servers.start(), servers.start()
    async with players([a.ws_url, b.ws_url], "ann", "bob") as (ann, bob):
        code = await race_to_the_end(ann, [bob], game="doublets", max_players=2)
        codes = [code]
        for _ in range(3):
            # Both ask at the same moment, each on their server: one race is made, by one
            # of them (its host); the other is seated in it.
            got = await asyncio.gather(
                ann.request({"t": "rematch", "race": code}),
                bob.request({"t": "rematch", "race": code}),
            )
            assert sorted(g["t"] for g in got) == ["created", "lobby"], got
            new = got[0]["race"]
            assert got[1]["race"] == new and new not in codes
            host = ann if got[0]["t"] == "created" else bob
            guest = bob if host is ann else ann
            meta = await race_meta(redis_url, redis_namespace, new)
            assert meta["host"] == host.player and meta["max_players"] == "2"
            assert (await race_meta(redis_url, redis_namespace, code))["rematch"] == new
            # Asking again changes nothing: the same race, where one is seated already.
            again = await host.request({"t": "rematch", "race": code})
            assert again["t"] == "lobby" and again["race"] == new
            assert [s["player"] for s in again["players"]] == [host.player, guest.player]
            # The rematch is a race like any other, and has a rematch of its own in turn.
            code = await play_to_the_end(host, [guest], new)
            codes.append(code)
        made = [line for s in (a, b) for line in s.log_text().splitlines()
                if "rematch of race" in line and "made by" in line]  # fmt: skip
        assert len(made) == 3, made
        assert len(await races_stored(redis_url, redis_namespace)) == 4


async def test_refusals_change_nothing(
    server: ServerProcess, redis_url: str, redis_namespace: str
) -> None:
    async with players([server.ws_url], "ann", "bob", "carol") as (ann, bob, carol):
        created = await ann.request({"t": "create", "game": "quatorze"})
        code = created["race"]
        await bob.request({"t": "join", "race": code})

        async def refused(who: Client, race: Any, code_: str) -> None:
            before = await races_stored(redis_url, redis_namespace)
            reply = await who.request({"t": "rematch", "race": race})
            assert reply["t"] == "error" and reply["code"] == code_, reply
            assert reply["msg"]
            assert await races_stored(redis_url, redis_namespace) == before
            assert not [m for c in (ann, bob, carol) for m in c.inbox if m["t"] == "rematch"]

        # Not over: in its lobby, then running. An outsider learns nothing of a lobby.
        await refused(ann, code, "not_over")
        await refused(carol, code, "not_found")
        await play_to_the_end(ann, [bob], code)  # carol never joined
        ver = (await race_meta(redis_url, redis_namespace, code))["ver"]
        # Over, but carol has no seat in it (she may look at its result, not ask for more).
        await refused(carol, code, "not_found")
        # Races that do not exist, and names that are no race code (a daily's game id).
        for wrong in ("ZZZZZZZZZZZZ", code[:6], "2026-03-01", "not a code"):
            await refused(ann, wrong, "not_found")
        # Longer than any race code: a daily's game id, say.
        for wrong in ("Z" * 17, f"d.2026-03-01.quatorze.{ann.player}", 123456, None):
            await refused(ann, wrong, "bad_request")
        meta = await race_meta(redis_url, redis_namespace, code)
        assert "rematch" not in meta and meta["ver"] == ver
        # A running race is not over either.
        second = await ann.request({"t": "create", "game": "quatorze"})
        assert (await ann.request({"t": "start", "race": second["race"]}))["t"] == "start"
        await refused(ann, second["race"], "not_over")
