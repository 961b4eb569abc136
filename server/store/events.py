"""Events: frames for the local connections of some players, as the bus carries them, and
what a race's spectators hear of them, as the event's maker decided."""

from __future__ import annotations

import msgspec


class SeatSeen(msgspec.Struct, array_like=True):
    """A race seat's board for the race's spectators, with the cards its game has never
    shown (`unseen`, engine.Game.unseen()): where the spectators are, those of every seat
    still playing are hidden from every board (server/play/spectator_boards.py)."""

    player: str
    n: int
    view: msgspec.Raw  # the seat's own public view, as its `state` carries it
    score: int
    won: bool
    over: bool
    finished: bool
    elapsed_ms: int
    unseen: bytes  # card ints, one byte each (engine.Game.unseen())


class ForSpectators(msgspec.Struct, array_like=True):
    """What the spectators of race `race` hear of an event: its frames as they are (a lobby,
    start, progress or result), then its `boards`; `seats` when the race's seats change;
    `over` on its result (the race is then no longer followed)."""

    race: str
    seats: list[str] | None = None
    boards: list[SeatSeen] = []
    over: bool = False


class Event(msgspec.Struct, array_like=True):
    """Frames for the local connections of some players (all but connection `skip`), and
    for the spectators of a race if `spectators` says so."""

    to: list[str]
    frames: list[bytes]
    skip: str = ""
    spectators: ForSpectators | None = None


_ENCODER = msgspec.msgpack.Encoder()


def encode_events(events: list[Event]) -> bytes:
    return _ENCODER.encode(events)
