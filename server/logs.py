"""Logging set-up: plain text or one JSON object a line."""

from __future__ import annotations

import json
import logging
import sys
import time


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "pid": record.process,  # which worker of `--workers` says it
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


def setup(level: str, fmt: str) -> None:
    # stdout: where container runtimes and process supervisors collect a service's log.
    handler = logging.StreamHandler(sys.stdout)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        # The pid says which worker of `--workers` (server/workers.py) says it.
        text = "%(asctime)s %(levelname)s [%(process)d] %(name)s: %(message)s"
        handler.setFormatter(logging.Formatter(text))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # websockets logs every failed handshake (port scanners, health checks) at INFO.
    logging.getLogger("websockets").setLevel(max(logging.WARNING, root.level))
