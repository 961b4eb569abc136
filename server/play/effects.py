"""What a decision says, to whom, and the one applier that encodes and routes it.

The machines (race_machine.py, game_machine.py) and the services around them decide
messages as typed values with a typed audience: a player (all their connections, or all
but the asker's, who gets the reply instead), the race's seats, its spectators. No bytes,
no connection or instance ids: those are the applier's business.

`Applier.events` encodes each message once and makes the bus's events of them
(server/store/events.py): the same list goes into the store's write, which relays it to
the other instances atomically with the write, and, once the write is applied, to this
instance's connections (the deliver function, server/edge/hub.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

import protocol as p
from server.store.events import Event, ForSpectators, encode_events

Deliver = Callable[[list[Event]], None]


# Frozen structs: a move says two of these, and a struct is made in C (a named tuple's
# constructor is a Python function, a frozen dataclass costs a setattr call per field).


class ToPlayers(msgspec.Struct, frozen=True):
    """Every connection of these players; with `but_asker`, not the connection that asked
    (it gets the reply instead)."""

    players: Sequence[str]
    but_asker: bool = False


# The spectators of a race: the messages as they are, then the seats' boards (decided fair
# where the spectators are: server/play/spectator_boards.py), its seats when they change,
# `over` on its result. The bus carries it as it is.
ToSpectators = ForSpectators


class Say(msgspec.Struct, frozen=True):
    """Messages for an audience (players' connections), and what the race's spectators
    hear of them (`spectators`: the same messages, and their boards)."""

    to: ToPlayers
    messages: list[p.Message]
    spectators: ToSpectators | None = None


def to_player(player: str, *messages: p.Message, but_asker: bool = False) -> Say:
    return Say(ToPlayers((player,), but_asker), list(messages))


class Applier:
    """Encodes what decisions say and routes it: the events for the store to relay and
    for this instance to deliver."""

    def __init__(self, deliver: Deliver) -> None:
        self.deliver = deliver

    @staticmethod
    def events(says: Sequence[Say], asker: str = "") -> list[Event]:
        """The events of `says`, each message encoded once; `asker` is the connection that
        asked (skipped where an audience says `but_asker`)."""
        out: list[Event] = []
        encoded: dict[int, bytes] = {}  # id(message) -> its frame: one message, one encoding
        encode = p.encode
        for say in says:
            players, but_asker = say.to.players, say.to.but_asker
            frames = []
            for m in say.messages:
                frame = encoded.get(id(m))
                if frame is None:
                    frame = encoded[id(m)] = encode(m)
                frames.append(frame)
            out.append(
                Event(
                    players if type(players) is list else list(players),
                    frames,
                    asker if but_asker else "",
                    say.spectators,
                )
            )
        return out

    @staticmethod
    def event(
        players: list[str],
        message: p.Message,
        skip: str = "",
        spectators: ToSpectators | None = None,
    ) -> Event:
        """The event of one message for one audience: `players`' connections but `skip`
        (the asker's, which gets the reply instead), and the race's spectators if
        `spectators` says so. The move path's shape (two a move): no Say to build and
        nothing to encode twice, so none of `events`' bookkeeping."""
        return Event(players, [p.encode(message)], skip, spectators)

    # The events as the store relays them to the other instances (bytes). The encoder
    # itself rather than a method calling it: one call less per move.
    payload = staticmethod(encode_events)
