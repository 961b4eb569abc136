"""bench/server.py still runs end to end: a short run against a real server and Redis,
whose own checks (every acknowledged move found in the store, no bot error) decide its
exit code. Its figures are not looked at: speed is measured, never asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("seats", [4, 1])
def test_a_short_bench_run_stores_every_acknowledged_move(redis_url: str, seats: int) -> None:
    env = {**os.environ, "REDIS_URL": redis_url}
    out = subprocess.run(
        [sys.executable, "-m", "bench.server", "--players", "8", "--seconds", "1",
         "--warmup", "0.5", "--rounds", "1", "--idle", "20" if seats == 4 else "0",
         "--async-share", "0", "--seats", str(seats)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"races and relay in tables of {seats}" in out.stdout
    stored = re.search(r"races played: (\d+); errors: (\d+); acknowledged moves found in the "
                       r"store: (\d+) of (\d+)", out.stdout)  # fmt: skip
    assert stored, out.stdout
    races, errors, found, acknowledged = map(int, stored.groups())
    assert errors == 0
    assert acknowledged > 0 and found == acknowledged
    # Tables of `seats`: two tables of four, or eight bots racing alone.
    assert races >= 8 // seats
    relay = re.search(r"durable relay: errors: (\d+); acknowledged moves found in the store: "
                      r"(\d+) of (\d+)", out.stdout)  # fmt: skip
    assert relay, out.stdout
    errors, found, acknowledged = map(int, relay.groups())
    assert errors == 0 and acknowledged > 0 and found == acknowledged
    # Every load ran: a row for each server, with moves counted, and the ratios to each
    # baseline.
    for name in ("echo, round 1", "durable echo, round 1", "relay, round 1",
                 "solitaire-server, round 1"):  # fmt: skip
        row = next(line for line in out.stdout.splitlines() if name in line)
        assert float(row.split(name, 1)[1].split()[0]) > 0, row
    for baseline in ("echo", "durable echo", "relay"):
        assert f"ratio server/{baseline} (medians): throughput " in out.stdout
