"""Runs one server process: its event loop, and its errors turned into an exit code."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import signal
from collections.abc import Callable
from typing import TYPE_CHECKING

from server.config import Config
from server.store.embedded import EmbeddedRedis
from server.store.unavailable import STORE_ERRORS

if TYPE_CHECKING:
    from server.edge.connection import Listen

log = logging.getLogger("server")


def loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop to run on: uvloop's (C, libuv) unless asyncio's is asked for."""
    if name == "uvloop":
        try:
            import uvloop
        except ImportError:  # not built for this platform (Windows)
            log.warning("uvloop is not installed: running on asyncio's event loop")
            return None
        return uvloop.new_event_loop
    return None  # asyncio's default


def raise_open_files() -> None:
    """Lifts this process's open-file limit (each connection holds one) to the most it may
    have, the hard limit: many systems start a process at a soft limit of 1024, which would
    turn players away at about a thousand connections. Child processes inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == hard:
        log.info("open-file limit: %s (its hard limit already)", _limit_text(soft))
        return
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ValueError, OSError) as exc:  # an unlimited hard limit some platforms refuse
        log.warning("open-file limit stays %s: cannot raise it to the hard limit %s (%s)",
                    _limit_text(soft), _limit_text(hard), exc)  # fmt: skip
        return
    log.info("open-file limit raised from %s to %s (its hard limit)",
             _limit_text(soft), _limit_text(hard))  # fmt: skip


def _limit_text(value: int) -> str:
    return "unlimited" if value == resource.RLIM_INFINITY else str(value)


def serve(
    config: Config,
    redis_url: str,
    embedded: EmbeddedRedis | None = None,
    listen: Listen | None = None,
) -> int:
    """Serves until SIGTERM or SIGINT; the process's exit code.

    With `embedded`, the store this process started is watched meanwhile and started again
    when it dies; if it keeps dying, the server stops as on SIGTERM and exits with 1, so
    that whatever supervises it can act."""
    gave_up = False

    def give_up() -> None:
        nonlocal gave_up
        gave_up = True
        log.error("stopping: the embedded store cannot be kept running")
        os.kill(os.getpid(), signal.SIGTERM)  # the shutdown App.run does on SIGTERM

    try:
        with asyncio.Runner(loop_factory=loop_factory(config.event_loop)) as runner:
            runner.run(_run(config, redis_url, embedded, listen, give_up))
    except KeyboardInterrupt:
        pass
    except STORE_ERRORS as exc:
        log.error("cannot serve: %s", exc)
        return 1
    return 1 if gave_up else 0


async def _run(
    config: Config,
    redis_url: str,
    embedded: EmbeddedRedis | None,
    listen: Listen | None,
    give_up: Callable[[], None],
) -> None:
    from server.app import App  # imported late so that --help stays fast

    app = App(config, redis_url, listen, embedded.supervision if embedded else None)
    if embedded is None:
        await app.run()
        return
    watcher = asyncio.create_task(embedded.watch(give_up), name="embedded-store")
    try:
        await app.run()
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
