"""Watching races: the `watch` request, and the race as its page shows it.

A spectator is a greeted connection that asks `watch {race}`: it cannot act on the race
(its seats' games are not its own, and a seat watching its own race acts as a seat). The
race machine decides whether it may (the race takes spectators) and what it is first
sent: the race as it stands, every seat's board less the cards a seat still playing has
not seen (server/play/spectator_boards.py). From then on the connection is followed by
the edge (server/edge/watchers.py), which passes on what the race's events carry for its
spectators. The race's page (/race/CODE) shows the same, read afresh.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

import protocol as p
from server.clock import Clock
from server.config import Config
from server.domain.records import GameRecord, RaceRecord, RaceStatus
from server.lru import LRU
from server.play.cache import LiveGames
from server.play.game_machine import LiveGame
from server.play.offers import rematch_offer
from server.play.players import Who
from server.play.race_machine import RaceMachine, RaceRules, normalise_code, not_found
from server.store.events import SeatSeen
from server.store.stores import Stores

log = logging.getLogger(__name__)


class Following(Protocol):
    """What watching needs of the edge (server/edge/hub.py): following a race for one
    connection from now on."""

    def watch(self, who: Who, code: str, seats: list[str]) -> str | None:
        """Follow race `code` for connection `who.uid`; None, or why it may not."""
        ...

    def unwatch(self, who: Who, code: str) -> None: ...

    def seated(self, code: str, seats: list[str], seen: list[SeatSeen]) -> None:
        """Race `code`'s seats are `seats`, and their games as `seen` says."""
        ...


@dataclass
class Look:
    """A race as a spectator sees it: the race and its seats' games (read at `now_ms`)."""

    race: RaceRecord
    boards: list[LiveGame]
    now_ms: int

    def replies(self, player: str | None, rules: RaceRules) -> list[p.Message]:
        return RaceMachine(self.race, rules).watch(player, self.boards, self.now_ms)

    def seen(self) -> list[SeatSeen]:
        """The seats' games, as spectators' boards are decided from them."""
        return RaceMachine.seen(self.boards, self.now_ms)


class Spectating:
    def __init__(
        self,
        stores: Stores,
        cache: LiveGames,
        clock: Clock,
        config: Config,
        following: Following,
    ) -> None:
        self.stores = stores
        self.cache = cache
        self.clock = clock
        self.rules = RaceRules.from_config(config)
        self.following = following
        # Seats' games as loaded for spectators, never played on: a board read here is
        # never one that a player's move is changing.
        self._replays: LRU[str, LiveGame] = LRU(config.spectator_memo_size)

    async def watch(self, who: Who, msg: p.Watch) -> list[p.Message]:
        code = self._code(msg.race)
        race = await self.stores.races.load_race(code)
        if race is None:
            raise not_found(code)
        RaceMachine(race, self.rules).may_watch(who.player)
        if race.status == RaceStatus.DONE:  # nothing will happen to it any more
            replies = (await self.look(code, who.player)).replies(who.player, self.rules)
            log.info("race %s: its end shown to spectator %s", code, who.player)
            return replies
        # Followed before it is read, so that nothing that happens meanwhile is missed
        # (what happened before the read arrives after it, and says so by its `n`).
        why_not = self.following.watch(who, code, race.players())
        if why_not is not None:
            raise p.Refused(p.RACE_FULL, why_not)
        try:
            await self.stores.presence.listen(races=[code])
            look = await self.look(code, who.player)
            replies = look.replies(who.player, self.rules)
        except BaseException:
            self.following.unwatch(who, code)
            raise
        if look.race.status == RaceStatus.DONE:  # it ended meanwhile: its result is here
            self.following.unwatch(who, code)
        else:
            self.following.seated(code, look.race.players(), look.seen())
        log.info(
            "race %s (%s): player %s watches it", code, look.race.status, who.player
        )  # fmt: skip
        return replies

    async def look(self, code: str, player: str | None = None) -> Look:
        """The race `code` (as typed) as `player` (None: a visitor of its page) may watch
        it; Refused if there is none (`not_found`) or they may not (`no_spectators`)."""
        code = self._code(code)
        race = await self.stores.races.load_race(code)
        if race is None:
            raise not_found(code)
        RaceMachine(race, self.rules).may_watch(player)
        boards: list[LiveGame] = []
        if race.status != RaceStatus.LOBBY:
            gids = RaceMachine(race, self.rules).gids()
            for gid, record in zip(gids, await self.stores.games.load_records(gids), strict=True):
                if record is not None:
                    live = await self._board(gid, record)
                    if live is not None:
                        boards.append(live)
        return Look(race, boards, self.clock.now_ms())

    async def page(self, code: str) -> tuple[list[p.Message], int]:
        """What the race's page shows: what `watch` answers a visitor, and when."""
        look = await self.look(code)
        messages = look.replies(None, self.rules)
        offer = await rematch_offer(self.stores, look.race)  # linked from a finished race's page
        return ([*messages, offer] if offer is not None else messages), look.now_ms

    async def _board(self, gid: str, record: GameRecord) -> LiveGame | None:
        """The seat's game as `record` (just read) has it: a player's game cached here if it
        is that one, else one replayed for spectators before, else loaded (from its newest
        snapshot, as the cache loads it) and kept for the next spectator.

        A player's cached game is copied, never kept: its next move takes it out of the
        cache and plays on it (LiveGames.take)."""
        played = self.cache.peek(gid)
        if played is not None and _same(played.record, record):
            return LiveGame(record, played.game.copy(), base=record.n)
        kept = self._replays.get(gid)
        if kept is None or not _same(kept.record, record):
            kept = await self.cache.load(gid)
            if kept is None:
                return None
            self._replays.put(gid, kept)
        return LiveGame(kept.record, kept.game, base=kept.n)

    def _code(self, text: str) -> str:
        code = normalise_code(text, self.rules.code_length)
        if code is None:
            raise p.Refused(p.NOT_FOUND, f"no race {text!r}")
        return code


def _same(a: GameRecord, b: GameRecord) -> bool:
    """Whether two records are of the same game at the same point (every write bumps `ver`;
    a gid may be reused by a later race under the same code)."""
    return (a.ver, a.n, a.seed, a.started_at_ms) == (b.ver, b.n, b.seed, b.started_at_ms)
