"""Runs one server process: its event loop, and its errors turned into an exit code."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from server.config import Config
from server.store.errors import STORE_ERRORS

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


def serve(config: Config, redis_url: str) -> int:
    """Serves until SIGTERM or SIGINT; the process's exit code."""
    from server.app import App  # imported late so that --help stays fast

    try:
        with asyncio.Runner(loop_factory=loop_factory(config.event_loop)) as runner:
            runner.run(App(config, redis_url).run())
    except KeyboardInterrupt:
        pass
    except STORE_ERRORS as exc:
        log.error("cannot serve: %s", exc)
        return 1
    return 0
