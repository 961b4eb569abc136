"""The garbage collector's schedule (server/collector.py), each case in a Python process of
its own: the schedule freezes and retunes the collector of the whole process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A cycle that survives the young and middle generations lands in the old one: after the
# schedule, no amount of allocation frees it, and a full collection does.
OLD_CYCLE = """
    import gc, weakref
    from server import collector

    collector.schedule(700)

    class Node:
        pass

    def cycle():
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    ref = cycle()
    gc.collect(1)
    assert ref() is None, "a collection of the middle generation frees a young cycle"

    alive = Node()
    alive.other = alive
    probe = weakref.ref(alive)
    gc.collect(1)  # still reachable: it moves on to the old generation
    del alive  # unreachable from now on, in the old generation
    junk = [[i] for i in range(200_000)]  # hundreds of young and middle collections
    del junk
    assert probe() is not None, "no automatic collection reaches the old generation"
    found, seconds = collector.collect_full()
    assert probe() is None and found >= 1 and seconds >= 0, (found, seconds)
    assert gc.get_threshold()[:2] == (700, 1), gc.get_threshold()
    assert gc.get_freeze_count() > 0
    print("ok")
"""

# The timed full collection runs and says so in the log.
TIMED = """
    import asyncio, gc, logging, weakref
    from server import collector

    logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
    collector.schedule(700)

    class Node:
        pass

    async def main():
        alive = Node()
        alive.other = alive
        probe = weakref.ref(alive)
        gc.collect(1)
        del alive
        task = asyncio.create_task(collector.run(0.2))
        await asyncio.sleep(0.5)
        task.cancel()
        assert probe() is None, "the timed full collection freed the old cycle"
        print("ok")

    asyncio.run(main())
"""


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip


def test_old_generation_is_collected_only_by_a_full_collection():
    done = _run(OLD_CYCLE)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_timed_full_collection_frees_old_cycles_and_logs():
    done = _run(TIMED)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    assert "server.collector full garbage collection:" in done.stderr
    assert "unreachable objects freed" in done.stderr
