"""Fixtures for the daily-challenge tests: real servers on the session's real Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis
from support.server_proc import ServerFactory, delete_namespace


@pytest.fixture
def servers(redis_url: str, redis_namespace: str, tmp_path: Path) -> Iterator[ServerFactory]:
    """Start any number of servers on the session's Redis, in this test's namespace."""
    factory = ServerFactory(redis_url, redis_namespace, tmp_path)
    yield factory
    factory.stop_all()
    delete_namespace(redis_url, redis_namespace)


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()
