"""The batches the APPLY script runs.

The logic (server/play/, server/daily/) decides; what it decides to store is a change
named in records, not keys (server/domain/changes.py). The store turns a change into a `Batch`: the
versions to check and the commands to run, on keys of one hash tag, which the APPLY
script (server/store/scripts.py) applies all or nothing, relaying the events with them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

_BATCH_ENCODER = msgspec.msgpack.Encoder()


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
