"""bench/server.py still runs end to end: a short run against a real server and Redis,
whose own checks (every acknowledged move found in the store, no bot error) decide its
exit code. Its figures are not looked at: speed is measured, never asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_bench_run_stores_every_acknowledged_move(redis_url: str) -> None:
    env = {**os.environ, "REDIS_URL": redis_url}
    out = subprocess.run(
        [sys.executable, "-m", "bench.server", "--players", "6", "--seconds", "1",
         "--warmup", "0.5", "--rounds", "1", "--idle", "20"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    stored = re.search(r"errors: (\d+); acknowledged moves found in the store: (\d+) of (\d+)",
                       out.stdout)  # fmt: skip
    assert stored, out.stdout
    errors, found, acknowledged = map(int, stored.groups())
    assert errors == 0
    assert acknowledged > 0 and found == acknowledged
    # Both loads ran: a row for each server, with moves counted.
    for name in ("echo, round 1", "solitaire-server, round 1"):
        row = next(line for line in out.stdout.splitlines() if name in line)
        assert float(row.split(name, 1)[1].split()[0]) > 0, row
