"""`--workers N`: several server processes on one port under a supervisor, one store.

Which worker serves a connection is read from the log: every line names its process, and
a worker logs each player it greets ("player ID (name) is new")."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import resource
import signal
import socket
import time
from pathlib import Path

from helpers import play_until_cut
from support.server_proc import ServerProcess
from support.ws_client import Client

import engine
from server.workers import cgroup_cpu_quota, usable_cpus, worker_count

LISTENING = re.compile(r"\[(\d+)\] server\.app: solitaire-server (\w+) listening")
GREETED = re.compile(r"\[(\d+)\] server\.play\.players: player (\S+) \(")
FAST = {"SOLITAIRE_RATE": "5000", "SOLITAIRE_BURST": "5000"}


def listening_pids(server: ServerProcess) -> list[int]:
    return [int(m.group(1)) for m in LISTENING.finditer(server.log_text())]


def wait_listening(server: ServerProcess, count: int, timeout: float = 60) -> list[int]:
    """The pids of the workers listening, once `count` have said so since the start."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pids = listening_pids(server)
        if len(pids) >= count:
            return pids
        assert server.running, server.log_text()
        time.sleep(0.05)
    raise AssertionError(f"{count} workers not listening after {timeout} s:\n{server.log_text()}")


def worker_of(server: ServerProcess, player: str) -> int:
    """The pid of the worker that greeted `player` last."""
    pids = [int(m.group(1)) for m in GREETED.finditer(server.log_text()) if m.group(2) == player]
    assert pids, f"no worker greeted {player}:\n{server.log_text()}"
    return pids[-1]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


async def greet_elsewhere(server: ServerProcess, name: str, not_on: int) -> tuple[Client, int]:
    """A greeted client on a worker other than `not_on` (the kernel picks the worker of each
    connection, so connect again until one lands elsewhere)."""
    for attempt in range(60):
        c = await Client.connect(server.ws_url)
        w = await c.hello(f"{name}{attempt}")
        assert w["t"] == "welcome", w
        pid = worker_of(server, c.player)
        if pid != not_on:
            return c, pid
        await c.close()
    raise AssertionError(f"60 connections in a row landed on worker {not_on}")


async def start_race(host: Client, guest: Client, game: str, seed: int) -> tuple[str, str, str]:
    """host creates, guest joins, host starts: (race code, host's gid, guest's gid)."""
    code = (await host.request({"t": "create", "game": game, "seed": seed}))["race"]
    assert (await guest.request({"t": "join", "race": code}))["t"] == "lobby"
    await host.take(lambda m: m.get("t") == "lobby" and len(m["players"]) == 2)
    assert (await host.request({"t": "start", "race": code}))["t"] == "start"
    await guest.next("start", race=code)
    host_gid = (await host.next("state", race=code))["gid"]
    guest_gid = (await guest.next("state", race=code))["gid"]
    return code, host_gid, guest_gid


async def test_a_race_across_two_workers_on_the_embedded_store_runs_to_its_result(tmp_path):
    server = ServerProcess(redis_url=None, namespace="sr", data_dir=tmp_path / "data",
                           args=["--workers", "2"])  # fmt: skip
    server.start()
    try:
        first, second = wait_listening(server, 2)
        assert first != second and {first, second} <= set(children(server.pid))
        # One store for both, started and locked by the supervisor.
        log = server.log_text()
        assert log.count("starting embedded valkey-server") == 1
        assert f"[{server.pid}] server.store.embedded: starting embedded valkey-server" in log
        valkey = int((tmp_path / "data" / "valkey" / "valkey-server.pid").read_text())
        assert valkey in children(server.pid)

        ann = await Client.connect(server.ws_url)
        await ann.hello("ann")
        ann_worker = worker_of(server, ann.player)
        bob, bob_worker = await greet_elsewhere(server, "bob", not_on=ann_worker)
        code, ann_gid, bob_gid = await start_race(ann, bob, "quatorze", 7)
        game = engine.new_game("quatorze", 7)
        for n in range(3):
            m = sorted(game.legal_moves())[0]
            assert (await ann.request({"t": "move", "gid": ann_gid, "n": n, "m": m}))["n"] == n + 1
            game.play(m)
            # bob, on the other worker, hears each of ann's moves.
            assert (await bob.next("progress", player=ann.player))["moves"] == n + 1
        m = sorted(engine.new_game("quatorze", 7).legal_moves())[0]
        assert (await bob.request({"t": "move", "gid": bob_gid, "n": 0, "m": m}))["n"] == 1
        assert (await ann.next("progress", player=bob.player))["moves"] == 1
        for c, gid in ((ann, ann_gid), (bob, bob_gid)):
            assert (await c.request({"t": "resign", "gid": gid}))["finished"]
        result = await ann.next("result", race=code)
        assert await bob.next("result", race=code) == result
        assert {r["player"]: r["moves"] for r in result["standings"]} == {
            ann.player: game.moves,
            bob.player: engine.replay("quatorze", 7, [m]).moves,
        }
        assert worker_of(server, ann.player) == ann_worker != bob_worker
        await ann.close()
        await bob.close()

        assert await asyncio.to_thread(server.stop) == 0
        log = server.log_text()
        for pid in (first, second):
            assert re.search(rf"worker \d \(pid {pid}\) stopped", log), log
        assert "every worker stopped" in log and "not all of them" not in log
        assert not any(alive(pid) for pid in (first, second, valkey))
    finally:
        server.stop()


