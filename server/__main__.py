"""`solitaire-server`: run the race server (see `solitaire-server --help`)."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Sequence

from redis.exceptions import RedisError

from server import logs
from server.config import Config
from server.embedded_redis import EmbeddedRedis

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


def main(argv: Sequence[str] | None = None) -> int:
    config = Config.from_args(argv)
    logs.setup(config.log_level, config.log_format)
    log.info("settings: %s", config.describe())
    embedded: EmbeddedRedis | None = None
    url = config.redis_url
    if config.redis_cluster and not url:
        log.error("SOLITAIRE_REDIS_CLUSTER=1 needs REDIS_URL naming a node of the cluster")
        return 2
    if not url:
        embedded = EmbeddedRedis(data_dir=config.data_dir / "valkey")
        try:
            url = embedded.start()
        except Exception as exc:
            log.error("could not start the embedded Redis: %s", exc)
            return 1
    from server.app import App  # imported late so that --help stays fast

    try:
        with asyncio.Runner(loop_factory=loop_factory(config.event_loop)) as runner:
            runner.run(App(config, url).run())
    except KeyboardInterrupt:
        pass
    except (OSError, RedisError) as exc:
        log.error("cannot serve: %s", exc)
        return 1
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
