"""bench/store_cost.py still runs end to end: a short run on a store of its own (its
counters must count only the bench's work, so it never uses the shared REDIS_URL), with
real servers and clients. Checked: the table has a row for each kind of move, and each
kind cost the store some commands. Its figures are not looked at otherwise: speed is
measured, never asserted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.store_cost import KINDS

ROOT = Path(__file__).resolve().parents[2]


def test_a_short_run_prints_each_kind_with_its_commands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bench.store_cost", "--games", "4", "--idle-s", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("kind "))
    assert lines[header].split()[1:3] == ["moves", "cmds/move"], lines[header]
    rows = {line[:13].strip(): line[13:].split() for line in lines[header + 1 :][: len(KINDS)]}
    assert list(rows) == list(KINDS), out.stdout
    for kind, cells in rows.items():
        moves, commands, cpu_us = int(cells[0]), float(cells[1]), float(cells[5])
        assert moves > 0 and commands > 0, (kind, cells)
        assert cpu_us == cpu_us, (kind, cells)  # a number, not nan
    for kind in KINDS:
        assert any(line.startswith(f"  {kind}, commands/move: ") for line in lines), kind
    # Every kind of move runs the group commit's script: one EVALSHA per move or more.
    assert "evalsha" in out.stdout
