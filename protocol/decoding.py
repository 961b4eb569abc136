"""Decoding a frame into a message, or saying precisely why it cannot be one.

The server's RequestDecoder: msgspec decodes the frame into its request struct (types and
fixed constraints); then the fields whose bounds are settings are checked against the
limits the decoder was built with, in msgspec's words, so that a server running with other
limits validates with them.

A client's MessageDecoder reads the server's messages into their structs, tolerant of a
newer server: fields it adds are ignored, and a message type this side does not know comes
back as an UnknownMessage rather than as an error.
"""

from __future__ import annotations

import typing
from typing import Annotated, Any, NamedTuple

import msgspec
from msgspec import Meta, Struct

from protocol.limits import Bound, Limits
from protocol.messages import (
    MESSAGE_TYPES,
    REQUEST_TYPES,
    Message,
    Request,
    RequestId,
    State,
    Welcome,
)


class _Envelope(Struct):
    """Just enough of a frame to name it in an error: its type, id and re, unparsed."""

    t: msgspec.Raw = msgspec.Raw(b"")
    id: msgspec.Raw = msgspec.Raw(b"")
    re: msgspec.Raw = msgspec.Raw(b"")


class BadFrame(Struct):
    """A frame that did not decode into a message: why, and the request it concerns (a
    request's `id`, a reply's `re`) when that could be read."""

    msg: str
    re: int | None = None
    t: str | None = None  # the message type, when it could be read


class UnknownMessage(Struct):
    """A server message of a type this side does not know (a newer server's)."""

    t: str
    re: int | None = None


class RequestDecoder:
    """Decodes one binary frame into a Request, or says why it cannot, under `limits`."""

    def __init__(self, limits: Limits, types: tuple[type[Request], ...] = REQUEST_TYPES) -> None:
        self.limits = limits
        # A union built at run time has no static type: say what it decodes to.
        self._decoder: msgspec.msgpack.Decoder[Request] = msgspec.msgpack.Decoder(_union(types))
        self._envelope = msgspec.msgpack.Decoder(_Envelope)
        self._tags = {_tag(t) for t in types}
        self._bounds = {t: _bounded_fields(t, limits) for t in types}
        # Only the requests with rules across fields pay for calling them (a move has none).
        self._checked = {t for t in types if t.check is not Request.check}

    def decode(self, frame: bytes) -> Request | BadFrame:
        try:
            request = self._decoder.decode(frame)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return self._explain(frame, str(exc))
        except RecursionError:
            # Deeper than msgspec will go; the id and type are still answered.
            env = _read_envelope(self._envelope, frame) or _Envelope()
            return BadFrame("message is nested too deeply", _small_int(env.id), _small_str(env.t))
        cls = type(request)
        reason = _out_of_bounds(request, self._bounds[cls])
        if reason is None and cls in self._checked:
            reason = request.check(self.limits)
        if reason is None:
            return request
        t = _tag(cls)
        return BadFrame(f"bad {t}: {reason}", request.id, t)

    def decode_id(self, frame: bytes) -> int | None:
        """Just the request id of a frame, if it has a readable one."""
        env = _read_envelope(self._envelope, frame)
        return _small_int(env.id) if env is not None else None

    def _explain(self, frame: bytes, reason: str) -> BadFrame:
        return _explain(self._envelope, frame, reason, self._tags, "id")


