"""Fixtures for the server tests: real server processes on one real Redis."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.server_proc import ServerFactory, ServerProcess, delete_namespace


@pytest.fixture
def servers(redis_url: str, redis_namespace: str, tmp_path: Path) -> Iterator[ServerFactory]:
    """Start any number of servers on the session's Redis, in this test's namespace."""
    factory = ServerFactory(redis_url, redis_namespace, tmp_path)
    yield factory
    factory.stop_all()
    delete_namespace(redis_url, redis_namespace)


@pytest.fixture
def server(servers: ServerFactory) -> ServerProcess:
    """One running server."""
    return servers.start()
