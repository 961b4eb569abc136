"""The event bus between server instances: Redis pub/sub, one channel per instance.

Each instance subscribes to its own channel only. A write script relays an
event to the instances listed in the race's (or player's) interest set, so an
instance hears only about races that one of its connected players is in, and
never about its own events (those it delivers locally, without Redis).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

import msgspec
from redis.exceptions import RedisError

from server.store.events import Event

log = logging.getLogger(__name__)


_DECODER = msgspec.msgpack.Decoder(list[Event])

Deliver = Callable[[list[Event]], None]


class Bus:
    """Listens on this instance's channel and hands every event to `deliver`."""

    def __init__(self, redis: Any, channel: str, deliver: Deliver) -> None:
        self._redis = redis  # a client with decode_responses=False
        self._channel = channel
        self._deliver = deliver
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="bus")
        await asyncio.wait_for(self._ready.wait(), timeout=15)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        with contextlib.suppress(Exception):
            await self._redis.aclose()

    async def _run(self) -> None:
        while True:
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                # A cluster client must learn the slot map before it can pick the node to
                # subscribe on (any node will do: a cluster forwards PUBLISH to all of them).
                await self._redis.initialize()
                await pubsub.subscribe(self._channel)
                self._ready.set()
                async for message in pubsub.listen():
                    if message.get("type") != "message":
                        continue
                    try:
                        events = _DECODER.decode(message["data"])
                    except msgspec.DecodeError:
                        log.error("bus: undecodable event on %s", self._channel)
                        continue
                    self._deliver(events)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                log.warning("bus: lost the pub/sub connection (%s); reconnecting", exc)
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