class MessageDecoder:
    """Decodes one binary frame from the server into its Message, as a client reads them.

    Fields a newer server adds are ignored; a message of a type not in `types` comes back
    as an UnknownMessage; a frame that is no message, or a message that does not fit its
    struct, as a BadFrame saying why (its `t` is None when the frame is no message at all).
    A state's `view` (Any, as the server sends it pre-encoded) must be a map.
    """

    def __init__(self, types: tuple[type[Message], ...] = MESSAGE_TYPES) -> None:
        self._decoder: msgspec.msgpack.Decoder[Message] = msgspec.msgpack.Decoder(_union(types))
        self._envelope = msgspec.msgpack.Decoder(_Envelope)
        self._tags = {_tag(t) for t in types}

    def decode(self, frame: bytes) -> Message | UnknownMessage | BadFrame:
        try:
            message = self._decoder.decode(frame)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            bad = _explain(self._envelope, frame, str(exc), self._tags, "re")
            if bad.t is not None and bad.t not in self._tags:
                return UnknownMessage(bad.t, bad.re)
            return bad
        except RecursionError:
            return BadFrame("message is nested too deeply")
        states = message.active if isinstance(message, Welcome) else [message]
        for state in states:
            if isinstance(state, State) and not _is_map(state.view):
                t = _tag(type(message))
                return BadFrame(f"bad {t}: a state's `view` must be a map", message.re, t)
        return message


def _read_envelope(envelope: msgspec.msgpack.Decoder[_Envelope], frame: bytes) -> _Envelope | None:
    """The frame's type, id and re, unparsed; None if it is not a map with string keys."""
    try:
        return envelope.decode(frame)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    except RecursionError:
        # msgspec walks every value, even those it skips: read the top level by hand.
        fields = _top_level(frame)
        if fields is None:
            return None
        return _Envelope(*(msgspec.Raw(fields.get(k, b"")) for k in ("t", "id", "re")))


def _explain(
    envelope: msgspec.msgpack.Decoder[_Envelope],
    frame: bytes,
    reason: str,
    tags: set[str],
    number: str,  # the envelope's field that names the request: a request's id, a reply's re
) -> BadFrame:
    env = _read_envelope(envelope, frame)
    if env is None:
        return BadFrame("a frame must be one msgpack map with string keys")
    raw = getattr(env, number)
    re = _small_int(raw)
    t = _small_str(env.t)
    if not env.t:
        return BadFrame("message has no type field `t`", re)
    if t is None:
        return BadFrame("message type `t` must be a string", re)
    if t not in tags:
        return BadFrame(f"unknown message type {t!r}", re, t)
    if raw and re is None:
        return BadFrame(f"`{number}` must be an integer", None, t)
    return BadFrame(f"bad {t}: {reason}", re, t)


def _is_map(view: Any) -> bool:
    return isinstance(view, dict) and all(isinstance(k, str) for k in view)


class _Bounded(NamedTuple):
    """One field's bounds under the decoder's limits."""

    attr: str
    path: str  # as msgspec names it in errors
    chars: bool  # a string's length, rather than an int's value
    low: int | None
    high: int


def _bounded_fields(cls: type[Request], limits: Limits) -> tuple[_Bounded, ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for attr, path in zip(cls.__struct_fields__, cls.__struct_encode_fields__, strict=True):
        for base, bound in _bounds_in(hints[attr]):
            if base not in (str, int) or (base is str and bound.low is not None):
                raise TypeError(f"{cls.__name__}.{attr}: a Bound fits an int, or a str's length")
            low = getattr(limits, bound.low) if bound.low is not None else None
            high = getattr(limits, bound.high) + bound.offset
            out.append(_Bounded(attr, path, base is str, low, high))
    return tuple(out)


def _bounds_in(hint: Any) -> list[tuple[Any, Bound]]:
    """The Bounds in a field's type (through `| None`), each with the type it bounds."""
    if typing.get_origin(hint) is Annotated:
        base, *extras = typing.get_args(hint)
        return [(base, x) for x in extras if isinstance(x, Bound)]
    return [found for arg in typing.get_args(hint) for found in _bounds_in(arg)]


def _out_of_bounds(request: Request, bounds: tuple[_Bounded, ...]) -> str | None:
    """The first field out of its bounds, said as msgspec says it of its own constraints."""
    for attr, path, chars, low, high in bounds:
        value = getattr(request, attr)
        if value is None:
            continue
        if chars:
            if len(value) > high:
                return f"Expected `str` of length <= {high} - at `$.{path}`"
        elif low is not None and value < low:
            return f"Expected `int` >= {low} - at `$.{path}`"
        elif value > high:
            return f"Expected `int` <= {high} - at `$.{path}`"
    return None


def _tag(cls: type[Struct]) -> str:
    # msgspec types a tag as str | int; every message of protocol/messages.py is tagged
    # by its name.
    return str(cls.__struct_config__.tag)


def _union(types: tuple[type[Struct], ...]) -> Any:
    union: Any = types[0]
    for t in types[1:]:
        union = union | t
    return union


def _small_int(raw: msgspec.Raw) -> int | None:
    if not raw:
        return None
    try:
        return msgspec.msgpack.decode(raw, type=RequestId)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None


def _small_str(raw: msgspec.Raw) -> str | None:
    if not raw:
        return None
    try:
        return msgspec.msgpack.decode(raw, type=Annotated[str, Meta(max_length=32)])
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None


# msgpack's first bytes (0xc0 to 0xdf) whose object has a fixed size: that size.
_FIXED = {
    0xC0: 1, 0xC2: 1, 0xC3: 1, 0xCA: 5, 0xCB: 9, 0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9,
    0xD0: 2, 0xD1: 3, 0xD2: 5, 0xD3: 9, 0xD4: 3, 0xD5: 4, 0xD6: 6, 0xD7: 10, 0xD8: 18,
}  # fmt: skip
# First bytes followed by a big-endian length of 1, 2 or 4 bytes: (its width, what follows
# the length before the payload: 1 for an ext's type byte).
_SIZED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),
          0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0)}  # fmt: skip


