"""bench/soak.py runs end to end: a few seconds of every kind of load on a real server and
Redis, whose own checks (no real error, every acknowledged move stored, a clean stop)
decide its exit code. Its figures are not looked at: speed is measured, never asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KINDS = ("races", "races with server bots", "daily attempts", "practice", "abusive client")


def test_a_short_soak_runs_every_kind_of_load_and_stores_every_acknowledged_move(
    redis_url: str,
) -> None:
    env = {**os.environ, "REDIS_URL": redis_url}
    out = subprocess.run(
        [sys.executable, "-m", "bench.soak", "--minutes", "0.1", "--pace", "0.2"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "real errors: none" in out.stdout, out.stdout
    stored = re.search(r"acknowledged moves found in the store: (\d+) of (\d+) over \d+ games; "
                       r"(\d+) stored moves beyond", out.stdout)  # fmt: skip
    assert stored, out.stdout
    found, acknowledged, extra = map(int, stored.groups())
    assert acknowledged > 0 and found == acknowledged and extra == 0
    # Every kind of load ran: its line in the report, and its first count above nought
    # (races, bot races, daily attempts, practice games started; the abusive client's actions).
    for kind in KINDS:
        line = re.search(rf"^  load {kind}: (\d+) ", out.stdout, re.MULTILINE)
        assert line and int(line.group(1)) > 0, (kind, out.stdout)
    practice = re.search(r"load practice: \d+ games, (\d+) hints, \d+ undos, (\d+) moves",
                         out.stdout)  # fmt: skip
    assert practice and all(int(n) > 0 for n in practice.groups()), out.stdout
    # The abusive client was refused as the protocol says, counted apart from real errors.
    refusals = re.search(r"abusive client.s expected refusals \(and answers\): (.*)", out.stdout)
    assert refusals and "bad_request" in refusals.group(1) and "rate_limited" in refusals.group(1)
    assert "server stopped on SIGTERM with exit code 0; 0 ERROR lines" in out.stdout
