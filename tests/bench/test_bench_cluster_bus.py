"""bench/cluster_bus.py still runs end to end on a real three-master cluster: both loads
reach their subscriber (the bench waits for every message), and the report names each
node's role. Its figures are not checked: speed is measured, never asserted."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_run_reports_both_kinds_on_every_node() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.cluster_bus", "--masters", "3", "--messages", "500"],
        cwd=ROOT, env={k: v for k, v in os.environ.items() if k != "REDIS_URL"},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    for kind in ("PUBLISH", "SPUBLISH"):
        line = re.search(rf"^\s+{kind}: +[\d.]+ us a message over the cluster; (.*)$",
                         out.stdout, re.MULTILINE)  # fmt: skip
        assert line, out.stdout
        assert len(re.findall(r"node \d \(", line[1])) == 3, line[1]
    # A plain PUBLISH is sent on from the publisher's node, heard on another node, and
    # forwarded to the third; a sharded one stays on the node that owns the channel.
    assert re.search(r"PUBLISH: .*\(publisher's\).*\(subscriber's\).*\(other\)", out.stdout)
    assert re.search(r"SPUBLISH: .*\(publisher's and subscriber's\)", out.stdout)
