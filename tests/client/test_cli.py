"""The command line: every command has help, and subcommands come from one list."""

from __future__ import annotations

import subprocess

import pytest
from client_harness import SOLITAIRE

from client_cli.__main__ import build_parser
from client_cli.commands import SUBCOMMAND_MODULES


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ([], ["race", "daily", "leaderboard", "stats", "--server", "--plain", "--ascii"]),
        (["race", "new"], ["GAME", "--seed", "--time-limit", "Tab"]),
        (["race", "join"], ["CODE", "carry on"]),
        (["daily"], ["one", "ranked attempt", "rank"]),
        (["leaderboard"], ["--date", "all", "--around-me"]),
        (["stats"], ["streaks"]),
        (["practice"], ["GAME", "--seed", "undo", "hint", "unranked"]),
        (["solve"], ["GAME", "SEED", "--budget-s", "verdict", "line"]),
    ],
)
def test_every_command_has_helpful_help(args: list[str], expected: list[str]) -> None:
    out = subprocess.run([SOLITAIRE, *args, "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    for word in expected:
        assert word in out.stdout, (word, out.stdout)


def test_subcommands_are_registered_from_one_list() -> None:
    parser = build_parser()
    for name in ("race", "daily", "leaderboard", "stats", "practice", "solve"):
        assert f"client_cli.commands.{name}" in SUBCOMMAND_MODULES
    args = parser.parse_args(["--plain", "leaderboard", "bakers-game", "--date", "all"])
    assert (args.plain, args.game, args.date) == (True, "bakers_game", "all")
    # Common options work after the subcommand too, without undoing those before it.
    args = parser.parse_args(["--plain", "daily", "hopscotch", "--ascii"])
    assert args.plain and args.ascii


def test_bad_arguments_are_refused_clearly() -> None:
    out = subprocess.run([SOLITAIRE, "daily", "spider"], capture_output=True, text=True)
    assert out.returncode == 2 and "unknown game 'spider'" in out.stderr
    out = subprocess.run([SOLITAIRE, "race", "join", "nope"], capture_output=True, text=True)
    assert out.returncode == 2 and "not a race code" in out.stderr


def test_an_unreachable_server_is_reported_not_waited_for(tmp_path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([SOLITAIRE, "--server", "127.0.0.1:9", "--plain", "daily", "quatorze"],
                         capture_output=True, text=True, env=env, timeout=30)  # fmt: skip
    assert out.returncode == 1
    assert "cannot reach the server at ws://127.0.0.1:9/ws" in out.stderr
