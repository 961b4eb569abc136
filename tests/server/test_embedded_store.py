"""The embedded store `solitaire-server` starts with no REDIS_URL: one server per data
directory, and a store that dies is started again (or the server exits non-zero)."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import time
from pathlib import Path

import pytest
import redis
from helpers import close_all, seat_race
from support.server_proc import ServerProcess
from support.ws_client import Client

from server.store.embedded import MAX_RESTARTS, DataDirInUse, EmbeddedRedis

HANG_S = 60.0  # only against hangs: every wait below ends long before when things work


def embedded_server(data: Path, **env: str) -> ServerProcess:
    """A server started as the README starts it: no REDIS_URL, its data in ./data."""
    return ServerProcess(
        redis_url=None, namespace="sr", data_dir=data, default_data_dir=True, env=env
    )


def valkey_pid(data: Path) -> int:
    return int((data / "valkey" / "valkey-server.pid").read_text())


def parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", "rb") as f:
        return int(f.read().rsplit(b")", 1)[1].split()[1])


def valkey_port(server: ServerProcess) -> int:
    found = re.findall(r"starting embedded valkey-server on 127\.0\.0\.1:(\d+)", server.log_text())
    return int(found[-1])


async def new_valkey_pid(data: Path, old: int) -> int:
    """Waits until the server has written the pid of a valkey other than `old`."""
    deadline = time.monotonic() + HANG_S
    while True:
        pid = valkey_pid(data)
        if pid != old:
            return pid
        assert time.monotonic() < deadline, "the embedded store was never started again"
        await asyncio.sleep(0.05)


async def healthy(server: ServerProcess) -> None:
    deadline = time.monotonic() + HANG_S
    while await asyncio.to_thread(server.health) != 200:
        assert server.running, f"the server exited:\n{server.log_text()}"
        assert time.monotonic() < deadline, "/healthz never answered 200 again"
        await asyncio.sleep(0.1)


async def resend_while_unavailable(client: Client, request: dict) -> dict:
    """As a client does (docs/protocol.md): `unavailable` means resend, with the same n.

    The server's Redis clients still hold connections to the store that died; each of
    them fails once when next used, before the client library connects it again."""
    for _ in range(100):
        reply = await client.request(request)
        if reply.get("code") != "unavailable":
            return reply
        await asyncio.sleep(0.05)
    return reply


async def test_a_second_server_on_the_same_data_dir_stops_and_leaves_the_first_alone(tmp_path):
    data = tmp_path / "data"
    first = embedded_server(data).start()
    second = embedded_server(data)
    try:
        code, seats, _ = await seat_race(first.ws_url, ["ann", "bob"], "quatorze", 7)
        ann = seats[0]
        assert (await ann.play())["t"] == "state"
        store_pid = valkey_pid(data)

        with pytest.raises(RuntimeError, match="server exited with 1"):
            second.start()
        log = second.log_text()
        assert f"is in use by another solitaire-server (pid {first.proc.pid}" in log
        assert "--data-dir" in log and "REDIS_URL" in log
        # It gave up before doing anything to the store.
        assert "starting embedded valkey-server" not in log
        assert "waiting for the previous valkey-server" not in log

        # The first server's store is the one it started, and it goes on serving.
        assert valkey_pid(data) == store_pid and parent_of(store_pid) == first.proc.pid
        assert first.health() == 200
        assert (await ann.play())["t"] == "state"
        again = await Client.connect(first.ws_url)
        w = await again.hello("ann", token=ann.client.token)
        [state] = w["active"]
        assert state["race"] == code and state["n"] == 2 and state["view"] == ann.game.view()
        await again.close()
        await close_all(seats)
        assert first.stop() == 0
    finally:
        second.stop()
        first.stop()


async def test_a_killed_store_is_started_again_with_its_games(tmp_path):
    data = tmp_path / "data"
    server = embedded_server(data).start()
    try:
        code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
        ann = seats[0]
        for _ in range(3):
            assert (await ann.play())["t"] == "state"
        await close_all(seats)
        store_pid = valkey_pid(data)
        assert parent_of(store_pid) == server.proc.pid

        os.kill(store_pid, signal.SIGKILL)
        new_pid = await new_valkey_pid(data, store_pid)
        assert parent_of(new_pid) == server.proc.pid
        await healthy(server)
        assert "was killed by SIGKILL; restarting it" in server.log_text()

        c = await Client.connect(server.ws_url)
        w = await c.hello("ann", token=ann.client.token)
        [state] = w["active"]
        assert state["race"] == code and state["n"] == 3 and state["view"] == ann.game.view()
        m = sorted(ann.game.legal_moves())[0]
        reply = await resend_while_unavailable(c, {"t": "move", "gid": ann.gid, "n": 3, "m": m})
        assert reply["t"] == "state" and reply["n"] == 4, reply
        await c.close()
        assert server.stop() == 0
    finally:
        server.stop()


async def test_a_store_that_keeps_dying_makes_the_server_exit_non_zero(tmp_path):
    data = tmp_path / "data"
    server = embedded_server(data).start()
    try:
        pid = valkey_pid(data)
        for _ in range(MAX_RESTARTS):
            os.kill(pid, signal.SIGKILL)
            pid = await new_valkey_pid(data, pid)
        os.kill(pid, signal.SIGKILL)  # one death more than the restarts allowed
        assert server.proc is not None
        code = await asyncio.to_thread(server.proc.wait, HANG_S)
        assert code == 1, server.log_text()
        assert "giving up" in server.log_text()
    finally:
        server.stop()


def test_the_data_dir_lock_names_its_holder_and_outlives_no_process(tmp_path):
    with EmbeddedRedis(data_dir=tmp_path) as first:
        with pytest.raises(DataDirInUse, match=f"pid {os.getpid()}"):
            EmbeddedRedis(data_dir=tmp_path).start()
        assert redis.Redis.from_url(first.url).ping()
    # Stopped, the directory is free again.
    with EmbeddedRedis(data_dir=tmp_path) as again:
        assert redis.Redis.from_url(again.url).ping()


@pytest.mark.parametrize("setting", [None, "everysec", "always"])
async def test_the_store_fsync_setting_reaches_the_embedded_store(tmp_path, setting):
    env = {"SOLITAIRE_STORE_FSYNC": setting} if setting else {}
    server = embedded_server(tmp_path / "data", **env).start()
    try:
        client = redis.Redis(port=valkey_port(server), decode_responses=True)
        assert client.config_get("appendfsync") == {"appendfsync": setting or "always"}
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        client.close()
    finally:
        server.stop()
