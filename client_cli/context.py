"""What every command needs: the settings, where to connect and how to draw."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from client_cli.config import Config
from client_cli.connection import ConnectError, Connection, ConnectionLost
from client_cli.messages import ProtocolError, ServerError
from client_cli.theme import Theme

# The ways a one-off exchange with the server fails, each said by Context.failure.
EXCHANGE_FAILURES = (ConnectError, ServerError, ConnectionLost, ProtocolError)
ExchangeFailure = ConnectError | ServerError | ConnectionLost | ProtocolError


@dataclass
class Context:
    """What every command needs: settings, where to connect, how to draw."""

    config: Config
    server: str
    name: str
    theme: Theme
    plain: bool
    server_source: str = "option"  # where `server` came from: option, env, saved, default

    def connection(self, on_status: Callable[[str], None]) -> Connection:
        def remember(token: str) -> None:
            self.config.tokens[self.server] = token
            self.remember_server()
            self.config.save()

        return Connection(
            self.server,
            self.name,
            self.config.token_for(self.server),
            on_status=on_status,
            on_token=remember,
        )

    def remember_server(self) -> None:
        """A --server (or the default) that worked becomes the saved one (not saved here:
        callers save). $SOLITAIRE_SERVER is not saved: it applies while it is set."""
        if self.server_source in ("option", "default"):
            self.config.server = self.server

    def opened(self) -> None:
        """The server welcomed us: remember the --server (or default) that reached it."""
        if self.server_source in ("option", "default") and self.config.server != self.server:
            self.remember_server()
            self.config.save()

    def failure(self, error: ExchangeFailure) -> str:
        """What a command that asked the server one thing says when that failed."""
        if isinstance(error, ConnectError):
            return self.unreachable(error)
        if isinstance(error, ServerError):
            return f"{error.msg} ({error.code})"
        return str(error)

    def unreachable(self, error: ConnectError) -> str:
        """The connection error, and where the address came from and how to change it
        (not when the server answered and refused: then its address is not the problem)."""
        if error.refused:
            return str(error)
        pick = "pick another with --server HOST:PORT (saved once a session with it succeeds)"
        where = {
            "option": f"Check the address given with --server, or {pick}. "
            + (
                f"It was not saved: without --server the client still uses {self.config.server}."
                if self.config.server
                else "It was not saved."
            ),
            "env": f"That address is $SOLITAIRE_SERVER: change the variable, or {pick}.",
            "saved": f"That is the saved server (in {self.config.path}); {pick}.",
            "default": f"That is the default server; {pick}, or set $SOLITAIRE_SERVER.",
        }[self.server_source]
        return f"{error}\n" + textwrap.fill(where, 78)
