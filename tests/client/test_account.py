"""One player on two machines (`solitaire account export` / `import`), and a name that is
someone else's: the real client against a real server."""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from client_harness import SOLITAIRE, Terminal
from support import netns
from support.server_proc import ServerProcess

from client_cli.config import DEFAULT_SERVER


def solitaire(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    home.mkdir(parents=True, exist_ok=True)
    env = {"XDG_CONFIG_HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run([SOLITAIRE, *args], env=env, input=stdin, capture_output=True,
                          text=True, timeout=30)  # fmt: skip


def me(home: Path, server: ServerProcess) -> dict:
    """The player this config dir is on the server (its `stats` reply)."""
    out = solitaire(home, "--plain", "--server", server.ws_url, "stats")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def settings(home: Path) -> dict:
    return tomllib.loads((home / "solitaire-race" / "config.toml").read_text())


def test_a_recovery_code_moves_the_player_to_another_machine(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    laptop, desktop = tmp_path / "players" / "laptop", tmp_path / "players" / "desktop"
    first = solitaire(laptop, "--server", server.ws_url, "--name", "ann", "stats")
    assert first.returncode == 0, first.stderr
    ann = me(laptop, server)

    out = solitaire(laptop, "account", "export")
    assert out.returncode == 0, out.stderr
    code = out.stdout.strip()
    assert code.startswith("sr1.") and "\n" not in code
    assert "password" in out.stderr and "solitaire account import" in out.stderr
    assert settings(laptop)["tokens"][server.ws_url] not in out.stderr

    # On the other machine the code is typed at a prompt that does not echo it.
    term = terminals("desktop", "account", "import")
    term.wait_for(r"Recovery code \(not shown\):")
    term.enter(code)
    term.wait_for(rf"You are ann on {server.ws_url} on this machine now")
    assert code not in term.screen()
    term.wait_for(r"\[exited 0\]")
    saved = settings(desktop)
    assert saved["server"] == server.ws_url and saved["name"] == "ann"
    assert saved["tokens"] == settings(laptop)["tokens"]
    # Without --server, the desktop now is ann on that server: same player id, same name.
    out = solitaire(desktop, "--plain", "stats")
    assert out.returncode == 0, out.stderr
    again = json.loads(out.stdout)
    assert (again["player"], again["name"]) == (ann["player"], "ann")


def test_import_keeps_a_player_the_machine_has_unless_forced(
    server: ServerProcess, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    assert solitaire(one, "--server", server.ws_url, "--name", "uno", "stats").returncode == 0
    assert solitaire(two, "--server", server.ws_url, "--name", "dos", "stats").returncode == 0
    code = solitaire(one, "account", "export").stdout.strip()

    refused = solitaire(two, "account", "import", code)
    assert refused.returncode == 2
    assert "already has a player" in refused.stderr and "--force" in refused.stderr
    assert me(two, server)["name"] == "dos"

    # The code may also come on stdin (out of the shell's history), with spaces around it.
    forced = solitaire(two, "account", "import", "--force", stdin=f"  {code}\n")
    assert forced.returncode == 0, forced.stderr
    assert me(two, server)["player"] == me(one, server)["player"]

    for damaged in (code[:-6], "sr1.!!!", "not-a-code"):
        out = solitaire(tmp_path / "three", "account", "import", damaged)
        assert out.returncode == 2 and "not a recovery code" in out.stderr, (damaged, out.stderr)
    nothing = solitaire(tmp_path / "four", "--server", server.ws_url, "account", "export")
    assert nothing.returncode == 2 and "no player on" in nothing.stderr


def test_a_taken_name_is_refused_with_a_way_out(server: ServerProcess, tmp_path: Path) -> None:
    first = solitaire(tmp_path / "a", "--server", server.ws_url, "--name", "Zed", "stats")
    assert first.returncode == 0, first.stderr
    out = solitaire(tmp_path / "b", "--server", server.ws_url, "--name", "zed", "stats")
    assert out.returncode == 1
    assert "the name 'zed' is taken" in out.stderr and "(name_taken)" in out.stderr
    assert "--name NAME" in out.stderr
    # The server answered, so its address is right: no advice about choosing a server.
    assert "--server HOST:PORT" not in out.stderr and "address" not in out.stderr, out.stderr
    out = solitaire(tmp_path / "b", "--server", server.ws_url, "--name", "zed2", "stats")
    assert out.returncode == 0, out.stderr


def test_export_on_a_machine_that_never_saved_a_server_takes_the_default(tmp_path: Path) -> None:
    out = solitaire(tmp_path / "fresh", "account", "export")
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert f"this machine has no player on {DEFAULT_SERVER} yet" in out.stderr


def test_the_default_server_is_saved_after_a_session_and_exported(
    redis_namespace: str, tmp_path: Path
) -> None:
    """A player who never names a server plays on the default one (127.0.0.1:8765): after a
    session the settings say so, and `account export` gives that player's code. The server
    runs on the default port in a network namespace of its own, with the client."""
    reason = netns.unavailable()
    if reason is not None:
        pytest.skip(reason)
    port = int(DEFAULT_SERVER.rsplit(":", 1)[1].split("/")[0])
    home = tmp_path / "home"
    home.mkdir()
    with netns.Machine.linked() as box:
        server = ServerProcess(None, redis_namespace, tmp_path / "server", port=port,
                               host="0.0.0.0", address=box.address,
                               prefix=box.command([]))  # fmt: skip
        server.start()
        try:
            env = {"XDG_CONFIG_HOME": str(home), "PATH": "/usr/bin:/bin"}
            run = subprocess.run(box.command([SOLITAIRE, "--name", "dee", "--plain", "stats"]),
                                 env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
            assert run.returncode == 0, run.stderr
            assert json.loads(run.stdout)["name"] == "dee"
        finally:
            server.stop()
    saved = settings(home)
    assert saved["server"] == DEFAULT_SERVER
    assert set(saved["tokens"]) == {DEFAULT_SERVER}
    out = solitaire(home, "account", "export")
    assert out.returncode == 0, out.stderr
    assert f"of dee on {DEFAULT_SERVER}" in out.stderr
    assert out.stdout.startswith("sr1.")


def test_the_first_run_asks_for_a_name_suggesting_the_login_name(
    terminals: Callable[..., Terminal], server: ServerProcess, tmp_path: Path
) -> None:
    term = terminals("newbie", "--server", server.ws_url, "stats", env={"LOGNAME": "jdoe"})
    term.wait_for(r"Your name \[jdoe\]:")
    term.enter("Zoë")
    term.wait_for(r"\[exited 0\]")
    assert settings(tmp_path / "players" / "newbie")["name"] == "Zoë"
    # Asked once: the next run uses the name chosen.
    again = terminals("newbie", "--server", server.ws_url, "stats", env={"LOGNAME": "jdoe"})
    again.wait_for(r"\[exited 0\]")
    assert "Your name" not in again.screen()
    # Enter takes the suggestion.
    other = terminals("other", "--server", server.ws_url, "stats", env={"LOGNAME": "jdoe"})
    other.wait_for(r"Your name \[jdoe\]:")
    other.enter()
    other.wait_for(r"\[exited 0\]")
    assert settings(tmp_path / "players" / "other")["name"] == "jdoe"
