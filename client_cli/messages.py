"""The protocol's messages as the client reads them (PROTOCOL.md, version 1).

Frames are msgpack maps; `decode` checks that a frame is one, and `parse`
turns a map into a typed struct, validating field types at the edge so the
rest of the client never sees a malformed value. Fields the server adds later
are ignored.
"""

from __future__ import annotations

from typing import Any

import msgpack
import msgspec

PROTOCOL_VERSION = 1


class ProtocolError(Exception):
    """The server sent something this client cannot read."""


class ServerError(Exception):
    """An `error` reply: `code` is for programs, `msg` for people."""

    def __init__(self, code: str, msg: str) -> None:
        super().__init__(f"{msg} ({code})")
        self.code = code
        self.msg = msg


class State(msgspec.Struct):
    gid: str
    kind: str
    game: str
    n: int
    view: dict[str, Any]
    score: int
    won: bool
    over: bool
    finished: bool
    elapsed_ms: int = 0
    race: str | None = None
    date: str | None = None
    seed: int | None = None  # practice games only


class Welcome(msgspec.Struct):
    v: int
    player: str
    name: str
    token: str
    active: list[dict[str, Any]] = []


class Player(msgspec.Struct):
    player: str
    name: str


class Lobby(msgspec.Struct):
    race: str
    game: str
    host: str
    players: list[Player]


class Created(msgspec.Struct):
    race: str
    game: str
    max_players: int | None = None
    time_limit_s: int | None = None


class Start(msgspec.Struct):
    race: str
    game: str
    starts_at_ms: int = 0
    ends_at_ms: int | None = None


class Progress(msgspec.Struct):
    race: str
    player: str
    name: str
    score: int
    moves: int
    won: bool = False
    over: bool = False
    finished: bool = False
    elapsed_ms: int = 0


class Standing(msgspec.Struct):
    rank: int
    player: str
    name: str
    score: int
    moves: int
    time_ms: int
    won: bool = False
    resigned: bool = False


class Result(msgspec.Struct):
    race: str
    game: str
    seed: int
    standings: list[Standing]


class Entry(msgspec.Struct):
    rank: int
    player: str
    name: str
    score: int
    moves: int
    time_ms: int
    won: bool = False
    # On the all-time board (date "all"): days played, days won, longest daily streak.
    played: int | None = None
    days_won: int | None = None
    best_streak: int | None = None
    new: bool = False  # day boards: the player was made that day


class DailyStatus(msgspec.Struct):
    """Where the player stands at today's daily (the reply to an unconfirmed `daily`)."""

    game: str
    date: str
    status: str  # not_started, in_progress or finished
    ends_at_ms: int = 0
    gid: str | None = None


class Leaderboard(msgspec.Struct):
    game: str
    date: str
    total: int
    entries: list[Entry]
    me: Entry | None = None
    seed: int | None = None
    par: int | None = None  # past days: the length of a winning line of the deal
    line: list[str] | None = None


class Hint(msgspec.Struct):
    gid: str
    n: int
    move: str | None
    verdict: str


TYPES: dict[str, type[msgspec.Struct]] = {
    "state": State,
    "welcome": Welcome,
    "lobby": Lobby,
    "created": Created,
    "start": Start,
    "progress": Progress,
    "result": Result,
    "leaderboard": Leaderboard,
    "hint": Hint,
    "daily": DailyStatus,
}


def encode(message: dict[str, Any]) -> bytes:
    return msgpack.packb(message, use_bin_type=True)


def decode(frame: bytes | str) -> dict[str, Any]:
    if isinstance(frame, str):
        raise ProtocolError("the server sent a text frame")
    try:
        message = msgpack.unpackb(frame, raw=False, strict_map_key=True)
    except Exception as exc:
        raise ProtocolError(f"undecodable frame: {exc}") from exc
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise ProtocolError("a frame that is not a message map")
    return message


def parse(message: dict[str, Any]) -> Any:
    """The typed form of a known message; unknown types come back as the plain dict."""
    kind = TYPES.get(message["t"])
    if kind is None:
        return message
    try:
        return msgspec.convert(message, kind)
    except msgspec.ValidationError as exc:
        raise ProtocolError(f"malformed {message['t']!r} message: {exc}") from exc


def as_error(message: dict[str, Any]) -> ServerError:
    return ServerError(str(message.get("code", "internal")), str(message.get("msg", "")))
