"""Decoding a client's frame into a request, or saying precisely why it cannot be one."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import Meta, Struct

from protocol.messages import REQUEST_TYPES, Request, RequestId


class _Envelope(Struct):
    """Just enough of a frame to name it in an error: its type and id, unparsed."""

    t: msgspec.Raw = msgspec.Raw(b"")
    id: msgspec.Raw = msgspec.Raw(b"")


class BadFrame(Struct):
    """A frame that did not decode into a request: what to answer."""

    msg: str
    re: int | None = None
    t: str | None = None  # the message type, when it could be read


class RequestDecoder:
    """Decodes one binary frame into a Request, or says why it cannot."""

    def __init__(self, types: tuple[type[Request], ...] = REQUEST_TYPES) -> None:
        self._decoder = msgspec.msgpack.Decoder(_union(types))
        self._envelope = msgspec.msgpack.Decoder(_Envelope)
        self._tags = {t.__struct_config__.tag for t in types}

    def decode(self, frame: bytes) -> Request | BadFrame:
        try:
            return self._decoder.decode(frame)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            return self._explain(frame, str(exc))
        except RecursionError:
            return BadFrame("message is nested too deeply")

    def decode_id(self, frame: bytes) -> int | None:
        """Just the request id of a frame, if it has a readable one."""
        try:
            return _small_int(self._envelope.decode(frame).id)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return None

    def _explain(self, frame: bytes, reason: str) -> BadFrame:
        try:
            env = self._envelope.decode(frame)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            return BadFrame("a frame must be one msgpack map with string keys")
        re = _small_int(env.id)
        t = _small_str(env.t)
        if not env.t:
            return BadFrame("message has no type field `t`", re)
        if t is None:
            return BadFrame("message type `t` must be a string", re)
        if t not in self._tags:
            return BadFrame(f"unknown message type {t!r}", re, t)
        if env.id and re is None:
            return BadFrame("`id` must be an integer", None, t)
        return BadFrame(f"bad {t}: {reason}", re, t)


def _union(types: tuple[type[Request], ...]) -> Any:
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
