#!/usr/bin/env python3
"""What an idle player's WebSocket costs the balancer: HAProxy's memory per connection.

    .venv/bin/python -m bench.balancer_memory [--idle 9000]

For the capacity model (deploy/README): every player's connection passes through the
balancer for as long as it plays, so at a million players the balancer holds a million
tunnels. This starts a race server (bench/race_server.py) and Debian's `haproxy` in front
of it with the settings of deploy/haproxy.cfg that bear on a tunnel (HTTP mode, the
WebSocket upgrade passed through, `timeout tunnel 1h`) and a `maxconn` above `--idle`;
opens `--idle` connections through it, each greeted as a player with a hello (bench/
idle_connections.py's helpers), and prints HAProxy's resident memory per connection, beside
the server's for the same connections.

HAProxy holds two sockets per connection (the player's and the server's), and the bench's
helpers one more: the machine's hard open-file limit bounds `--idle` (a third of it at
most here). Needs `haproxy` on the PATH (`apt-get install haproxy`); loopback only, stops
by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.race_server import (
    free_port,
    idle_players,
    rss_kb,
    run_on_redis,
    running_race_server,
    wait_port,
)

SETTLE_S = 1.0

CONFIG = """\
global
    maxconn {maxconn}
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout http-request 10s
    timeout tunnel 1h
frontend players
    bind 127.0.0.1:{port}
    default_backend servers
backend servers
    server server 127.0.0.1:{server_port}
"""


async def run(args: argparse.Namespace, redis_url: str) -> int:
    haproxy = shutil.which("haproxy") or "/usr/sbin/haproxy"
    if not Path(haproxy).exists():
        print("no haproxy on this machine: apt-get install haproxy", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-balancer-") as d:
        tmp = Path(d)
        async with running_race_server(redis_url) as server:
            port = free_port()
            cfg = tmp / "haproxy.cfg"
            cfg.write_text(CONFIG.format(maxconn=args.idle + 100, port=port,
                                         server_port=server.port))  # fmt: skip
            quiet = subprocess.DEVNULL
            balancer = subprocess.Popen([haproxy, "-f", str(cfg), "-db"], stdout=quiet,
                                        stderr=quiet)  # fmt: skip
            try:
                await asyncio.to_thread(wait_port, port)
                await asyncio.sleep(SETTLE_S)
                lb_before, server_before = rss_kb(balancer.pid), rss_kb(server.proc.pid)
                url = f"ws://127.0.0.1:{port}/ws"
                async with idle_players(url, args.idle, log=server.log):
                    lb_kb = (rss_kb(balancer.pid) - lb_before) / args.idle
                    server_kb = (rss_kb(server.proc.pid) - server_before) / args.idle
            finally:
                balancer.terminate()
                balancer.wait(10)
    version = subprocess.run([haproxy, "-v"], capture_output=True, text=True).stdout
    print(f"  {version.splitlines()[0] if version else 'haproxy'}")
    print(f"  {args.idle} idle greeted players through the balancer: HAProxy {lb_kb:.1f} KB "
          f"a connection (its resident memory grew {lb_kb * args.idle / 1024:.0f} MB), the "
          f"server {server_kb:.1f} KB a connection")  # fmt: skip
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--idle", type=int, default=9000,
                        help="connections through the balancer (default 9000)")  # fmt: skip
    args = parser.parse_args()
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if not 100 <= args.idle <= hard // 2 - 500:
        parser.error(f"--idle: 100..{hard // 2 - 500} (the hard open-file limit is {hard}: "
                     "HAProxy holds two sockets a connection)")  # fmt: skip
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # haproxy inherits it
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    return run_on_redis(run, args)


if __name__ == "__main__":
    sys.exit(main())
