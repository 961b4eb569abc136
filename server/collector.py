"""Python's cyclic garbage collector on the server's schedule: every automatic collection
stays short, and the full ones come at set times, each logged.

Reference counting frees nearly everything the server makes; the collector is only for
the rare cycles. But a collection scans every container object of the generations it
collects, and with Python's default schedule both kinds of long collection happened
under load (bench/capacity.py, 2,500 to 7,500 racing players, each collection timed):

- full ones, which scan everything the process holds (each connection keeps about a
  hundred containers): 0.2 s at 2,500 players, 0.7 s at 7,500. Python starts one
  whenever what survived the middle generation since the last reaches a quarter of the
  old generation, which is every few seconds while players keep arriving;
- middle-generation ones, 0.1 to 0.3 s, scanning what survived ten young collections
  (at 5,000 moves a second, everything a second of new connections and moves kept).

Here instead:

- what exists once the server is up is frozen: never scanned again;
- the young generation is collected every `young` new containers (Python's 700 would
  start one every dozen moves or so under load), and the middle one at every second
  young collection, so that no automatic collection scans more than two young
  generations' survivors (a few ms); what survives that joins the old generation;
- the old generation is never collected automatically, only every `full_every_s` by
  `run`, which logs how long the collection took and what it freed. A full collection
  still stops the loop for as long as it takes, but once in a long while instead of
  every few seconds.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time

log = logging.getLogger(__name__)

# The middle generation's threshold counts young collections; the old one's counts middle
# ones, and with this many it is never reached (years at a hundred collections a second).
_NEVER = 1 << 30


def schedule(young: int) -> None:
    """Freezes what exists and sets the automatic collections to young and middle ones."""
    gc.freeze()
    gc.set_threshold(young, 1, _NEVER)


def collect_full() -> tuple[int, float]:
    """One full collection now: (objects found unreachable, seconds it took)."""
    started = time.perf_counter()
    found = gc.collect()
    return found, time.perf_counter() - started


async def run(full_every_s: float) -> None:
    """Collects the old generation every `full_every_s` seconds, until cancelled."""
    while True:
        await asyncio.sleep(full_every_s)
        found, seconds = collect_full()
        log.info(
            "full garbage collection: %.0f ms, %d unreachable objects freed",
            seconds * 1000, found,
        )  # fmt: skip