async def test_a_worker_killed_mid_race_loses_no_acknowledged_move_and_comes_back(servers):
    server = servers.start(env=FAST, args=["--workers", "2"])
    wait_listening(server, 2)
    ann = await Client.connect(server.ws_url)
    await ann.hello("ann")
    victim = worker_of(server, ann.player)
    bob, survivor = await greet_elsewhere(server, "bob", not_on=victim)
    again = None
    try:
        code, ann_gid, bob_gid = await start_race(ann, bob, "doublets", 11)
        log: dict = {"acked": [], "in_flight": None}
        player = asyncio.create_task(play_until_cut(ann, ann_gid, "doublets", 11, log))
        while len(log["acked"]) < 30:  # Doublets has well over 100 moves: kill mid-game
            await asyncio.sleep(0.001)
        os.kill(victim, signal.SIGKILL)
        await asyncio.wait_for(player, 10)
        acked = list(log["acked"])
        await ann.close()

        # The supervisor says so and starts another worker in its place.
        pids = wait_listening(server, 3)
        replacement = pids[-1]
        assert replacement not in (victim, survivor) and alive(replacement)
        text = server.log_text()
        assert re.search(rf"worker \d \(pid {victim}\) was killed by SIGKILL; restarting it", text)
        assert re.search(rf"worker \d started \(pid {replacement}\)", text)

        # ann comes back (on whichever worker the kernel picks) and finds every
        # acknowledged move; bob, on the other worker all along, was not disturbed.
        again = await Client.connect(server.ws_url)
        w = await again.hello("ann", token=ann.token)
        [state] = w["active"]
        assert state["gid"] == ann_gid and state["race"] == code
        stored_n = state["n"]
        assert len(acked) <= stored_n <= len(acked) + (1 if log["in_flight"] else 0)
        stored = acked + ([log["in_flight"]] if stored_n > len(acked) else [])
        assert state["view"] == engine.replay("doublets", 11, stored).view()
        if stored_n == len(acked) and log["in_flight"]:  # resent: applied now
            r = await again.request({"t": "move", "gid": ann_gid, "n": stored_n,
                                     "m": log["in_flight"]})  # fmt: skip
            assert r["t"] == "state" and r["n"] == stored_n + 1
            stored.append(log["in_flight"])
        g = engine.replay("doublets", 11, stored)
        m = sorted(g.legal_moves())[0]
        assert (await again.request({"t": "move", "gid": ann_gid, "n": len(stored), "m": m}))[
            "n"
        ] == len(stored) + 1
        progress = await bob.take(
            lambda x: x.get("t") == "progress" and x.get("moves") == len(stored) + 1
        )
        assert progress["player"] == ann.player
        assert not bob.closed and worker_of(server, bob.player) == survivor and alive(survivor)
        for c, gid in ((again, ann_gid), (bob, bob_gid)):
            assert (await c.request({"t": "resign", "gid": gid}))["finished"]
        result = await bob.next("result", race=code)
        assert await again.next("result", race=code) == result
        ann_row = next(r for r in result["standings"] if r["player"] == ann.player)
        assert ann_row["moves"] == engine.replay("doublets", 11, [*stored, m]).moves
    finally:
        for c in (ann, bob, again):
            if c is not None:
                await c.close()
    assert await asyncio.to_thread(server.stop) == 0


