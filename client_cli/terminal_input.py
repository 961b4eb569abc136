"""Reading the terminal without blocking the event loop: a daemon thread reads, the loop
is handed what it read (so the connection keeps answering the server's pings), and an
unanswered read never keeps the process alive."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from typing import TypeVar

T = TypeVar("T")


def settle(future: asyncio.Future[T], value: T) -> None:
    """Give `future` its value unless it has one (called on the loop's own thread)."""
    if not future.done():
        future.set_result(value)


async def ask_yes_no(question: str) -> bool:
    """Ask on the terminal before the play screen opens; only "y" or "yes" is a yes.

    Read by a daemon thread, so that the connection keeps answering the server's pings
    while the player thinks, and an unanswered question never keeps the process alive."""
    loop = asyncio.get_running_loop()
    answer: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        try:
            line = input(question)
        except (EOFError, OSError):
            line = ""
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, answer, line)

    threading.Thread(target=read, name="question", daemon=True).start()
    return (await answer).strip().lower() in ("y", "yes")


def stdin_lines() -> asyncio.Queue[str | None]:
    """Lines of stdin, read by a daemon thread (works for ttys, pipes and files alike,
    and never keeps the process alive at exit)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def read() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=read, name="stdin", daemon=True).start()
    return queue
