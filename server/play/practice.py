"""Practice games: unranked, with undo and hints (the `practice`, `undo` and `hint` requests).

A practice game is a game of the store like a daily attempt (kind "practice", gid
`p.GAME.NONCE.PID`, under its player's hash tag), so `move`, `get` and `resign` work on it
unchanged. What only practice games allow:

- `undo {gid}` takes back the last move (also after the game ended, won or lost; not after
  `resign`) and answers with the new `state`;
- `hint {gid}` answers `hint {gid, n, move, verdict}`: the next move of a solver's winning
  line from the current position, or the first move towards the best position the search
  found when it gives up. The solver reads the full deal on the server, in the solver pool,
  where a player's hints take turns with everyone else's: one at a time per player, and no
  more than the player's share of search time (server/solver_pool.py).

Races and dailies are ranked: `undo` and `hint` on them are refused with `bad_request`.
Nothing ranked depends on a practice game, so its `state` carries its `seed`.
Practice games are listed in `welcome.active` (kind "practice") while unfinished; one
that nobody touches is forgotten after `practice_ttl_s`.
"""

from __future__ import annotations

import logging
import secrets

import engine
import protocol as p
from server import solver_pool
from server.clock import Clock
from server.config import Config
from server.domain.changes import MUST_NOT_EXIST, GameChange, Written
from server.domain.ids import parse_gid, practice_gid
from server.domain.kinds import GameKind
from server.domain.records import GameRecord
from server.metrics import Metrics
from server.play.cache import LiveGames
from server.play.effects import Applier, to_player
from server.play.game_machine import LiveGame, dealt_fields, decide_undo
from server.play.moves import Deliver, Moves
from server.play.optimistic import Plan
from server.play.players import Who
from server.play.race_machine import new_seed
from server.solver_pool import HINTS, OverShare, OwnerBusy, SolverBusy, SolverPool, position_of
from server.store.stores import Stores

log = logging.getLogger(__name__)

RANKED = "races and dailies are ranked: {what} is for practice games only (solitaire practice)"


class Practice:
    def __init__(
        self,
        stores: Stores,
        cache: LiveGames,
        moves: Moves,
        solver: SolverPool,
        clock: Clock,
        config: Config,
        deliver: Deliver,
        metrics: Metrics | None = None,
    ) -> None:
        self.stores = stores
        self.cache = cache
        self.moves = moves
        self.solver = solver
        self.clock = clock
        self.config = config
        self.applier = Applier(deliver)
        self.metrics = metrics

    async def practice(self, who: Who, msg: p.Practice) -> list[p.Message]:
        seed = msg.seed if msg.seed is not None else new_seed()
        gid = practice_gid(msg.game, secrets.token_hex(4), who.player)
        now = self.clock.now_ms()
        record = GameRecord(
            gid=gid,
            kind=GameKind.PRACTICE,
            game=msg.game,
            seed=seed,
            player=who.player,
            name=who.name,
            **dealt_fields(engine.new_game(msg.game, seed), now),
        )
        ttl = self.config.practice_ttl_s
        change = GameChange(record, MUST_NOT_EXIST, all_fields=True)
        if (
            await self.stores.games.write_game(change, index_games=True, ttl_s=ttl)
            is Written.APPLIED
        ):
            await self.stores.players.keep_player(who.player)  # a player who starts a game is kept
        # The player's other practice games get the same time to live (a move list is made
        # by the first move, without one).
        older = [
            g
            for g in await self.stores.players.player_games(who.player)
            if g != gid and _practice(g)
        ]
        await self.stores.games.expire_games(older, ttl)
        log.info("practice game %s: player %s, %s seed %d", gid, who.player, msg.game, seed)
        live = await self.cache.get(gid, fresh=True)
        if live is None:
            raise p.Refused(p.UNAVAILABLE, "the practice game could not be loaded")
        return [live.state(now, msg.id)]

    async def _own(self, who: Who, gid: str, what: str) -> LiveGame:
        """The asker's practice game `gid`; Refused if it is none."""
        live = await self.moves.own_game(who, gid)
        if live.record.kind is not GameKind.PRACTICE:
            raise p.Refused(p.BAD_REQUEST, RANKED.format(what=what))
        return live

    async def undo(self, who: Who, msg: p.Undo) -> list[p.Message]:
        gid = msg.gid

        async def attempt() -> Plan[p.State]:
            live = await self._own(who, gid, "undo")
            if live.n and not live.tail:
                # Cached right at a snapshot: load it from the one before its last move.
                reloaded = await self.cache.load(gid, keep_last=True)
                if reloaded is None:
                    raise p.Refused(p.NOT_FOUND, "no such game")
                live = reloaded
            undone, replayed = decide_undo(live)
            if self.metrics is not None:
                self.metrics.moves_replayed.labels("loop").inc(replayed)
            state = undone.state(self.clock.now_ms())
            events = Applier.events([to_player(who.player, state, but_asker=True)], who.uid)
            change = GameChange(undone.record, live.record.ver)

            async def write() -> Written:
                written = await self.stores.games.write_game(
                    change, undo=True, ttl_s=self.config.practice_ttl_s,
                    payload=Applier.payload(events),
                )  # fmt: skip
                if written is not Written.APPLIED:
                    self.cache.evict(gid)
                return written

            async def undone_now() -> p.State:
                self.cache.adopt(undone)
                log.debug("practice game %s: move %d undone", gid, live.n)
                state.re = msg.id
                self.applier.deliver(events)
                return state

            return Plan(undone_now, write, missing=_changed)

        async with self.cache.lock(gid):
            # Never tried again: the undo asked for is of the move the player last saw.
            state = await self.moves.runner.run(
                f"game {gid}", attempt, retries=1, exhausted=_changed
            )
        return [state]

    async def hint(self, who: Who, msg: p.Hint) -> list[p.Message]:
        live = await self._own(who, msg.gid, "a hint")
        rec = live.record
        if rec.finished:
            raise p.Refused(p.ILLEGAL_MOVE, "this game is finished")
        # The moves kept in memory, from the position they start from: never the whole list
        # of a long game (the hint avoids the positions these moves went through).
        base = None if live.base_game is None else position_of(live.base_game)
        n = live.n
        try:
            move, verdict = await self.solver.run(
                solver_pool.hint,
                rec.game,
                rec.seed,
                base,
                list(live.tail),
                self.config.hint_budget_s,
                lane=HINTS,
                owner=who.player,
            )
        except OwnerBusy:
            raise p.Refused(
                p.RATE_LIMITED, "one hint at a time: the last one asked is still being searched"
            ) from None
        except OverShare as over:
            raise p.Refused(
                p.RATE_LIMITED,
                f"your hints have used their share of the solver; ask again in "
                f"{over.retry_after_s:.0f} s",
            ) from None
        except SolverBusy:
            raise p.Refused(p.UNAVAILABLE, "the solver is busy; ask again shortly") from None
        log.debug("practice game %s: hint at move %d: %s (%s)", rec.gid, n, move, verdict)
        return [p.HintReply(re=msg.id, gid=rec.gid, n=n, move=move, verdict=verdict)]


def _changed() -> p.State:
    raise p.Refused(p.UNAVAILABLE, "the game changed meanwhile; try again")


def _practice(gid: str) -> bool:
    parsed = parse_gid(gid)
    return parsed is not None and parsed.kind is GameKind.PRACTICE