async def test_a_worker_that_keeps_dying_stops_the_supervisor_with_exit_1(tmp_path):
    """Workers whose store refuses them die at once; after the restarts the supervisor
    allows, it stops and exits 1 rather than start them for ever."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]  # nothing listens there once this is closed
    server = ServerProcess(redis_url=f"redis://127.0.0.1:{closed}/0", namespace="sr",
                           data_dir=tmp_path / "data", args=["--workers", "2"])  # fmt: skip
    with contextlib.suppress(RuntimeError):  # it never gets healthy
        server.start(timeout=60)
    assert server.proc is not None
    code = await asyncio.to_thread(server.proc.wait, 90)
    log = server.log_text()
    assert code == 1, log
    assert re.search(r"worker \d \(pid \d+\) exited with code 1: 6 deaths within 60 s, giving up",
                     log)  # fmt: skip
    assert len(re.findall(r"exited with code 1; restarting it in", log)) >= 5
    assert "every worker stopped (not all of them cleanly)" in log


def test_sigterm_while_the_workers_start_stops_each_cleanly(servers):
    """A stop asked for before the workers serve waits for them to be able to drain."""
    server = ServerProcess(servers.redis_url, servers.namespace, servers.data_dir,
                           args=["--workers", "2"])  # fmt: skip
    servers.servers.append(server)  # stopped (if need be) and its keys deleted by the fixture
    server.start(wait=False)
    deadline = time.monotonic() + 30
    while "worker 2 started" not in server.log_text():  # still in its interpreter's start
        assert server.running and time.monotonic() < deadline, server.log_text()
        time.sleep(0.005)
    server.proc.send_signal(signal.SIGTERM)
    assert server.proc.wait(60) == 0, server.log_text()
    log = server.log_text()
    assert len(re.findall(r"worker \d \(pid \d+\) stopped", log)) == 2, log
    assert "every worker stopped" in log and "not all of them" not in log


def test_the_open_file_limit_is_raised_to_the_hard_limit_in_every_worker(servers):
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    server = ServerProcess(servers.redis_url, servers.namespace, servers.data_dir,
                           args=["--workers", "2"], soft_open_files=256)  # fmt: skip
    servers.servers.append(server)
    server.start()
    try:
        workers = wait_listening(server, 2)
        assert f"open-file limit raised from 256 to {hard} (its hard limit)" in server.log_text()
        for pid in (server.pid, *workers):
            limits = Path(f"/proc/{pid}/limits").read_text()
            [line] = [x for x in limits.splitlines() if x.startswith("Max open files")]
            assert line.split()[3:5] == [str(hard), str(hard)], (pid, line)
    finally:
        assert server.stop() == 0


def test_workers_0_is_one_per_usable_core():
    assert worker_count(0) == usable_cpus() >= 1
    assert usable_cpus() <= len(os.sched_getaffinity(0))
    assert worker_count(3) == 3


def test_a_cgroup_cpu_quota_caps_the_cores(tmp_path):
    v2 = tmp_path / "v2"
    (v2 / "box").mkdir(parents=True)
    (v2 / "box" / "cpu.max").write_text("250000 100000\n")
    assert cgroup_cpu_quota(v2, {"": "/box"}) == 2.5
    (v2 / "cpu.max").write_text("max 100000\n")
    assert cgroup_cpu_quota(v2, {"": "/elsewhere"}) is None  # not visible: the root's
    v1 = tmp_path / "v1" / "cpu"
    v1.mkdir(parents=True)
    (v1 / "cpu.cfs_quota_us").write_text("-1\n")
    (v1 / "cpu.cfs_period_us").write_text("100000\n")
    assert cgroup_cpu_quota(tmp_path / "v1", {"cpu": "/"}) is None
    (v1 / "cpu.cfs_quota_us").write_text("150000\n")
    assert cgroup_cpu_quota(tmp_path / "v1", {"cpu": "/docker/abc"}) == 1.5
    assert cgroup_cpu_quota(tmp_path / "none", {}) is None
