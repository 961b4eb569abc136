"""bench/long_games.py still runs end to end: a short run against a real server and Redis,
whose own check (every undo answered) decides its exit code. Its figures are not looked
at: speed is measured, never asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_bench_run_answers_every_undo(redis_url: str) -> None:
    env = {**os.environ, "REDIS_URL": redis_url}
    out = subprocess.run(
        [sys.executable, "-m", "bench.long_games", "--moves", "1200",
         "--seconds", "0.5", "--rounds", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    for line in ("grew a practice game to 1200 moves", "ratio with undos / alone: p50",
                 "undos of the 1200-move game:", "server: "):  # fmt: skip
        assert line in out.stdout, out.stdout
