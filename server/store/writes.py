"""The writes the logic asks the store to make, and the batches the APPLY script runs.

The logic (server/play/, server/daily/) decides; what it decides to store is one of the
changes below, named in records, not keys. The store turns a change into a `Batch`: the
versions to check and the commands to run, on keys of one hash tag, which the APPLY
script (server/store/scripts.py) applies all or nothing, relaying the events with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

import protocol as p
from server.store.events import encode_events
from server.store.records import GameRecord, RaceRecord

__all__ = ["MUST_NOT_EXIST", "Batch", "GameChange", "RaceChange", "encode_events"]

MUST_NOT_EXIST = -1  # the expected version of a record that is created by the write

_BATCH_ENCODER = msgspec.msgpack.Encoder()


@dataclass
class GameChange:
    """Store `record`'s fields (all of them with `all_fields`, else those a move or a close
    changes) if the stored game is at version `expect_ver` (MUST_NOT_EXIST: a new game)."""

    record: GameRecord
    expect_ver: int
    all_fields: bool = False


@dataclass
class RaceChange:
    """A change of a race: the race as it now is (its version bumped), checked against the
    version it was decided on, with the seats it adds or frees and the writes of its seats'
    games."""

    race: RaceRecord
    expect_ver: int  # MUST_NOT_EXIST for a new race
    new_seats: list[p.Seat] = field(default_factory=list)
    # Seats freed (a player who left the lobby): taken off the seats list, their games deleted.
    gone_seats: list[p.Seat] = field(default_factory=list)
    games: list[GameChange] = field(default_factory=list)
    # Instances that must hear the race's events from now on (where its players are).
    instances: list[str] = field(default_factory=list)
    ttl_s: int = 0  # > 0: every key of the race expires after this long; 0: they persist
    payload: bytes = b""  # events relayed to the other instances once written


@dataclass
class Batch:
    """Version checks and commands on keys of one hash tag, for one APPLY call."""

    keys: list[str] = field(default_factory=list)
    guards: list[tuple[int, int]] = field(default_factory=list)
    ops: list[list[Any]] = field(default_factory=list)
    relay: int = 0  # index (1-based) of the interest set whose instances hear the payload
    payload: bytes = b""
    _index: dict[str, int] = field(default_factory=dict)

    def key(self, name: str) -> int:
        index = self._index.get(name)
        if index is None:
            self.keys.append(name)
            index = self._index[name] = len(self.keys)
        return index

    def expect(self, key: str, ver: int) -> None:
        """Apply the batch only if the hash `key` is at version `ver` (MUST_NOT_EXIST: only
        if there is no such key)."""
        self.guards.append((self.key(key), ver))

    def command(self, name: str, key: str, *args: Any) -> None:
        self.ops.append([name, self.key(key), *args])

    def hset(self, key: str, fields: dict[str, str]) -> None:
        flat: list[str] = []
        for k, v in fields.items():
            flat += (k, v)
        self.command("HSET", key, *flat)

    def relay_to(self, interest: str, payload: bytes) -> None:
        if payload:
            self.relay, self.payload = self.key(interest), payload

    def args(self, origin: str, channel_prefix: str) -> list[Any]:
        program = _BATCH_ENCODER.encode([self.guards, self.ops, self.relay])
        return [origin, channel_prefix, self.payload, program]
