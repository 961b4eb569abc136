"""A rated race's rating update happens exactly once, even when the server is killed
(SIGKILL) while the race closes: the update is written in the same store write as the
close, so the store never holds a closed race without its update, nor an update without
the close; after a restart the race closes (once) and the ratings change once.

Each round kills the server at another moment after the last seat's resignation is sent
(before it is read, while the close is decided, around its write), then looks at the store
itself, restarts, finishes what is left and looks again."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis
from helpers import seat_race
from openskill.models import PlackettLuce
from support.ws_client import Client

from server.store.keys import Keys

DELAYS_S = [0.0, 0.001, 0.003, 0.006, 0.01, 0.02, 0.05]


async def rating_state(r: aioredis.Redis, keys: Keys, code: str, players: list[str]) -> dict:
    status = await r.hget(keys.race_meta(code), "status")
    out = {"status": status.decode() if status else None, "games": {}, "history": {}, "mu": {}}
    for pl in players:
        games = await r.hget(keys.rating("hopscotch", pl), "games")
        mu = await r.hget(keys.rating("hopscotch", pl), "mu")
        out["games"][pl] = int(games) if games else 0
        out["mu"][pl] = float(mu) if mu else None
        out["history"][pl] = len(await r.lrange(keys.rating_history("hopscotch", pl), 0, -1))
    return out


@pytest.mark.parametrize("delay", DELAYS_S)
async def test_one_rating_update_per_race_across_a_sigkill(servers, redis_url, redis_namespace,
                                                           delay):  # fmt: skip
    server = servers.start()
    keys = Keys(redis_namespace)
    r = aioredis.Redis.from_url(redis_url)
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "hopscotch", 5, rated=True)
    ann, bob = seats
    players = [ann.client.player, bob.client.player]
    try:
        assert (await ann.client.request({"t": "resign", "gid": ann.gid}))["finished"]
        # Apart by more than a millisecond: seats ending at the same score, in the same
        # millisecond and after as many moves tie (the expected ratings below rank ann first).
        await asyncio.sleep(0.005)
        await bob.client.send({"t": "resign", "gid": bob.gid, "id": 1})
        await asyncio.sleep(delay)
        server.kill()
        seen = await rating_state(r, keys, code, players)
        # Never one without the other: the close and the update are one write.
        if seen["status"] == "done":
            assert seen["games"] == {pl: 1 for pl in players}
            assert seen["history"] == {pl: 1 for pl in players}
        else:
            assert seen["status"] == "running"
            assert seen["games"] == {pl: 0 for pl in players}
            assert seen["history"] == {pl: 0 for pl in players}
        for s in seats:
            await s.client.close()
        server.start()
        # bob comes back and resigns if his resignation was lost with the server; the
        # restart's check of running races closes a race whose seats had all finished.
        again = await Client.connect(server.ws_url)
        assert (await again.hello("bob", token=bob.client.token))["t"] == "welcome"
        await again.request({"t": "resign", "gid": bob.gid})
        for _ in range(200):
            after = await rating_state(r, keys, code, players)
            if after["status"] == "done":
                break
            await asyncio.sleep(0.05)
        await again.close()
        assert after["status"] == "done"
        assert after["games"] == {pl: 1 for pl in players}
        assert after["history"] == {pl: 1 for pl in players}
        # Exactly one update: the stored mu is one Plackett-Luce step from a new rating
        # (ann resigned first: first), as openskill computes it here.
        model = PlackettLuce()
        [[a], [b]] = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])
        assert after["mu"][players[0]] == pytest.approx(a.mu)
        assert after["mu"][players[1]] == pytest.approx(b.mu)
    finally:
        await r.aclose()
