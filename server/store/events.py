"""Events: frames for the local connections of some players, as the bus carries them."""

from __future__ import annotations

import msgspec


class Event(msgspec.Struct, array_like=True):
    """Frames for the local connections of some players (all but connection `skip`)."""

    to: list[str]
    frames: list[bytes]
    skip: str = ""


_ENCODER = msgspec.msgpack.Encoder()


def encode_events(events: list[Event]) -> bytes:
    return _ENCODER.encode(events)