def _head(data: bytes, pos: int) -> tuple[int, int]:
    """The msgpack object at `pos`: where its own bytes end (the header and any scalar
    payload) and how many objects it contains (an array's items, a map's keys and
    values). Raises IndexError or ValueError if `data` cannot hold it."""
    b = data[pos]
    if b < 0x80 or b >= 0xE0:  # fixint
        return pos + 1, 0
    if b < 0x90:  # fixmap
        return pos + 1, 2 * (b & 0x0F)
    if b < 0xA0:  # fixarray
        return pos + 1, b & 0x0F
    if b < 0xC0:  # fixstr
        end = pos + 1 + (b & 0x1F)
    elif b in _FIXED:
        end = pos + _FIXED[b]
    elif b in _SIZED:
        width, extra = _SIZED[b]
        start = pos + 1 + width
        end = start + extra + int.from_bytes(data[pos + 1 : start])
    elif b in (0xDC, 0xDD, 0xDE, 0xDF):  # array16, array32, map16, map32
        width = 2 if b in (0xDC, 0xDE) else 4
        count = int.from_bytes(data[pos + 1 : pos + 1 + width])
        end = pos + 1 + width
        if end > len(data):
            raise ValueError("truncated")
        return end, count * (2 if b >= 0xDE else 1)
    else:  # 0xc1, never used
        raise ValueError("not msgpack")
    if end > len(data):
        raise ValueError("truncated")
    return end, 0


def _skip(data: bytes, pos: int) -> int:
    """Where the msgpack object at `pos` ends, found without recursion: every object takes
    at least one byte, so this takes at most len(data) steps however deep it nests."""
    pending = 1
    while pending:
        pos, inner = _head(data, pos)
        pending += inner - 1
    return pos


def _top_level(frame: bytes) -> dict[str, bytes] | None:
    """The raw msgpack of `t` and `id` in a frame's top-level map, read without recursion;
    None if the frame does not start with a map with string keys."""
    try:
        first = frame[0]
        if not (0x80 <= first < 0x90 or first in (0xDE, 0xDF)):
            return None
        pos, inner = _head(frame, 0)
        found: dict[str, bytes] = {}
        for _ in range(inner // 2):
            key_end = _skip(frame, pos)
            try:
                key = msgspec.msgpack.decode(frame[pos:key_end], type=str)
            except (msgspec.ValidationError, msgspec.DecodeError):
                return None
            pos, value_end = key_end, _skip(frame, key_end)
            if key in ("t", "id") and key not in found:
                found[key] = frame[pos:value_end]
                if len(found) == 2:
                    break
            pos = value_end
        return found
    except (IndexError, ValueError):
        return None
