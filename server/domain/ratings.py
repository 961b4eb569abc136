"""A player's rating in one game, as stored: the rating model's skill estimate (mu, the
mean, and sigma, its uncertainty) and how many rated races it counts. server/play/
ratings.py decides the changes and the displayed integer; the store keeps the fields."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec


@dataclass
class PlayerRating:
    player: str
    game: str
    name: str
    mu: float
    sigma: float
    games: int = 0  # rated races counted
    ver: int = 0  # bumped by every write; a rating never stored is at no version at all
    stored: bool = False  # False: the player has no rating in this game yet

    def to_redis(self) -> dict[str, str]:
        return {
            "name": self.name, "mu": repr(self.mu), "sigma": repr(self.sigma),
            "games": str(self.games), "ver": str(self.ver),
        }  # fmt: skip

    @classmethod
    def from_redis(cls, player: str, game: str, raw: dict[Any, Any]) -> PlayerRating:
        d = {_s(k): _s(v) for k, v in raw.items()}
        return cls(
            player=player,
            game=game,
            name=d.get("name", ""),
            mu=float(d["mu"]),
            sigma=float(d["sigma"]),
            games=int(d.get("games", 0)),
            ver=int(d.get("ver", 0)),
            stored=True,
        )


class RatingPoint(msgspec.Struct, array_like=True):
    """One rated race in a player's history, as stored (newest last)."""

    race: str
    at_ms: int
    rank: int
    seats: int
    before: int
    after: int


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
