"""The embedded store on a disk that fills during play (server/store/embedded.py): valkey
exits on its failed append-only write, the server says why at once (log, /healthz,
/metrics) and keeps starting it again while the disk is full, and serves again within
seconds of space coming back, with every acknowledged move kept.

The disk is a 3 MB tmpfs mounted for the test (root only; skipped, with the reason, where
it cannot be mounted)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import Seat, close_all, seat_race
from support.server_proc import ServerProcess
from support.ws_client import Client

HANG_S = 60.0  # only against hangs: every wait below ends long before when things work
PLAYERS = ["ann", "bob", "cid", "dee"]
PACE_S = 0.1


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs for a full disk needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a 3 MB tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path) -> Path:
    """Writes a file on `disk` until it is full; returns it."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(b"\0" * 4096)
    return filler


def http_get(server: ServerProcess, path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(server.http_url + path, timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metric(text: str, name: str) -> float:
    found = re.search(rf"^{name} (\S+)$", text, re.MULTILINE)
    assert found, f"{name} not in /metrics"
    return float(found.group(1))


async def keep_playing(seat: Seat, rng: random.Random, until: asyncio.Event,
                       refused: list[str]) -> None:  # fmt: skip
    """Moves at a steady pace (a random legal one: a Doublets game lasts about 130 so), as
    a client does: `unavailable` is sent again, with the same n."""
    move = None
    while not until.is_set():
        move = move or rng.choice(sorted(seat.game.legal_moves()))
        reply = await seat.play(move)
        if reply["t"] == "state":
            move = None
        else:
            assert reply.get("code") == "unavailable", reply
            refused.append(seat.gid)
        await asyncio.sleep(PACE_S)


async def wait_for(check, what: str, server: ServerProcess) -> float:  # type: ignore[no-untyped-def]
    """Polls `check` (in a thread) until true; the seconds it took."""
    began = time.monotonic()
    while not await asyncio.to_thread(check):
        assert server.running, f"the server exited:\n{server.log_text()}"
        assert time.monotonic() - began < HANG_S, f"{what} never happened:\n{server.log_text()}"
        await asyncio.sleep(0.1)
    return time.monotonic() - began


async def test_a_full_disk_is_reported_retried_and_survived_with_every_move_kept(
    tmp_path: Path, small_disk: Path
) -> None:
    server = ServerProcess(
        redis_url=None,
        namespace="sr",
        data_dir=tmp_path / "logs",
        args=["--data-dir", str(small_disk)],
    ).start()
    seats: list[Seat] = []
    try:
        _code, seats, _ = await seat_race(server.ws_url, PLAYERS, "doublets", 3)
        stop, refused = asyncio.Event(), []
        players = [asyncio.create_task(keep_playing(s, random.Random(i), stop, refused))
                   for i, s in enumerate(seats)]  # fmt: skip
        await wait_for(lambda: all(len(s.moves) >= 3 for s in seats), "moves", server)

        filler = await asyncio.to_thread(fill, small_disk)
        # The next moves' writes fail; valkey exits; the server says why, at once.
        said = await wait_for(lambda: "disk is full" in http_get(server, "/healthz")[1],
                              "/healthz naming the full disk", server)  # fmt: skip
        status, body = http_get(server, "/healthz")
        assert status == 503 and "disk is full" in body, body
        assert "restarting it" in server.log_text() and "disk is full" in server.log_text()
        metrics = http_get(server, "/metrics")[1]
        assert metric(metrics, "solitaire_embedded_store_disk_full") == 1
        assert metric(metrics, "solitaire_embedded_store_down") == 1
        # ... and keeps trying while the disk stays full (not once, not giving up).
        restarts = metric(metrics, "solitaire_embedded_store_restarts_total")

        def tried_again() -> bool:
            text = http_get(server, "/metrics")[1]
            tries = metric(text, "solitaire_embedded_store_restarts_total") + metric(
                text, "solitaire_embedded_store_failed_starts"
            )
            return tries >= restarts + 2

        await wait_for(tried_again, "two more attempts to start the store", server)
        assert http_get(server, "/healthz")[0] == 503
        acked_while_full = [len(s.moves) for s in seats]

        filler.unlink()  # space comes back
        back = await wait_for(lambda: http_get(server, "/healthz")[0] == 200, "a 200", server)
        served = [len(s.moves) for s in seats]

        def moved_on() -> bool:
            for task in players:  # a player's surprise (an error other than unavailable)
                if task.done():
                    task.result()
            return all(len(s.moves) > n for s, n in zip(seats, served, strict=True))

        await wait_for(moved_on, "a move of every player", server)
        stop.set()
        await asyncio.gather(*players)
        metrics = http_get(server, "/metrics")[1]
        assert metric(metrics, "solitaire_embedded_store_disk_full") == 0
        assert metric(metrics, "solitaire_embedded_store_down") == 0
        assert refused, "no move was refused while the disk was full"
        end = [len(s.moves) for s in seats]
        print(f"/healthz named the full disk {said:.1f} s after it filled; healthy again "
              f"{back:.1f} s after space came back; acknowledged moves "
              f"{acked_while_full} when it was full, {end} at the end")  # fmt: skip
        await close_all(seats)
        assert server.stop() == 0

        # Every acknowledged move is in the store, as a fresh server reads it from disk.
        server.start()
        for seat in seats:
            again = await Client.connect(server.ws_url)
            w = await again.hello(PLAYERS[seats.index(seat)], token=seat.client.token)
            [state] = w["active"]
            assert state["n"] == len(seat.moves) and state["view"] == seat.game.view()
            await again.close()
    finally:
        with contextlib.suppress(Exception):
            await close_all(seats)
        server.stop()
