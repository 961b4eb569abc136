"""The client's settings file: which server, under which name, with which token.

It lives at $XDG_CONFIG_HOME/solitaire-race/config.toml (~/.config/... when the
variable is unset). A token is only valid on the server that issued it, so
tokens are kept per server URL. The file holds secrets, so it is written with
mode 0600, atomically (write a temporary file, then rename).
"""

from __future__ import annotations

import getpass
import json
import os
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import protocol as p

DEFAULT_SERVER = "ws://127.0.0.1:8765/ws"
APP_DIR = "solitaire-race"
MAX_NAME = p.DEFAULT_LIMITS.name_max_chars


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / APP_DIR / "config.toml"


def normalise_server(url: str) -> str:
    """Accept `host:port`, `ws://host:port` or a full URL; return a WebSocket URL ending in /ws."""
    url = url.strip()
    if "://" not in url:
        url = "ws://" + url
    scheme, rest = url.split("://", 1)
    scheme = {"http": "ws", "https": "wss"}.get(scheme, scheme)
    if scheme not in ("ws", "wss"):
        raise ValueError(f"not a WebSocket URL: {url!r}")
    if "/" not in rest:
        rest += "/ws"
    return f"{scheme}://{rest}"


def valid_name(name: str) -> bool:
    return 1 <= len(name) <= MAX_NAME and name.isprintable()


def default_name() -> str:
    """The login name: the suggestion on a first run, and the name of scripts that give none."""
    try:
        name = getpass.getuser()
    except Exception:
        name = "player"
    return (name or "player")[:MAX_NAME]


@dataclass
class Config:
    server: str | None = None  # the saved server; None: none saved yet
    name: str = field(default_factory=default_name)
    tokens: dict[str, str] = field(default_factory=dict)
    path: Path = field(default_factory=config_path)
    name_saved: bool = False  # the file has a name (False on a first run: `name` is a guess)

    @classmethod
    def load(cls, path: Path | None = None) -> Config:
        path = path or config_path()
        config = cls(path=path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return config
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from exc
        if isinstance(data.get("server"), str):
            config.server = data["server"]
        if isinstance(data.get("name"), str) and data["name"]:
            config.name = data["name"][:MAX_NAME]
            config.name_saved = True
        tokens = data.get("tokens", {})
        if isinstance(tokens, dict):
            config.tokens = {k: v for k, v in tokens.items() if isinstance(v, str)}
        return config

    def token_for(self, server: str) -> str | None:
        return self.tokens.get(server)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # JSON string escapes are valid TOML basic-string escapes.
        lines = [
            "# solitaire-race client settings; the tokens prove who you are: keep them secret.",
            *([f"server = {json.dumps(self.server)}"] if self.server else []),
            f"name = {json.dumps(self.name)}",
            "",
            "[tokens]",
            *(f"{json.dumps(url)} = {json.dumps(tok)}" for url, tok in sorted(self.tokens.items())),
        ]
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".config-", suffix=".tmp")
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write("\n".join(lines) + "\n")
            os.replace(tmp, self.path)
            self.name_saved = True
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


class ConfigError(Exception):
    pass
