"""The solver pool is shared fairly: daily deal searches first, bots and hints in turn, one
hint at a time per player and a share of search time each, so that a few players asking
for hint after hint never starve anyone else's hints, the bots or the daily deal."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from support.server_proc import ServerFactory
from support.ws_client import Client

from server.solver_pool import BOTS, DAILY, HINTS, OverShare, OwnerBusy, SolverBusy, SolverPool

# Hopscotch deal 1 from its start: a 0.3 s search gives up, so every hint there spends
# its whole budget (checked below, in the test that uses it).
HARD_HOPSCOTCH = 1


async def test_a_free_worker_takes_the_daily_search_first_then_bots_and_hints_in_turn(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    pool = SolverPool(workers=1, queue_max=4)
    try:
        # The one worker is held by a job that waits for the gate to open.
        holder = asyncio.create_task(pool.run(gate.read_text, lane=DAILY))
        async with asyncio.timeout(60):
            while not pool.running:
                await asyncio.sleep(0.01)
        finished: list[str] = []

        def queue(name: str, lane: str, owner: str | None = None) -> asyncio.Task[str]:
            task = asyncio.create_task(pool.run(str, name, lane=lane, owner=owner))
            task.add_done_callback(lambda t: finished.append(t.result()))
            return task

        tasks = [
            queue("hint a", HINTS, "a"), queue("hint b", HINTS, "b"),
            queue("hint c", HINTS, "c"), queue("bot 1", BOTS), queue("bot 2", BOTS),
            queue("daily", DAILY), queue("hint d", HINTS, "d"),
        ]  # fmt: skip
        await asyncio.sleep(0)  # every one of them is in its lane now
        with pytest.raises(OwnerBusy):  # one job at a time per owner
            await pool.run(str, "hint a again", lane=HINTS, owner="a")
        with pytest.raises(SolverBusy):  # four hints wait: the lane is full
            await pool.run(str, "hint e", lane=HINTS, owner="e")
        await asyncio.to_thread(gate.write_text, "open")
        async with asyncio.timeout(60):
            assert await holder == "open"
            await asyncio.gather(*tasks)
        assert finished == [
            "daily", "bot 1", "hint a", "bot 2", "hint b", "hint c", "hint d",
        ]  # fmt: skip
        # Owner a is free again once its job is done.
        assert await pool.run(str, "hint a again", lane=HINTS, owner="a") == "hint a again"
    finally:
        pool.close()


async def test_in_a_full_lane_the_player_who_used_less_takes_a_place(
    tmp_path: Path,
) -> None:
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    pool = SolverPool(workers=1, queue_max=2)
    try:
        async with asyncio.timeout(60):
            assert await pool.run(str, "x first", lane=HINTS, owner="x") == "x first"
            holder = asyncio.create_task(pool.run(gate.read_text, lane=DAILY))
            while not pool.running:
                await asyncio.sleep(0.01)
            x = asyncio.create_task(pool.run(str, "x", lane=HINTS, owner="x"))
            y = asyncio.create_task(pool.run(str, "y", lane=HINTS, owner="y"))
            await asyncio.sleep(0)
            # Full. z never searched, x just did: z takes x's place ...
            z = asyncio.create_task(pool.run(str, "z", lane=HINTS, owner="z"))
            with pytest.raises(SolverBusy):
                await x
            # ... but w takes nobody's: the ones waiting never searched either.
            with pytest.raises(SolverBusy):
                await pool.run(str, "w", lane=HINTS, owner="w")
            await asyncio.to_thread(gate.write_text, "open")
            assert [await holder, await y, await z] == ["open", "y", "z"]
    finally:
        pool.close()


async def test_the_player_who_used_the_least_search_lately_is_served_first(
    tmp_path: Path,
) -> None:
    """Two flooders' searches took 0.2 s and 0.4 s; an occasional player's took next to
    nothing, and came after theirs. Waiting together, the occasional player goes first,
    though asked last and served last (the flooders were served longer ago, which used to
    put them first: the issue's 21st player got 3 of 10 hints in time), then the flooders by
    the search they used. (Their searches differ by 0.2 s so that a loaded machine's extra
    milliseconds cannot swap them.)"""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    pool = SolverPool(workers=1, queue_max=4)
    try:
        async with asyncio.timeout(60):
            for flooder, search_s in (("f1", 0.2), ("f2", 0.4)):
                await pool.run(time.sleep, search_s, lane=HINTS, owner=flooder)
            await pool.run(str, "quick", lane=HINTS, owner="p")
            holder = asyncio.create_task(pool.run(gate.read_text, lane=DAILY))
            while not pool.running:
                await asyncio.sleep(0.01)
            order: list[str] = []
            again = [asyncio.create_task(pool.run(str, who, lane=HINTS, owner=who))
                     for who in ("f1", "f2", "p")]  # fmt: skip
            for task in again:
                task.add_done_callback(lambda t: order.append(t.result()))
            await asyncio.sleep(0)
            await asyncio.to_thread(gate.write_text, "open")
            await asyncio.gather(holder, *again)
            assert order == ["p", "f1", "f2"]
    finally:
        pool.close()


async def test_an_owner_who_used_their_search_time_waits_for_it_to_come_back() -> None:
    pool = SolverPool(workers=1, queue_max=4, owner_share=0.05, owner_burst_s=0.2)
    try:
        async with asyncio.timeout(60):
            await pool.run(time.sleep, 0.3, lane=HINTS, owner="greedy")  # 0.1 s over
            with pytest.raises(OverShare) as over:
                await pool.run(time.sleep, 0, lane=HINTS, owner="greedy")
            assert 1.5 < over.value.retry_after_s < 2.5  # 0.1 s at 0.05 s a second
            assert await pool.run(str, "other", lane=HINTS, owner="other") == "other"
            await asyncio.sleep(over.value.retry_after_s)
            assert await pool.run(str, "again", lane=HINTS, owner="greedy") == "again"
    finally:
        pool.close()


async def test_players_flooding_hints_leave_another_players_hints_answered(
    servers: ServerFactory,
) -> None:
    """The issue's flood: 20 players ask hint after hint on a hard deal, always one waiting
    each, more than the solver's queue holds (16), while its one worker spends 0.1 s on
    each. A 21st player who asks a hint now and then (less often than one round of the
    flooders) gets every one answered, and the flooders are the ones turned away, each
    still answered in turn; one player's two connections have one hint waiting at a time."""
    server = servers.start(env={
        "SOLITAIRE_SOLVER_WORKERS": "1", "SOLITAIRE_HINT_BUDGET_S": "0.1",
        "SOLITAIRE_DAILY_PREPARE_AHEAD": "0",
    })  # fmt: skip
    flooders = [await Client.connect(server.ws_url) for _ in range(20)]
    twins: list[Client] = []
    stop = asyncio.Event()

    async def flood(c: Client, gid: str) -> None:
        while not stop.is_set():
            reply = await c.request({"t": "hint", "gid": gid}, timeout=60)
            if reply["t"] == "error":
                await asyncio.sleep(0.5)  # turned away: again soon (within the rate limit)

    try:
        games = []
        for i, c in enumerate(flooders):
            await c.hello(f"flood{i}")
            state = await c.request({"t": "practice", "game": "hopscotch", "seed": HARD_HOPSCOTCH})
            games.append(state["gid"])
        floods = [asyncio.create_task(flood(c, g)) for c, g in zip(flooders, games, strict=True)]
        await asyncio.sleep(3)  # the queue is as full as the flood keeps it
        async with Client.connect(server.ws_url) as me:
            await me.hello("patient")
            mine = await me.request({"t": "practice", "game": "hopscotch", "seed": HARD_HOPSCOTCH})
            replies = []
            for _ in range(4):
                replies.append(await me.request({"t": "hint", "gid": mine["gid"]}, timeout=60))
                await asyncio.sleep(3)  # 21 players x 0.1 s: a round takes about 2 s
            # Two connections of one player: only one hint of theirs waits at a time.
            twins += [await Client.connect(server.ws_url) for _ in range(2)]
            await twins[0].hello("twin")
            await twins[1].hello("twin", token=twins[0].token)
            await twins[0].request({"t": "practice", "game": "hopscotch", "seed": 1})
            theirs = await twins[0].request(
                {"t": "practice", "game": "hopscotch", "seed": HARD_HOPSCOTCH}
            )
            both = await asyncio.gather(*(
                t.request({"t": "hint", "gid": theirs["gid"]}, timeout=60) for t in twins
            ))  # fmt: skip
        stop.set()
        await asyncio.gather(*floods)
    finally:
        for c in [*flooders, *twins]:
            await c.close()
    assert [r["t"] for r in replies] == ["hint"] * 4, replies
    assert all(r["verdict"] == "gave_up" for r in replies)  # each spent the whole budget
    turned_away = [m for c in flooders for m in c.history if m.get("t") == "error"]
    assert turned_away and {m["code"] for m in turned_away} == {"unavailable"}
    answered = {m["gid"] for c in flooders for m in c.history if m.get("t") == "hint"}
    assert answered == set(games)  # no flooder starved either
    assert sorted(r["t"] for r in both) == ["error", "hint"], both
    assert [r["code"] for r in both if r["t"] == "error"] == ["rate_limited"]
