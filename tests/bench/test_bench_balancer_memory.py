"""bench/balancer_memory.py still runs end to end: a real HAProxy (Debian's) in front of a
real server, a few hundred greeted players held through it, and both figures printed. The
figures themselves are not checked: they are measured, never asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from support.debian import debian_tool

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_run_holds_players_through_haproxy(redis_url: str) -> None:
    haproxy = debian_tool("haproxy", "haproxy")
    env = {**os.environ, "REDIS_URL": redis_url,
           "PATH": f"{Path(haproxy).parent}:{os.environ.get('PATH', '')}"}  # fmt: skip
    out = subprocess.run(
        [sys.executable, "-m", "bench.balancer_memory", "--idle", "300"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r"^  HAProxy version \d", out.stdout, re.MULTILINE), out.stdout
    assert re.search(r"300 idle greeted players through the balancer: HAProxy -?[\d.]+ KB a "
                     r"connection .* the server -?[\d.]+ KB a connection", out.stdout)  # fmt: skip
