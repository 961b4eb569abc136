"""A rated race's rating update happens exactly once on a Redis Cluster too, where the
ratings' keys live in another slot than the race's: the close stores the ratings write in
the race's slot (its outbox) and the server applies it after. Here the server is SIGKILLed
right between the two (its test hook SOLITAIRE_TEST_KILL_BEFORE_RATINGS), the store is
looked at, and the restarted server applies the update once; an outbox put back as if a
crash came after the update but before its deletion changes nothing the next time."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from openskill.models import PlackettLuce
from support.server_proc import ServerProcess
from support.ws_client import Client

from server.store.keys import Keys

GAME = "hopscotch"
HOOK = "SOLITAIRE_TEST_KILL_BEFORE_RATINGS"


@pytest.fixture
def namespace() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def store(redis_cluster) -> Iterator[redis.RedisCluster]:
    client = redis.RedisCluster.from_url(redis_cluster.url, decode_responses=True)
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def server(redis_cluster, namespace: str, tmp_path: Path) -> Iterator[ServerProcess]:
    proc = ServerProcess(
        redis_cluster.url,
        namespace,
        tmp_path / "server",
        env={"SOLITAIRE_REDIS_CLUSTER": "1"},
    )
    try:
        yield proc
    finally:
        proc.stop()


def ratings_seen(store: redis.RedisCluster, keys: Keys, players: list[str]) -> dict:
    out: dict = {}
    for pl in players:
        rating = store.hgetall(keys.rating(GAME, pl))
        out[pl] = {
            "games": int(rating["games"]) if rating else 0,
            "mu": float(rating["mu"]) if rating else None,
            "history": store.llen(keys.rating_history(GAME, pl)),
        }
    return out


def wait_for(predicate, timeout_s: float = 30.0) -> None:
    end = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.05)


async def rated_race_both_resign(url: str) -> tuple[str, list[Client]]:
    """ann and bob in a rated race; ann resigns, then bob (whose resignation closes it)."""
    ann, bob = await Client.connect(url), await Client.connect(url)
    assert (await ann.hello("ann"))["t"] == "welcome"
    assert (await bob.hello("bob"))["t"] == "welcome"
    created = await ann.request({"t": "create", "game": GAME, "seed": 5, "rated": True})
    assert created["t"] == "created", created
    code = created["race"]
    assert (await bob.request({"t": "join", "race": code}))["t"] == "lobby"
    await ann.take(lambda m: m.get("t") == "lobby" and len(m["players"]) == 2)
    assert (await ann.request({"t": "start", "race": code}))["t"] == "start"
    gids = {}
    for c in (ann, bob):
        gids[c] = (await c.next("state", race=code))["gid"]
    assert (await ann.request({"t": "resign", "gid": gids[ann]}))["finished"]
    # Apart by more than a millisecond: seats ending at the same score, in the same
    # millisecond and after as many moves tie (the expected ratings rank ann first).
    await asyncio.sleep(0.005)
    await bob.send({"t": "resign", "gid": gids[bob], "id": 1})
    return code, [ann, bob]


def expected_mu() -> tuple[float, float]:
    """The two seats' mu after one Plackett-Luce step from new ratings (the first to
    resign ranks first), as openskill computes it here."""
    model = PlackettLuce()
    [[a], [b]] = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])
    return a.mu, b.mu


async def test_rated_close_on_a_cluster_writes_the_ratings_and_drops_its_outbox(
    server: ServerProcess, store: redis.RedisCluster, namespace: str
) -> None:
    keys = Keys(namespace)
    server.start(timeout=60)
    code, clients = await rated_race_both_resign(server.ws_url)
    players = [c.player for c in clients]
    result = await clients[1].next("result", race=code)
    for c in clients:
        await c.close()
    mu = expected_mu()
    wait_for(lambda: ratings_seen(store, keys, players)[players[1]]["games"] == 1)
    assert ratings_seen(store, keys, players) == {
        pl: {"games": 1, "mu": pytest.approx(m), "history": 1}
        for pl, m in zip(players, mu, strict=True)
    }
    assert [s["player"] for s in result["standings"]] == players
    assert not store.exists(keys.race_rating_outbox(code))
    assert store.hget(keys.rating_applied(GAME, code), "race") == code
    # Its ratings written, the closed race has left the running index.
    assert store.zscore(keys.running_index(), code) is None


async def test_rating_update_once_on_a_cluster_across_a_kill_before_it(
    server: ServerProcess, store: redis.RedisCluster, namespace: str
) -> None:
    keys = Keys(namespace)
    server.env[HOOK] = "1"
    server.start(timeout=60)
    code, clients = await rated_race_both_resign(server.ws_url)
    players = [c.player for c in clients]
    proc = server.proc
    assert proc is not None
    await asyncio.to_thread(proc.wait, 30)  # the hook kills it after the close's write
    for c in clients:
        await c.close()
    assert proc.returncode == -9

    # The close is stored with its outbox, in the race's slot; no rating is written yet.
    assert store.hget(keys.race_meta(code), "status") == "done"
    outbox = store.hgetall(keys.race_rating_outbox(code))
    assert outbox
    assert store.get_node_from_key(keys.race_rating_outbox(code)).name == (
        store.get_node_from_key(keys.race_meta(code)).name
    )
    assert ratings_seen(store, keys, players) == {
        pl: {"games": 0, "mu": None, "history": 0} for pl in players
    }
    assert not store.exists(keys.rating_applied(GAME, code))

    # Restarted (without the hook), the server's check of the running races applies it.
    server.env.pop(HOOK)
    server.start(timeout=60)
    wait_for(lambda: not store.exists(keys.race_rating_outbox(code)))
    once = {
        pl: {"games": 1, "mu": pytest.approx(m), "history": 1}
        for pl, m in zip(players, expected_mu(), strict=True)
    }
    assert ratings_seen(store, keys, players) == once
    history = json.loads(store.lindex(keys.rating_history(GAME, players[0]), -1))
    assert history[0] == code
    assert store.hget(keys.rating_applied(GAME, code), "race") == code

    # As if a server died after the update but before deleting the outbox: the next
    # restart applies it again, and the race's marker makes that change nothing.
    store.hset(keys.race_rating_outbox(code), mapping=outbox)
    server.stop()
    server.start(timeout=60)
    wait_for(lambda: not store.exists(keys.race_rating_outbox(code)))
    assert ratings_seen(store, keys, players) == once
    assert "ratings were written already" in server.log_text()
