"""The protocol's field limits: how long, how many and how large each field may be.

The defaults are the protocol's documented limits (docs/protocol.md). A server may run
with other values (server/config.py has a setting for each); its request decoder is built
from the limits it runs with, and a client may use the defaults to check what it sends.

A request field that one of these limits bounds says which in its type, with a `Bound`
(protocol/messages.py); protocol/decoding.py checks it against the decoder's Limits.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    name_max_chars: int = 24
    token_max_chars: int = 128
    gid_max_chars: int = 96
    race_code_max_chars: int = 16
    move_max_chars: int = 16
    max_moves_per_game: int = 100_000
    min_players: int = 2
    max_players: int = 16
    default_max_players: int = 8
    min_time_limit_s: int = 30
    max_time_limit_s: int = 7200
    leaderboard_max_rows: int = 100
    leaderboard_default_rows: int = 20

    def problems(self, spell: Callable[[str], str] = str) -> list[str]:
        """Why these limits cannot work together, one sentence each (none: they can).

        `spell` names a field in the sentences (the server gives its flags).
        """
        out = [
            f"{spell(f.name)} must be at least 1, not {getattr(self, f.name)}"
            for f in fields(self)
            if getattr(self, f.name) < 1
        ]
        for low, high in (
            ("min_players", "max_players"),
            ("default_max_players", "max_players"),
            ("min_players", "default_max_players"),
            ("min_time_limit_s", "max_time_limit_s"),
            ("leaderboard_default_rows", "leaderboard_max_rows"),
        ):
            a, b = getattr(self, low), getattr(self, high)
            if a > b:
                out.append(f"{spell(low)} {a} is more than {spell(high)} {b}")
        return out


@dataclass(frozen=True)
class Bound:
    """In a request field's type: the Limits field that bounds it, checked by the decoder.

    For a string, `high` is its most characters; for an int, its largest value (plus
    `offset`: bots leave the host's seat) and `low`, if given, its smallest. Bounds that
    no setting changes stay msgspec `Meta` constraints.
    """

    high: str
    low: str | None = None
    offset: int = 0


DEFAULT_LIMITS = Limits()
