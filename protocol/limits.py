"""The protocol's field limits: how long, how many and how large each field may be.

The defaults are the protocol's documented limits (docs/protocol.md). A server may run
with other values (server/config.py has a setting for each); its request decoder is built
from the limits it runs with, and a client may use the defaults to check what it sends.
"""

from __future__ import annotations

from dataclasses import dataclass


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


DEFAULT_LIMITS = Limits()
