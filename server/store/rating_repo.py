"""Ratings in the store: each player's rating per game, the game's board of displayed
ratings and each player's history. Written only with a rated race's close
(Store.race_batch); read here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import msgspec

from server.domain.ratings import PlayerRating, RatingPoint
from server.store.keys import Keys
from server.store.unavailable import unavailable_on_failure

HISTORY_KEPT = 100  # rated races kept in a player's history per game

_points = msgspec.json.Decoder(RatingPoint)


@dataclass
class BoardRow:
    rank: int
    rating: PlayerRating
    shown: int


@unavailable_on_failure
class RatingRepo:
    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys

    async def load(self, game: str, players: Sequence[str]) -> list[PlayerRating | None]:
        """The players' ratings in `game` (None: never rated in it)."""
        pipe = self.redis.pipeline(transaction=False)
        for pl in players:
            pipe.hgetall(self.keys.rating(game, pl))
        raw = await pipe.execute()
        return [
            PlayerRating.from_redis(pl, game, r) if r else None
            for pl, r in zip(players, raw, strict=True)
        ]

    async def history(self, game: str, player: str, count: int) -> list[RatingPoint]:
        """The player's newest `count` rated races in `game`, newest first."""
        raw = await self.redis.lrange(self.keys.rating_history(game, player), -count, -1)
        return [_points.decode(r) for r in reversed(raw)]

    async def board(
        self, game: str, limit: int, around: str | None, around_me: bool = False
    ) -> tuple[int, list[BoardRow], BoardRow | None]:
        """The board's total, a page of `limit` rows (highest first; from the top, or
        around player `around` with `around_me` when they are rated) and that player's own
        row. Equal ratings share a rank."""
        key = self.keys.rating_board(game)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zcard(key)
        pipe.zrevrank(key, around or "")
        total, my_index = await pipe.execute()
        start = 0
        if around and around_me and my_index is not None:
            start = max(0, min(int(my_index) - (limit - 1) // 2, int(total) - limit))
        rows = await self.redis.zrevrange(key, start, start + limit - 1, withscores=True)
        wanted = [(pl, int(score)) for pl, score in rows]
        me_row: BoardRow | None = None
        if around and my_index is not None and around not in {pl for pl, _ in wanted}:
            score = await self.redis.zscore(key, around)
            if score is not None:
                wanted.append((around, int(score)))
        pipe = self.redis.pipeline(transaction=False)
        for pl, score in wanted:
            pipe.zcount(key, f"({score}", "+inf")
            pipe.hgetall(self.keys.rating(game, pl))
        raw = await pipe.execute()
        out: list[BoardRow] = []
        for i, (pl, score) in enumerate(wanted):
            higher, fields = raw[2 * i], raw[2 * i + 1]
            if not fields:
                continue
            row = BoardRow(int(higher) + 1, PlayerRating.from_redis(pl, game, fields), score)
            if pl == around:
                me_row = row
            if i < len(rows):
                out.append(row)
        return int(total), out, me_row
