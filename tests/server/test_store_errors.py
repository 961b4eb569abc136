"""The store's one error contract: whatever Redis or the socket raises, a caller of the store
sees StoreUnavailable, from every part of it (games, races, players, presence, the daily
boards and stats, its leases). Tried against a real address where no Redis listens."""

from __future__ import annotations

import dataclasses
import datetime as dt
import socket

import pytest

from server.config import Config
from server.store.errors import StoreUnavailable
from server.store.redis_client import create_redis
from server.store.store import Store


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends: nobody listens


async def test_every_part_of_the_store_fails_as_store_unavailable() -> None:
    config = dataclasses.replace(Config(), namespace="nowhere")
    url = f"redis://127.0.0.1:{closed_port()}/0"
    store = Store(config, create_redis(config, url), "i")
    calls = {
        "load_race": lambda: store.load_race("ABCDEF"),
        "load_record": lambda: store.load_record("r.ABCDEF.x"),
        "player_name": lambda: store.player_name("x"),
        "create_player": lambda: store.create_player("ann", 0),
        "listen": lambda: store.listen(races=["ABCDEF"]),
        "connections": lambda: store.connections("x"),
        "secret_or_new": lambda: store.secret_or_new(None),
        "board": lambda: store.boards.board("quatorze", dt.date(2026, 1, 2).isoformat()),
        "stats": lambda: store.stats.row("quatorze", "x"),
        "lease": lambda: store.sweep_lock(5).take(),
    }
    try:
        for name, call in calls.items():
            with pytest.raises(StoreUnavailable) as failed:
                await call()
            assert failed.value.code == "unavailable", name
    finally:
        await store.close()
