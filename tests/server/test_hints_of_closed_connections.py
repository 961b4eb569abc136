"""Hints of a connection that closes (server/edge/session.py, server/solver_pool.py): its
queued hints are dropped, the one being searched is stopped (its worker is free again at
once), and none of them counts against the player's share of search time."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.server_proc import ServerFactory
from support.ws_client import Client

from server.solver_pool import HINTS, OverShare, SolverPool

HANG_S = 60.0  # only against hangs: shorter than one search of the budgets below
# Hopscotch deal 1 from its start: the search gives up only when its budget is spent
# (tests/server/test_solver_fairness.py relies on it too); Doublets deal 3 is won at once.
HARD = {"game": "hopscotch", "seed": 1}
EASY = {"game": "doublets", "seed": 3}


async def test_a_search_whose_caller_left_frees_its_worker_and_is_not_charged() -> None:
    pool = SolverPool(workers=1, queue_max=4, owner_share=0.01, owner_burst_s=0.2)
    try:
        async with asyncio.timeout(HANG_S):
            # 600 s of sleep in the one worker, for an owner allowed 0.2 s of search.
            long = asyncio.create_task(pool.run(time.sleep, 600, lane=HINTS, owner="left"))
            while not pool.running:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.5)  # well past the owner's allowance
            long.cancel()
            with pytest.raises(asyncio.CancelledError):
                await long
            # The worker is free (else this waits the 600 s out) ...
            assert await pool.run(str, "next", lane=HINTS, owner="other") == "next"
            assert pool.running == 0
            # ... and the owner was charged nothing: not over their share.
            assert await pool.run(str, "again", lane=HINTS, owner="left") == "again"
            # A search that ran to its end is charged, as before.
            await pool.run(time.sleep, 0.5, lane=HINTS, owner="left")
            with pytest.raises(OverShare):
                await pool.run(str, "over", lane=HINTS, owner="left")
    finally:
        pool.close()


async def test_a_closed_connections_hints_hold_neither_the_solver_nor_the_players_share(
    servers: ServerFactory,
) -> None:
    """One worker, hints of 1 s, and a player's share 2 s at first. A player pipelines 20
    hints on a deal whose every search spends its budget (more than the server reads
    ahead: it stops reading that connection, so it sees the end only by asking the
    socket) and aborts the connection while the first is searched: that search is
    stopped, the 19 others never run, the next player's hint is answered, and the first
    player, back on a new connection, gets a hint at once (neither "one hint at a time"
    nor over their share, as 20 searches of 1 s would have made them)."""
    server = servers.start(env={
        "SOLITAIRE_SOLVER_WORKERS": "1", "SOLITAIRE_HINT_BUDGET_S": "1",
        "SOLITAIRE_HINT_BURST_S": "2", "SOLITAIRE_HINT_SHARE": "0.01",
        "SOLITAIRE_DAILY_PREPARE_AHEAD": "0", "SOLITAIRE_LOG_LEVEL": "DEBUG",
    })  # fmt: skip
    quitter = await Client.connect(server.ws_url)
    await quitter.hello("quitter")
    easy = await quitter.request({"t": "practice", **EASY})
    hard = await quitter.request({"t": "practice", **HARD})
    for _ in range(20):
        await quitter.send({"t": "hint", "gid": hard["gid"]})
    await asyncio.sleep(0.5)  # the first is being searched, the others wait
    quitter.ws.transport.abort()
    await quitter.close()

    async with asyncio.timeout(HANG_S):
        while "gone during a Hint: stopped" not in server.log_text():
            await asyncio.sleep(0.05)
        async with Client.connect(server.ws_url) as other:
            await other.hello("other")
            mine = await other.request({"t": "practice", **EASY})
            reply = await other.request({"t": "hint", "gid": mine["gid"]}, timeout=HANG_S)
            assert reply["t"] == "hint", reply
        async with Client.connect(server.ws_url) as back:
            await back.hello("quitter", token=quitter.token)
            reply = await back.request({"t": "hint", "gid": easy["gid"]}, timeout=HANG_S)
            assert reply["t"] == "hint", reply
    log = server.log_text()
    assert f"{hard['gid']}: hint at" not in log  # not one search of the 20 was answered
    assert "Traceback" not in log, log
