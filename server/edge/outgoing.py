"""The connections with frames to write at the end of this turn of the event loop.

Every session queues its frames during a turn (a reply, then the events that follow it)
and they leave in one write per connection. One callback per turn writes them all: a
callback per connection cost the loop a handle to make and run for each one, and a move
queues frames to every seat of its race.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

log = logging.getLogger(__name__)


class Writer(Protocol):
    def flush(self) -> None:
        """Write what was queued (a session's frames)."""
        ...


class Outgoing:
    def __init__(self) -> None:
        self._writers: list[Writer] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, writer: Writer) -> None:
        """Have `writer` flushed once the callbacks already due have run (at most once per
        turn: the writer adds itself only when it has nothing queued yet)."""
        if not self._writers:
            if self._loop is None:  # kept: looking the loop up makes a system call (3.11)
                self._loop = asyncio.get_running_loop()
            self._loop.call_soon(self._flush)
        self._writers.append(writer)

    def _flush(self) -> None:
        writers, self._writers = self._writers, []
        for writer in writers:
            try:
                writer.flush()
            except Exception:
                # One connection's failure must not keep the others' frames back.
                log.exception("writing to %r failed", writer)
