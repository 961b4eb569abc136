"""bench/capacity.py still runs end to end: a tiny ramp (two steps of a few racing
players, each in a bot process of its own) against a real server and Redis, once with one
server process and once with two, whose own checks (no error, every acknowledged move
found in the store and none beyond) decide its exit code. Its figures are not looked at:
speed is measured, never asserted (the p99 limit is set out of reach for that reason)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = (20, 40)


def test_a_tiny_ramp_reports_every_step_and_stores_every_acknowledged_move(
    redis_url: str,
) -> None:
    env = {**os.environ, "REDIS_URL": redis_url}
    out = subprocess.run(
        [sys.executable, "-m", "bench.capacity",
         "--steps", ",".join(map(str, STEPS)), "--warmup", "1", "--seconds", "2",
         "--pace", "0.5", "--per-process", "20", "--workers", "1,2", "--p99-ms", "100000"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    runs = re.split(r"^  --workers (\d): server resident memory", text, flags=re.MULTILINE)
    assert [runs[1], runs[3]] == ["1", "2"], text
    for table in (runs[2], runs[4]):
        # A row for each step: its players, moves acknowledged per second, p50, p99, the
        # progress events received (each move fans out to every seat), and no error.
        rows = [line.split() for line in table.splitlines() if re.match(r"^\s+\d+\s", line)]
        assert [int(r[0]) for r in rows[: len(STEPS)]] == list(STEPS), table
        for r in rows[: len(STEPS)]:
            moves_s, p50, p99, progress_s, errors = map(float, (r[1], r[3], r[4], r[5], r[6]))
            assert moves_s > 0 and 0 < p50 <= p99 and progress_s > moves_s and errors == 0, r
            # The store's longest stall: "-" where its latency monitor is off.
            assert r[-1] == "-" or float(r[-1]) >= 0, r
    for workers in ("1", "2"):
        summary = re.search(rf"^  --workers {workers}: every step held, up to {STEPS[-1]} "
                            r"players; the players ran in (\d+) bot processes$\n"
                            r"^    held .*$\n^    errors: none$\n"
                            r"^    acknowledged moves found in the store: (\d+) of (\d+) over "
                            r"(\d+) games; (\d+) stored moves beyond$",
                            text, re.MULTILINE)  # fmt: skip
        assert summary, text
        processes, found, acked, games, beyond = map(int, summary.groups())
        assert processes == 2  # 20 players each
        assert acked > 0 and found == acked and beyond == 0
        assert games >= STEPS[-1]  # every player played a game
    assert "gain of --workers 2 over --workers 1: held 40 players against 40" in text
    assert "OK: every acknowledged move stored and no error" in text


def test_the_disk_probe_times_real_fsyncs_and_leaves_nothing(tmp_path: Path) -> None:
    from bench.capacity import disk_fsync_line

    line = disk_fsync_line(tmp_path, seconds=0.3)
    got = re.search(r"(\d+) fsyncs of 512-byte appends in 0.3 s: p50 ([\d.]+) ms, p99 "
                    r"([\d.]+) ms, p99.9 ([\d.]+) ms, max ([\d.]+) ms", line)  # fmt: skip
    assert got, line
    count, p50, p99, p999, top = int(got[1]), *map(float, got.groups()[1:])
    # At most one append a millisecond (the probe sleeps 1 ms between them).
    assert 0 < count <= 300 and 0 <= p50 <= p99 <= p999 <= top, line
    assert list(tmp_path.iterdir()) == []
