"""Today's deal is dealt to a player only once they confirm the ranked attempt: real
servers, Redis and WebSockets."""

from __future__ import annotations

import datetime as dt
import time
import urllib.request

import redis.asyncio as aioredis
from support.server_proc import ServerFactory
from support.ws_client import Client

from server.store.keys import Keys

GAME = "hopscotch"
STARTED = f'solitaire_daily_attempts_started_total{{game="{GAME}"}}'


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read().decode()


def metric(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def today_utc() -> dt.date:
    """Today's date, waiting out the last seconds of a day (a test must not straddle one)."""
    now = time.time()
    if now % 86_400 > 86_400 - 30:
        time.sleep(86_400 - now % 86_400 + 1)
    return dt.datetime.now(dt.UTC).date()


async def test_daily_without_confirm_says_where_the_player_stands_and_deals_nothing(
    servers: ServerFactory, redis: aioredis.Redis
) -> None:
    server = servers.start()
    day = today_utc().isoformat()
    day_end_ms = int(dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp() * 1000)
    day_end_ms += 86_400_000
    async with Client.connect(server.ws_url) as ann:
        await ann.hello("ann")
        for _ in range(2):  # asking twice deals nothing either
            status = await ann.request({"t": "daily", "game": GAME})
            assert status == {"t": "daily", "re": status["re"], "game": GAME, "date": day,
                              "status": "not_started", "ends_at_ms": day_end_ms}  # fmt: skip
        attempts = [k async for k in redis.scan_iter(match=f"{{{servers.namespace}:*:game:d.*")]
        assert attempts == []
        assert metric(get(server.http_url + "/metrics"), STARTED) == 0
        token = ann.token

    async with Client.connect(server.ws_url) as ann:
        welcome = await ann.hello("ann", token=token)
        assert welcome["active"] == []
        state = await ann.request({"t": "daily", "game": GAME, "confirm": True})
        assert state["t"] == "state" and state["kind"] == "daily" and state["n"] == 0
        status = await ann.request({"t": "daily", "game": GAME})
        assert status["t"] == "daily" and status["status"] == "in_progress"
        assert status["gid"] == state["gid"] and "view" not in status
        # Confirming again resumes the same attempt.
        again = await ann.request({"t": "daily", "game": GAME, "confirm": True})
        assert again["gid"] == state["gid"] and again["view"] == state["view"]
        done = await ann.request({"t": "resign", "gid": state["gid"]})
        assert done["finished"]
        status = await ann.request({"t": "daily", "game": GAME})
        assert status["status"] == "finished" and status["gid"] == state["gid"]
        refused = await ann.request({"t": "daily", "game": GAME, "confirm": True})
        assert refused["t"] == "error" and refused["code"] == "already_played"
        # Once the attempt's record has expired, its board row still says it was played.
        keys = Keys(servers.namespace).game(state["gid"])
        assert keys is not None
        await redis.delete(keys.meta, keys.moves)
        status = await ann.request({"t": "daily", "game": GAME})
        assert status["status"] == "finished" and "gid" not in status
    assert metric(get(server.http_url + "/metrics"), STARTED) == 1
