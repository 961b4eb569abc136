"""The store's one error contract: whatever Redis or the socket raises, a caller of the store
sees StoreUnavailable, from every repository (games, races, players, presence, the daily
challenge, the quick-race queue and ratings, the daily boards and stats, the leases).
Tried against a real address where no Redis listens."""

from __future__ import annotations

import dataclasses
import datetime as dt
import socket

import pytest

from server.config import Config
from server.store.redis_client import create_redis
from server.store.stores import Stores
from server.store.unavailable import StoreUnavailable


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nobody listens


async def test_every_part_of_the_store_fails_as_store_unavailable() -> None:
    config = dataclasses.replace(Config(), namespace="nowhere")
    url = f"redis://127.0.0.1:{closed_port()}/0"
    store = Stores(config, create_redis(config, url), "i")
    calls = {
        "races.load_race": lambda: store.races.load_race("ABCDEF"),
        "races.running": lambda: store.races.running(),
        "races.unindex": lambda: store.races.unindex("ABCDEF", 0),
        "games.load_record": lambda: store.games.load_record("r.ABCDEF.x"),
        "games.load_position": lambda: store.games.load_position("r.ABCDEF.x", last=1),
        "players.player_name": lambda: store.players.player_name("x"),
        "players.create_player": lambda: store.players.create_player("ann", 0),
        "players.swap_name": lambda: store.players.swap_name("ann", "", "x"),
        "presence.listen": lambda: store.presence.listen(races=["ABCDEF"]),
        "presence.connections": lambda: store.presence.connections("x"),
        "presence.secret_or_new": lambda: store.presence.secret_or_new(None),
        "daily.stored_deal": lambda: store.daily.stored_deal("quatorze", "2026-01-02"),
        "daily.lease": lambda: store.daily.sweep_lock(5).take(),
        "queue.entry": lambda: store.queue.entry("x"),
        "queue.due_starts": lambda: store.queue.due_starts(0),
        "ratings.load": lambda: store.ratings.load("quatorze", ["x"]),
        "rating_outbox.flush": lambda: store.rating_outbox.flush("ABCDEF"),
        "board": lambda: store.boards.board("quatorze", dt.date(2026, 1, 2).isoformat()),
        "stats": lambda: store.stats.row("quatorze", "x"),
    }
    try:
        for name, call in calls.items():
            with pytest.raises(StoreUnavailable) as failed:
                await call()
            assert failed.value.code == "unavailable", name
    finally:
        await store.close()
