"""Session workers that wait for the next message are let go once idle (server/edge/
lingering.py), on the real event loop's clock: after one to two periods of quiet, never
while messages keep coming, and the timer stops once nobody waits."""

from __future__ import annotations

import asyncio

from server.edge.lingering import Lingering

PERIOD = 0.2
LATE = PERIOD  # how late a loaded machine may run a timer, and still pass


class Worker:
    """A waiting worker as the session has one: let go only while it waits."""

    def __init__(self) -> None:
        self.waiting = False
        self.let_go_at: float | None = None

    def wait(self, lingering: Lingering) -> None:
        self.waiting = True
        lingering.add(self)

    def wake(self) -> None:
        self.waiting = False

    def let_go(self) -> None:
        if self.waiting:
            self.waiting = False
            self.let_go_at = asyncio.get_running_loop().time()


async def test_an_idle_worker_is_let_go_after_one_to_two_periods() -> None:
    loop = asyncio.get_running_loop()
    lingering = Lingering(PERIOD)
    idle, busy = Worker(), Worker()
    started = loop.time()
    idle.wait(lingering)
    busy.wait(lingering)
    # `busy` gets a message every half period and waits again at once.
    while loop.time() < started + 6 * PERIOD:
        await asyncio.sleep(PERIOD / 2)
        busy.wake()
        busy.wait(lingering)
    assert idle.let_go_at is not None
    assert 0.9 * PERIOD <= idle.let_go_at - started <= 2 * PERIOD + LATE
    assert busy.let_go_at is None and busy.waiting
    # Quiet from now on: let go too, and then the timer stops.
    quiet = loop.time()
    while busy.waiting and loop.time() < quiet + 10 * PERIOD:
        await asyncio.sleep(PERIOD / 5)
    assert busy.let_go_at is not None and busy.let_go_at - quiet <= 2 * PERIOD + LATE
    await asyncio.sleep(3 * PERIOD)
    assert len(lingering) == 0 and lingering._timer is None


async def test_a_worker_woken_before_the_sweep_is_not_let_go_and_discard_forgets() -> None:
    lingering = Lingering(PERIOD)
    woken, gone = Worker(), Worker()
    woken.wait(lingering)
    gone.wait(lingering)
    lingering.discard(gone)  # its connection closed
    await asyncio.sleep(PERIOD / 2)
    woken.wake()  # busy with a message through the sweeps: nothing to let go
    await asyncio.sleep(3 * PERIOD)
    assert woken.let_go_at is None and gone.let_go_at is None
    assert len(lingering) == 0
