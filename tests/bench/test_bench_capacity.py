"""bench/capacity.py still runs end to end: a tiny ramp (two steps of a few racing
players, each in a bot process of its own) against a real server and Redis, once with one
server process and once with two, then against the durable relay (and, in a second run,
the durable echo and the echo), whose own checks (no error, every acknowledged move found
in the store and none beyond) decide its exit code. Its figures are not looked at: speed
is measured, never asserted (the p99 limit is set out of reach for that reason)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STEPS = (20, 40)


def ramp(redis_url: str, *args: str) -> str:
    """A tiny ramp's report; the bench's own checks passed."""
    env = {**os.environ, "REDIS_URL": redis_url}
    out = subprocess.run(
        [sys.executable, "-m", "bench.capacity",
         "--steps", ",".join(map(str, STEPS)), "--warmup", "1", "--seconds", "2",
         "--pace", "0.5", "--per-process", "20", "--p99-ms", "100000", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "OK: every acknowledged move stored and no error" in out.stdout
    return out.stdout


def tables(text: str) -> dict[str, str]:
    """Each ramp's table of steps, by the ramp's name ("race --workers 1", "relay")."""
    runs = re.split(r"^  ([a-z -]+?(?: \d)?): server resident memory", text, flags=re.MULTILINE)
    return dict(zip(runs[1::2], runs[2::2], strict=True))


def check_steps(table: str, fan_out: bool) -> None:
    # A row for each step: its players, moves acknowledged per second, p50, p99, the
    # progress events received (each move of a race or the relay fans out to every other
    # seat), and no error.
    rows = [line.split() for line in table.splitlines() if re.match(r"^\s+\d+\s", line)]
    assert [int(r[0]) for r in rows[: len(STEPS)]] == list(STEPS), table
    for r in rows[: len(STEPS)]:
        moves_s, p50, p99, progress_s, errors = map(float, (r[1], r[3], r[4], r[5], r[6]))
        assert moves_s > 0 and 0 < p50 <= p99 and errors == 0, r
        assert progress_s > moves_s if fan_out else progress_s == 0, r
        # The store's longest stall: "-" where its latency monitor is off.
        assert r[-1] == "-" or float(r[-1]) >= 0, r


def stored(text: str, name: str, lists: str) -> tuple[int, int, int, int, int]:
    """A ramp's summary: (bot processes, found, acknowledged, lists, stored beyond)."""
    summary = re.search(rf"^  {name}: every step held, up to {STEPS[-1]} "
                        r"players; the players ran in (\d+) bot processes$\n"
                        r"^    held .*$\n(?:^    a move cost the server .*$\n)?"
                        r"^    errors: none$\n"
                        r"^    acknowledged moves found in the store: (\d+) of (\d+) over "
                        rf"(\d+) {lists}; (\d+) stored moves beyond$",
                        text, re.MULTILINE)  # fmt: skip
    assert summary, text
    processes, found, acked, count, beyond = map(int, summary.groups())
    return processes, found, acked, count, beyond


def test_a_tiny_ramp_reports_every_step_and_stores_every_acknowledged_move(
    redis_url: str,
) -> None:
    text = ramp(redis_url, "--workers", "1,2")  # --server race,relay: the default
    runs = tables(text)
    assert list(runs) == ["race --workers 1", "race --workers 2", "relay"], text
    for name, table in runs.items():
        check_steps(table, fan_out=True)
        processes, found, acked, count, beyond = stored(
            text, name, "games" if name.startswith("race") else "seats' lists"
        )
        assert processes == 2  # 20 players each
        assert acked > 0 and found == acked and beyond == 0
        assert count >= STEPS[-1]  # every player played a game, every seat has its list
    assert "gain of --workers 2 over --workers 1: held 40 players against 40" in text
    assert re.search(r"^  race server / relay: players held at p99 under 100000 ms 40 against "
                     r"40: 1\.00 \(target >= 0\.70\)", text, re.MULTILINE), text  # fmt: skip


def test_the_echoes_ramp_with_the_same_players(redis_url: str) -> None:
    text = ramp(redis_url, "--server", "race,durable-echo,echo")
    runs = tables(text)
    assert list(runs) == ["race --workers 1", "durable-echo", "echo"], text
    check_steps(runs["durable-echo"], fan_out=False)
    check_steps(runs["echo"], fan_out=False)
    _, found, acked, count, beyond = stored(text, "durable-echo", "log")
    assert acked > 0 and found == acked and beyond == 0 and count == 1
    assert re.search(r"^    acknowledged moves: [1-9]\d* \(the echo stores nothing\)$", text,
                     re.MULTILINE), text  # fmt: skip
    for baseline in ("durable-echo", "echo"):
        assert f"  race server / {baseline}: players held" in text


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


def test_a_tiny_ramp_on_a_redis_cluster_of_its_own(redis_url: str) -> None:
    """`--cluster 3`: the store is three valkey masters formed as the deploy files form
    them, the server runs with SOLITAIRE_REDIS_CLUSTER=1 on two workers, and the
    acknowledged moves are found on the cluster (each game's keys in their own slot)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    out = subprocess.run(
        [sys.executable, "-m", "bench.capacity", "--server", "race", "--cluster", "3",
         "--workers", "2", "--store-fsync", "everysec",
         "--steps", ",".join(map(str, STEPS)), "--warmup", "1", "--seconds", "2",
         "--pace", "0.5", "--per-process", "20", "--p99-ms", "100000"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    assert "store: a Redis Cluster of the bench's own: 3 valkey-server masters" in text
    runs = tables(text)
    assert list(runs) == ["race --workers 2"], text
    check_steps(runs["race --workers 2"], fan_out=True)
    _, found, acked, _, beyond = stored(text, "race --workers 2", "games")
    assert acked > 0 and found == acked and beyond == 0
    assert "server log: 0 WARNING or ERROR lines" in text
