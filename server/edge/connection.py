"""websockets' server connection, with each complete message put in an inbox as it arrives.

websockets' own path to a handler (a frame queue, a waiter future, `recv()` on a task)
cost about a tenth of the server's CPU per move under load. Here the whole binary
frames that clients send nearly always are cut out of the stream directly
(`_take_frames`); websockets' Sans-I/O protocol still does the handshake, pings,
closes, size limits and every other kind of frame. Either way each complete message
goes to the inbox and wakes the session (server/edge/session.py) that handles it.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import BINARY, CONT, TEXT, Frame, apply_mask
from websockets.protocol import OPEN, Protocol
from websockets.streams import StreamReader

# The protocol already caps a whole message at max_size; this caps how many pieces it
# may come in (empty fragments cost nothing to send but a list entry each to keep).
MAX_FRAGMENTS = 256

_SHORT = struct.Struct("!BB")
_MEDIUM = struct.Struct("!BBH")
_LONG = struct.Struct("!BBQ")
_FIN_BINARY = 0x82  # FIN bit and the binary opcode


def binary_frame_header(length: int) -> bytes:
    """The header of a final, unmasked binary frame of `length` bytes (RFC 6455 5.2)."""
    if length < 126:
        return _SHORT.pack(_FIN_BINARY, length)
    if length < 1 << 16:
        return _MEDIUM.pack(_FIN_BINARY, 126, length)
    return _LONG.pack(_FIN_BINARY, 127, length)


_AT_EOF_CODE = StreamReader.at_eof.__code__


def parser_at_frame_boundary(protocol: Protocol) -> bool:
    """Whether websockets' parser waits for the first byte of a frame. An empty buffer
    alone does not say so: the parser consumes a frame's header before its payload has
    arrived. It waits between frames in StreamReader.at_eof, at the end of its chain of
    generators. If websockets' internals change, this says False: slower, not wrong."""
    if protocol.reader.buffer:
        return False
    waiting: Any = protocol.parser
    while (inner := getattr(waiting, "gi_yieldfrom", None)) is not None:
        waiting = inner
    return getattr(waiting, "gi_code", None) is _AT_EOF_CODE


# Flow control: reading pauses while this many messages wait, resumes at the low mark.
INBOX_HIGH = 16
INBOX_LOW = 4


class InboxConnection(ServerConnection):
    """A server connection whose data messages go to `inbox` instead of `recv()`.

    `inbox` holds bytes for binary messages and str for text messages (decoded
    leniently: the server refuses text anyway). `on_message` is called after each
    message is queued; reading pauses while the inbox is full.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.inbox: deque[bytes | str] = deque()
        self.on_message: Callable[[], None] | None = None
        self._fragments: list[Frame] = []
        self._reading_paused = False
        self._at_boundary = False  # set once websockets' parser is known to be between frames

    def process_event(self, event: Any) -> None:
        if not isinstance(event, Frame) or event.opcode not in (BINARY, TEXT, CONT):
            super().process_event(event)  # the handshake, pings, pongs and closes
            return
        if not event.fin or self._fragments:
            self._fragments.append(event)
            if len(self._fragments) > MAX_FRAGMENTS:
                self._fragments.clear()
                self.protocol.fail(1009, f"more than {MAX_FRAGMENTS} fragments")
                self.send_data()  # the close frame: data_received has already sent its data
                return
            if not event.fin:
                return
            first = self._fragments[0]
            data = b"".join(f.data for f in self._fragments)
            opcode = first.opcode
            self._fragments.clear()
        else:
            data, opcode = bytes(event.data), event.opcode
        self._enqueue(data.decode(errors="replace") if opcode is TEXT else data)

    def data_received(self, data: bytes) -> None:
        protocol = self.protocol
        if (
            self._at_boundary
            and protocol.state is OPEN
            and protocol.current_size is None  # not inside a fragmented message
            and not protocol.extensions
        ):
            data = self._take_frames(data, protocol.max_message_size)
            if not data:
                return
        super().data_received(data)
        self._at_boundary = parser_at_frame_boundary(self.protocol)

    def _take_frames(self, data: bytes, limit: int | None) -> bytes:
        """Takes the whole, final, masked binary frames at the start of `data` (what a
        client sends nearly always) and returns the rest for websockets' parser.

        websockets parses each frame through a chain of generators (a few µs a frame);
        here a frame costs a header check and the unmasking. Anything else (a control,
        text or fragmented frame, an unmasked or oversized one, a partial frame) stops
        the fast path at a frame boundary, where websockets' parser takes over from a
        state identical to the one it would have reached itself.
        """
        off, end = 0, len(data)
        while end - off >= 6:
            if data[off] != _FIN_BINARY:
                break
            length = data[off + 1]
            if length < 0x80:  # unmasked: a protocol error, for websockets to report
                break
            length &= 0x7F
            head = off + 2
            if length == 126:
                if end - off < 8:
                    break
                length = (data[head] << 8) | data[head + 1]
                head += 2
            elif length == 127:
                break
            if limit is not None and length > limit:
                break
            stop = head + 4 + length
            if stop > end:
                break
            message = apply_mask(data[head + 4 : stop], data[head : head + 4])
            off = stop
            self._enqueue(message)
        return data[off:] if off else data

    def _enqueue(self, message: bytes | str) -> None:
        self.inbox.append(message)
        if len(self.inbox) >= INBOX_HIGH and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        if self.on_message is not None:
            self.on_message()

    def write_binaries(self, messages: Iterable[bytes]) -> None:
        """Sends each message as one binary frame, all in one write, if the connection is
        open (else nothing).

        Framed here rather than by the protocol object: a server's frames are unmasked and
        we never fragment, so a frame is a header and the payload, and websockets'
        general path (a Frame object and its serializer per message) was a twentieth of
        the CPU of a move. Whole frames go to the transport in one write, so they never
        interleave with the control frames that websockets writes itself.
        """
        if self.protocol.state is not OPEN:
            return
        parts: list[bytes] = []
        for message in messages:
            parts.append(binary_frame_header(len(message)))
            parts.append(message)
        self.transport.write(b"".join(parts))

    def take(self) -> bytes | str | None:
        """The oldest message waiting, or None."""
        inbox = self.inbox
        if not inbox:
            return None
        if self._reading_paused and len(inbox) <= INBOX_LOW:
            self._reading_paused = False
            self.transport.resume_reading()
        return inbox.popleft()
