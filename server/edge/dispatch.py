"""Which code answers each request: the dispatch table from request type to handler.

A handler is `async (who, request) -> replies`: it returns the messages for the asker
(the first one answers the request, with `re`) or raises Refused, and delivers the
events it causes itself. The session (server/edge/session.py) sends the replies, or the
refusal as one `error`. Hello is answered by the session before any of these.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import engine
import protocol as p
from server.daily.service import DailyRequests
from server.play.moves import Moves
from server.play.players import Who
from server.play.practice import Practice
from server.play.quick import Quick
from server.play.races import Races
from server.play.replays import Replays
from server.play.spectators import Spectating

Handler = Callable[[Who, Any], Awaitable[list[p.Message]]]


def build_handlers(
    races: Races,
    moves: Moves,
    practice: Practice,
    daily: DailyRequests,
    replays: Replays,
    spectating: Spectating,
    quick: Quick,
) -> dict[type[p.Request], Handler]:
    async def stats(who: Who, msg: p.Stats) -> list[p.Message]:
        """The daily statistics, with the player's ratings beside them."""
        replies = await daily.stats(who, msg)
        reply = replies[0]
        if isinstance(reply, p.StatsReply):
            reply.ratings = await quick.player_ratings(reply.player, sorted(engine.GAMES)) or None
        return replies

    return {
        p.Create: races.create,
        p.Join: races.join,
        p.StartRace: races.start,
        p.Rematch: races.rematch,
        p.Move: moves.move,
        p.Get: moves.get,
        p.Resign: moves.resign,
        p.Daily: daily.attempt,
        p.Leaderboard: daily.leaderboard,
        p.Stats: stats,
        p.Practice: practice.practice,
        p.Undo: practice.undo,
        p.Hint: practice.hint,
        p.Replay: replays.replay,
        p.Watch: spectating.watch,
        p.Queue: quick.queue,
        p.Unqueue: quick.unqueue,
        p.Ratings: quick.ratings,
        p.Challenges: races.challenges,
    }
