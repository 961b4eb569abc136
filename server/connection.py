"""websockets' server connection, with each complete message put in an inbox as it arrives.

websockets' own path to a handler (a frame queue, a waiter future, `recv()` on a task)
cost about a tenth of the server's CPU per move under load. Here the Sans-I/O
protocol still parses, checks sizes and answers pings and closes; we only take
the data messages it produces and wake the session (server/session.py) that
handles them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.frames import BINARY, CONT, TEXT, Frame

# The protocol already caps a whole message at max_size; this caps how many pieces it
# may come in (empty fragments cost nothing to send but a list entry each to keep).
MAX_FRAGMENTS = 256

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
        self.inbox.append(data.decode(errors="replace") if opcode is TEXT else data)
        if len(self.inbox) >= INBOX_HIGH and not self._reading_paused:
            self._reading_paused = True
            self.transport.pause_reading()
        if self.on_message is not None:
            self.on_message()

    def take(self) -> bytes | str | None:
        """The oldest message waiting, or None."""
        inbox = self.inbox
        if not inbox:
            return None
        if self._reading_paused and len(inbox) <= INBOX_LOW:
            self._reading_paused = False
            self.transport.resume_reading()
        return inbox.popleft()
