"""The client's side of the protocol (version 1, docs/protocol.md): what it receives, and
what can go wrong.

Requests are built as the protocol's structs (`p.Move(...)`) and encoded with its
encoder; the server's frames are read into the protocol's structs by its MessageDecoder,
which ignores fields the server adds later and hands back a message type this client does
not know as a `p.UnknownMessage`, for the rest of the client to pass over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

import msgspec

import protocol as p

M = TypeVar("M", bound=p.Message)


class ProtocolError(Exception):
    """The server sent something this client cannot read."""


class ServerError(Exception):
    """An `error` reply: `code` is for programs, `msg` for people."""

    def __init__(self, code: str, msg: str) -> None:
        super().__init__(f"{msg} ({code})")
        self.code = code
        self.msg = msg


@dataclass(frozen=True)
class Welcomed:
    """The first event of every session: the server's welcome, and whether the session
    follows a dropped connection."""

    welcome: p.Welcome
    reconnected: bool


# What the server may send, and what the connection hands on as events.
Incoming = p.Message | p.UnknownMessage
Event = Incoming | Welcomed


def expect(reply: Incoming, kind: type[M]) -> M:
    """The reply as the message a request is answered with; ProtocolError if it is not."""
    if not isinstance(reply, kind):
        raise ProtocolError(f"the server answered with a {tag(reply)!r} message, not {tag(kind)!r}")
    return reply


def tag(message: Incoming | type[p.Message]) -> str:
    if isinstance(message, p.UnknownMessage):
        return message.t
    return str(message.__struct_config__.tag)


def as_plain(message: msgspec.Struct) -> dict[str, Any]:
    """A message's fields as the frame carried them (for --plain's JSON lines and logs)."""
    out: dict[str, Any] = msgspec.to_builtins(message)
    return out
