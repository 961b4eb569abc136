"""One player on two machines (`solitaire account export` / `import`), and a name that is
someone else's: the real client against a real server."""

from __future__ import annotations

import json
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path

from client_harness import SOLITAIRE, Terminal
from support.server_proc import ServerProcess


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
    out = solitaire(tmp_path / "b", "--server", server.ws_url, "--name", "zed2", "stats")
    assert out.returncode == 0, out.stderr
