"""Ranking of finished games, shared by races (and usable by leaderboards).

docs/protocol.md, "Races": score (higher first), then a game that was not
resigned before one that was (giving up early must not beat playing on), then
time_ms (lower first), then moves (fewer first); entries equal on all four
share a rank (1, 2, 2, 4) and keep the order in which they finished.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


RankKey = tuple[int, bool, int, int]


def rank_key(score: int, resigned: bool, time_ms: int, moves: int) -> RankKey:
    return (-score, resigned, time_ms, moves)


def ranked(
    entries: Sequence[T],
    key: Callable[[T], RankKey],
    finish_order: Callable[[T], tuple[int, ...]],
) -> list[tuple[int, T]]:
    """(rank, entry) pairs, best first, with shared ranks for equal keys."""
    ordered = sorted(entries, key=lambda e: (key(e), finish_order(e)))
    out: list[tuple[int, T]] = []
    for i, entry in enumerate(ordered):
        if i and key(entry) == key(ordered[i - 1]):
            out.append((out[-1][0], entry))
        else:
            out.append((i + 1, entry))
    return out
