"""`solitaire-server`: run the race server (see `solitaire-server --help`)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence

from server import logs
from server.config import Config
from server.runner import raise_open_files, serve
from server.store.embedded import DataDirInUse, EmbeddedRedis
from server.workers import supervise, worker_count

log = logging.getLogger("server")


def main(argv: Sequence[str] | None = None) -> int:
    config = Config.from_args(argv)
    logs.setup(config.log_level, config.log_format)
    log.info("settings: %s", config.describe())
    raise_open_files()
    workers = worker_count(config.workers)
    embedded: EmbeddedRedis | None = None
    url = config.redis_url
    if config.redis_cluster and not url:
        log.error("SOLITAIRE_REDIS_CLUSTER=1 needs REDIS_URL naming a node of the cluster")
        return 2
    if not url:
        embedded = EmbeddedRedis(data_dir=config.data_dir / "valkey", fsync=config.store_fsync)
        try:
            url = embedded.start()
        except DataDirInUse as exc:
            log.error("not starting: %s", exc)
            return 1
        except Exception as exc:
            log.error("could not start the embedded Redis: %s", exc)
            return 1
    try:
        if workers == 1:
            return serve(config, url, embedded)
        return supervise(config, url, workers, embedded)
    finally:
        if embedded is not None:
            embedded.stop()


if __name__ == "__main__":
    sys.exit(main())
