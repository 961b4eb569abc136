"""Which quick races to form from the players waiting: a pure decision (entries and a time
in, races out), so that a hypothesis test can drive it over simulated time.

Each game's queue is matched on its own. The player who has waited longest goes first: the
window of ratings it accepts is `first_window` wide and widens by `widen_per_s` for every
second it has waited. Its race takes the waiting players of the same game closest to its
rating, up to `max_players` seats, as long as the race's whole spread (highest rating less
lowest) stays within that window: the window that applied is the longest waiter's, the
widest of the race. A race forms as soon as a second player fits (a player does not wait
for a fuller race). A player left alone `bot_after_s` or longer is offered a race against
a bot of a strength near their rating instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from server.domain.queue import Waiting

__all__ = ["Formed", "MatchRules", "Matches", "Waiting", "bot_strength", "match"]


@dataclass(frozen=True, slots=True)
class MatchRules:
    first_window: int = 100  # the widest spread of ratings a player accepts on arrival
    widen_per_s: float = 20.0  # points the window widens per second waited
    max_players: int = 4
    bot_after_s: float = 30.0

    def window(self, waited_ms: int) -> float:
        """The widest spread of ratings a race may have for a player who waited this long."""
        return self.first_window + self.widen_per_s * max(0, waited_ms) / 1000


@dataclass(frozen=True, slots=True)
class Formed:
    """A race to form: its players (longest waiter first) and the window that applied."""

    game: str
    players: tuple[Waiting, ...]
    window: float


@dataclass(slots=True)
class Matches:
    races: list[Formed] = field(default_factory=list)
    bots: list[Waiting] = field(default_factory=list)  # each offered a race against a bot


def bot_strength(rating: int) -> str:
    """The bot whose play is nearest a rating (server/play/bots.py's strengths)."""
    if rating < 1400:
        return "easy"
    if rating > 1600:
        return "hard"
    return "medium"


def match(entries: Iterable[Waiting], now_ms: int, rules: MatchRules) -> Matches:
    """The races to form now, and the players to offer a bot, from the queue's `entries`."""
    by_game: dict[str, list[Waiting]] = {}
    for entry in entries:
        by_game.setdefault(entry.game, []).append(entry)
    out = Matches()
    for game in sorted(by_game):
        _match_game(game, by_game[game], now_ms, rules, out)
    return out


def _match_game(
    game: str, entries: list[Waiting], now_ms: int, rules: MatchRules, out: Matches
) -> None:
    # Longest waiters first; each looks outwards from its own rating in the list sorted by
    # rating, so a round costs about the players waiting times the seats of a race, not
    # their square (a backlog must not slow the matcher down).
    waiting = sorted(entries, key=lambda e: (e.since_ms, e.player))
    by_rating = sorted(entries, key=lambda e: (e.rating, e.since_ms, e.player))
    where = {e.player: i for i, e in enumerate(by_rating)}
    taken: set[str] = set()
    for anchor in waiting:
        if anchor.player in taken:
            continue
        window = rules.window(now_ms - anchor.since_ms)
        seats = [anchor]
        low = high = anchor.rating
        lo, hi = where[anchor.player] - 1, where[anchor.player] + 1
        while len(seats) < rules.max_players:
            while lo >= 0 and by_rating[lo].player in taken:
                lo -= 1
            while hi < len(by_rating) and by_rating[hi].player in taken:
                hi += 1
            down = by_rating[lo] if lo >= 0 else None
            up = by_rating[hi] if hi < len(by_rating) else None
            if down is None and up is None:
                break
            # The nearer rating first (then the longer waiter); a side whose nearest does
            # not fit is done: the ones beyond it fit still less.
            if up is None or (down is not None and _nearer(down, up, anchor.rating)):
                if max(high, down.rating) - min(low, down.rating) > window:  # type: ignore[union-attr]
                    lo = -1
                    continue
                pick, lo = down, lo - 1
            else:
                if max(high, up.rating) - min(low, up.rating) > window:
                    hi = len(by_rating)
                    continue
                pick, hi = up, hi + 1
            assert pick is not None
            seats.append(pick)
            taken.add(pick.player)
            low, high = min(low, pick.rating), max(high, pick.rating)
        if len(seats) >= 2:
            taken.add(anchor.player)
            out.races.append(Formed(game, tuple(seats), window))
        elif now_ms - anchor.since_ms >= rules.bot_after_s * 1000:
            taken.add(anchor.player)
            out.bots.append(anchor)


def _nearer(a: Waiting, b: Waiting, rating: int) -> bool:
    """Whether `a` comes before `b` for a player of `rating`: nearer, then waiting longer."""
    return (abs(a.rating - rating), a.since_ms, a.player) < (
        abs(b.rating - rating),
        b.since_ms,
        b.player,
    )
