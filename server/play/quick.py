"""Quick races: the `queue`, `unqueue` and `ratings` requests, and the matcher's loop.

A player queues for a game with their rating; the entry lives in the store
(server/store/queue_repo.py), so any instance takes it. One instance at a time (the one
holding the queue's lease, server/store/locks.py) runs the matcher every `quick_round_s`:
it reads the whole queue, asks server/play/matcher.py which races to form, takes each
race's players out of the queue (all or none: a player who left meanwhile spoils only that
race, formed again next round from whoever still waits) and stores the race
(Races.open_quick), whose players hear `matched` and its lobby on whatever instance they
are connected to. The same instance starts the quick races whose start time has come
(Races.autostart).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence

import protocol as p
from server.clock import Clock
from server.config import Config
from server.domain.ids import parse_gid
from server.domain.kinds import GameKind
from server.metrics import Metrics
from server.play import ratings as rating_model
from server.play.effects import Applier, to_player
from server.play.matcher import Formed, MatchRules, Waiting, bot_strength, match
from server.play.players import Who
from server.play.races import Races
from server.store.events import Event
from server.store.rating_repo import BoardRow
from server.store.stores import Stores
from server.store.unavailable import STORE_ERRORS

log = logging.getLogger(__name__)

Deliver = Callable[[list[Event]], None]


class Quick:
    def __init__(
        self,
        stores: Stores,
        races: Races,
        clock: Clock,
        config: Config,
        deliver: Deliver,
        metrics: Metrics,
    ) -> None:
        self.stores = stores
        self.races = races
        self.clock = clock
        self.config = config
        self.metrics = metrics
        self.applier = Applier(deliver)
        self.rules = MatchRules(
            first_window=config.quick_first_window,
            widen_per_s=config.quick_widen_per_s,
            max_players=config.quick_max_players,
            bot_after_s=config.quick_bot_after_s,
        )

    # ------------------------------------------------------------ requests

    async def queue(self, who: Who, msg: p.Queue) -> list[p.Message]:
        await self._check_free(who.player)
        rating = (await self.shown_ratings(msg.game, [who.player]))[0]
        asked = Waiting(who.player, who.name, msg.game, rating, self.clock.now_ms())
        entry = await self.stores.queue.put(asked)
        if entry == asked:
            log.info("player %s queued for %s at rating %d", who.player, msg.game, rating)
        return [p.Queued(game=entry.game, rating=entry.rating, since_ms=entry.since_ms)]

    async def unqueue(self, who: Who, msg: p.Unqueue) -> list[p.Message]:
        if await self.stores.queue.drop(who.player):
            log.info("player %s left the queue", who.player)
        return [p.Unqueued()]

    async def leave(self, player: str) -> None:
        """A player gone from every connection past the grace period leaves the queue."""
        if await self.stores.queue.drop(player):
            log.info("player %s left the queue (no connection left)", player)

    async def is_queued(self, player: str) -> bool:
        return await self.stores.queue.entry(player) is not None

    async def ratings(self, who: Who, msg: p.Ratings) -> list[p.Message]:
        return [await self.board(msg.game, msg.limit, who.player, msg.around_me)]

    async def board(
        self, game: str, limit: int | None, asker: str | None, around_me: bool = False
    ) -> p.RatingsReply:
        """A page of the game's ratings (and the asker's own row, if rated)."""
        cfg = self.config
        rows = min(limit or cfg.leaderboard_default_rows, cfg.leaderboard_max_rows)
        total, page, mine = await self.stores.ratings.board(game, rows, asker, around_me)

        def entry(row: BoardRow) -> p.RatingEntry:
            r = row.rating
            return p.RatingEntry(
                rank=row.rank,
                player=r.player,
                name=r.name,
                rating=row.shown,
                games=r.games,
                provisional=rating_model.provisional(r.games),
            )

        return p.RatingsReply(
            game=game,
            total=total,
            entries=[entry(r) for r in page],
            me=entry(mine) if mine is not None else None,
        )

    async def shown_ratings(self, game: str, players: list[str]) -> list[int]:
        stored = await self.stores.ratings.load(game, players)
        return [
            rating_model.shown(r.mu) if r is not None else rating_model.SHOWN_AT_NEW for r in stored
        ]

    async def player_ratings(self, player: str, games: list[str]) -> dict[str, p.GameRating]:
        """The player's rating and recent history in every game they have one in."""
        out: dict[str, p.GameRating] = {}
        for game in games:
            r = (await self.stores.ratings.load(game, [player]))[0]
            if r is None:
                continue
            history = await self.stores.ratings.history(game, player, 20)
            out[game] = p.GameRating(
                rating=rating_model.shown(r.mu),
                games=r.games,
                provisional=rating_model.provisional(r.games),
                history=[
                    p.RatingPoint(
                        race=h.race,
                        at_ms=h.at_ms,
                        rank=h.rank,
                        seats=h.seats,
                        before=h.before,
                        after=h.after,
                    )
                    for h in history
                ],
            )
        return out

    async def _check_free(self, player: str) -> None:
        """Refuses a player seated in an unfinished race: they play that one first."""
        gids = []
        for gid in await self.stores.players.player_games(player):
            parsed = parse_gid(gid)
            if parsed is not None and parsed.kind is GameKind.RACE:
                gids.append(gid)
        if not gids:
            return
        for record in await self.stores.games.load_records(gids):
            if record is None or record.finished:
                continue
            if record.started_at_ms:
                raise p.Refused(
                    p.RACE_STARTED, f"you are racing in race {record.race}: finish it first"
                )
            race = await self.stores.races.load_race(record.race)
            if race is not None and race.status != "done":
                raise p.Refused(
                    p.BAD_REQUEST, f"you are seated in race {record.race}'s lobby: leave it first"
                )

    # ------------------------------------------------------------ the matcher

    async def run(self, stop: asyncio.Event) -> None:
        """Every `quick_round_s`: a matcher round and the due starts, while this instance
        holds the queue's lease (another takes it over if this one dies). The lease is
        taken only while there is work (someone waiting, a race to start), so an idle
        server writes nothing."""
        cfg = self.config
        lease = self.stores.queue.lease(cfg.quick_lease_s)
        held = False
        try:
            while not stop.is_set():
                await asyncio.sleep(cfg.quick_round_s)
                try:
                    busy = await self.stores.queue.busy()
                    if not busy:
                        if held:
                            held = False
                            await lease.release()
                        continue
                    was = held
                    held = await lease.renew() if held else await lease.take()
                    if held and not was:
                        log.debug("this instance runs the quick-race matcher now")
                    if held:
                        await self.round()
                        await self.start_due()
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("quick races: matcher round failed; will retry")
        finally:
            if held:
                await lease.release()

    async def round(self) -> int:
        """One round of the matcher: the races it formed (bot races included)."""
        entries = await self.stores.queue.entries()
        if not entries:
            return 0
        began = time.perf_counter()
        decided = match(entries, self.clock.now_ms(), self.rules)
        self.metrics.quick_round_seconds.observe(time.perf_counter() - began)
        # The races of a round have no player in common: they are made side by side, so a
        # round takes about one race's round trips, not the sum of them all.
        made = await asyncio.gather(
            *(self._form(race) for race in decided.races),
            *(self._bot_race(w) for w in decided.bots),
        )
        return sum(made)

    async def _form(self, race: Formed) -> int:
        if not await self.stores.queue.take(race.players):
            return 0  # someone left or queued again meanwhile: the next round decides again
        seats = [p.Seat(player=w.player, name=w.name) for w in race.players]
        try:
            await self.races.open_quick(race.game, seats, rated=True)
        except (*STORE_ERRORS, p.Refused) as exc:  # type: ignore[misc]
            log.error("quick race of %s not made: %s", [s.player for s in seats], exc)
            await self._requeue(race.players)
            return 0
        self.metrics.quick_races.labels("rated").inc()
        return 1

    async def _bot_race(self, w: Waiting) -> int:
        if not await self.stores.queue.take([w]):
            return 0
        strength = bot_strength(w.rating)
        offer = p.Queued(game=w.game, rating=w.rating, since_ms=w.since_ms, bot=strength)
        log.info(
            "player %s waited alone %g s: a %s bot", w.player, self.config.quick_bot_after_s,
            strength,
        )  # fmt: skip
        try:
            await self._tell(w.player, offer)
            seat = p.Seat(player=w.player, name=w.name)
            await self.races.open_quick(w.game, [seat], rated=False, bot=strength)
        except (*STORE_ERRORS, p.Refused) as exc:  # type: ignore[misc]
            log.error("bot race for %s not made: %s", w.player, exc)
            await self._requeue([w])
            return 0
        self.metrics.quick_races.labels("bot").inc()
        return 1

    async def _requeue(self, entries: Sequence[Waiting]) -> None:
        """Players taken out of the queue for a race that could not be made wait again, as
        they were (their time waited counts; an entry of theirs for that game made meanwhile
        stays as it is)."""
        for w in entries:
            try:
                await self.stores.queue.put(w)
            except STORE_ERRORS as exc:
                log.error("player %s lost their place in the queue: %s", w.player, exc)

    async def start_due(self) -> None:
        async def start(code: str) -> None:
            if await self.races.autostart(code):
                await self.stores.queue.unschedule(code)

        await asyncio.gather(
            *(start(c) for c in await self.stores.queue.due_starts(self.clock.now_ms()))
        )

    async def _tell(self, player: str, message: p.Message) -> None:
        """An update for the player wherever they are connected."""
        events = self.applier.events([to_player(player, message)])
        self.applier.deliver(events)
        await self.stores.presence.publish(
            await self.stores.presence.players_instances([player]), self.applier.payload(events)
        )
