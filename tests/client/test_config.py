"""The settings file: where it lives, who may read it, what it remembers."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from client_cli.config import Config, config_path, normalise_server


def test_lives_under_xdg_config_home_with_mode_0600(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_path() == tmp_path / "solitaire-race" / "config.toml"
    config = Config.load()
    config.name = 'Zoë "the ace"'
    config.tokens["ws://a:1/ws"] = "secret-token"
    config.save()
    assert stat.S_IMODE(config.path.stat().st_mode) == 0o600
    again = Config.load()
    assert again.name == 'Zoë "the ace"'
    assert again.token_for("ws://a:1/ws") == "secret-token"
    assert again.token_for("ws://b:1/ws") is None


def test_server_urls_are_normalised() -> None:
    assert normalise_server("example.org:8765") == "ws://example.org:8765/ws"
    assert normalise_server("wss://example.org") == "wss://example.org/ws"
    assert normalise_server("https://example.org/ws") == "wss://example.org/ws"
    with pytest.raises(ValueError):
        normalise_server("ftp://example.org")
