"""The command line: every command has help, and subcommands come from one list."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from client_harness import SOLITAIRE
from support.server_proc import ServerProcess

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
        (["stats"], ["streaks", "rating"]),
        (["quick"], ["GAME", "Ctrl-C", "rated", "bot"]),
        (["ratings"], ["GAME", "1500", "provisional", "--around-me"]),
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


def saved_server(home: Path) -> str | None:
    path = home / "solitaire-race" / "config.toml"
    return tomllib.loads(path.read_text()).get("server") if path.exists() else None


def test_a_server_is_saved_only_once_a_session_with_it_succeeded(
    server: ServerProcess, tmp_path: Path
) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([SOLITAIRE, *args, "leaderboard", "quatorze"], capture_output=True,
                             text=True, env=env, timeout=30)  # fmt: skip
        out.stderr = " ".join(out.stderr.split())  # the advice is wrapped at 78 columns
        return out

    # Nothing saved and nothing reached: not saved, and told how to pick another.
    out = run("--server", "127.0.0.1:9")
    assert out.returncode == 1
    assert "cannot reach the server at ws://127.0.0.1:9/ws" in out.stderr
    assert "--server HOST:PORT" in out.stderr and "It was not saved." in out.stderr
    assert saved_server(tmp_path) is None
    # A server that answers is saved...
    assert run("--server", server.ws_url).returncode == 0
    assert saved_server(tmp_path) == server.ws_url
    # ...and a mistyped one afterwards does not replace it: later commands still work.
    out = run("--server", "127.0.0.1:9")
    assert out.returncode == 1
    assert f"without --server the client still uses {server.ws_url}" in out.stderr
    assert saved_server(tmp_path) == server.ws_url
    assert run().returncode == 0
    # The saved server itself unreachable: the error says it is the saved one and where.
    server.stop()
    out = run()
    assert out.returncode == 1
    assert "That is the saved server (in " in out.stderr and "config.toml" in out.stderr
    assert "--server HOST:PORT" in out.stderr
