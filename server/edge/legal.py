"""The `legal` list of a `state`, for connections whose hello asked for it (`legal: true`).

Clients without the engine (the browser's) highlight where a card may go from this list,
so they hold no rules. Only such connections pay for it: a state is annotated on its
way out of that connection alone, from the public view it carries (the engine computes
the same moves from the view as from the whole position, hidden cards play no part in
which moves are legal), and `[]` once the game is finished (resigned or out of time too).
"""

from __future__ import annotations

from typing import Any

import msgspec

import engine
import protocol as p

# msgspec writes the tag first: a map header byte, then "t" and "state".
_STATE_TAG = b"\xa1t\xa5state"
_state = msgspec.msgpack.Decoder(p.State)


def legal_moves(state: p.State) -> list[str]:
    if state.finished:
        return []
    view: Any = state.view
    if isinstance(view, msgspec.Raw):
        view = msgspec.msgpack.decode(view)
    return sorted(engine.legal_moves_from_view(view))


def with_legal(message: p.Message) -> p.Message:
    """`message` with `legal` in every state it is or holds (a welcome's `active`)."""
    if isinstance(message, p.State):
        return msgspec.structs.replace(message, legal=legal_moves(message))
    if isinstance(message, p.Welcome):
        active = [msgspec.structs.replace(s, legal=legal_moves(s)) for s in message.active]
        return msgspec.structs.replace(message, active=active)
    return message


def frame_with_legal(frame: bytes) -> bytes:
    """An encoded event with `legal` added if it is a state; any other frame as it is."""
    if _STATE_TAG not in frame[: 4 + len(_STATE_TAG)]:
        return frame
    state = _state.decode(frame)
    return p.encode(msgspec.structs.replace(state, legal=legal_moves(state)))
