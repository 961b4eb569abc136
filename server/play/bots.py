"""Bot seats in races, played by the server at a human pace.

`create {..., bots, bot_strength}` seats `bots` bot players next to the host (counted in
max_players). A bot is a player like any other in lobby, progress and result: its player
id starts with "bot-" (a human's never does) and its name ends with " (bot)".

Once the race starts, some instance drives its bots: it holds a lease in Redis
(`{ns:race:CODE}:botlease`, `bot_lease_s`) and renews it while it plays. Every instance's
`BotRunner` looks at the races whose bots are to be driven (`{ns:index}:bots`) and takes
over any whose lease has expired, so bots keep playing when the instance that started them
dies. Two instances never both drive a race for long (the lease), and even then every bot
move goes through the same validated, durable move path as a human's (`Moves.play`,
with its version check), so a move is never applied twice.

How a bot picks moves and how long it thinks is `engine/solve/bot.py` (shared with the load
benchmark): easy bots play from the public view; medium and hard follow a solver line
computed in the solver pool from the full deal (medium strays from it now and then).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import secrets

import engine
import protocol as p
from engine.solve import bot as policy
from server import solver_pool
from server.clock import Clock
from server.config import Config
from server.domain.ids import race_gid
from server.domain.records import RaceRecord, RaceStatus
from server.play.bot_races import StartedBotRaces
from server.play.cache import LiveGames
from server.play.moves import Moves
from server.play.players import Who
from server.solver_pool import BOTS, SolverBusy, SolverPool, position_of
from server.store.locks import Lease
from server.store.stores import Stores

log = logging.getLogger(__name__)


class BotRunner:
    """Drives the bots of the races whose lease this instance holds."""

    def __init__(
        self,
        stores: Stores,
        cache: LiveGames,
        moves: Moves,
        solver: SolverPool,
        clock: Clock,
        config: Config,
        started: StartedBotRaces,
    ) -> None:
        self.stores = stores
        self.cache = cache
        self.moves = moves
        self.started = started
        self.solver = solver
        self.clock = clock
        self.config = config
        self._races: dict[str, asyncio.Task[None]] = {}

    async def run(self) -> None:
        """Forever: drive the bots of races started here, and take over the races whose
        bots nobody drives (an expired lease)."""
        started = asyncio.create_task(self._take_started(), name="bots-started")
        try:
            await self._scan()
        finally:
            started.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await started

    async def _take_started(self) -> None:
        while True:
            code = await self.started.next()
            try:
                await self._try_take(code)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("race %s: its bots not taken; the scan will retry", code)

    async def _scan(self) -> None:
        while True:
            try:
                for code in await self.stores.races.bot_races():
                    if code not in self._races:
                        await self._try_take(code)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("bots: scan failed; will retry")
            await asyncio.sleep(self.config.bot_lease_s / 3)

    async def stop(self) -> None:
        tasks = list(self._races.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _try_take(self, code: str) -> None:
        if code in self._races:
            return
        lease = self.stores.races.bot_lease(code, self.config.bot_lease_s)
        if not await lease.take():
            return
        task = asyncio.create_task(self._drive(code, lease), name=f"bots-{code}")
        self._races[code] = task
        task.add_done_callback(lambda _t: self._races.pop(code, None))

    async def _drive(self, code: str, lease: Lease) -> None:
        stores, cfg = self.stores, self.config
        done = False
        try:
            race = await stores.races.load_race(code)
            strengths = await stores.races.race_bots(code)
            if race is None or race.status != RaceStatus.RUNNING or not strengths:
                done = race is None or race.status == RaceStatus.DONE or not strengths
                return
            log.info("race %s: instance %s drives %d bots", code, stores.instance, len(strengths))
            names = {s.player: s.name for s in race.seats}
            players = [
                asyncio.create_task(self._play(race, pl, names.get(pl, pl), strength))
                for pl, strength in strengths.items()
            ]
            try:
                while not all(t.done() for t in players):
                    await asyncio.wait(players, timeout=cfg.bot_lease_s / 3)
                    if not await lease.renew():
                        log.warning("race %s: bot lease lost; another instance drives", code)
                        return
                done = True
            finally:
                for t in players:
                    t.cancel()
                await asyncio.gather(*players, return_exceptions=True)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("race %s: driving bots failed; the lease will pass on", code)
        finally:
            if done:
                await stores.races.unindex_bot_race(code)
                await lease.release()

    async def _play(self, race: RaceRecord, player: str, name: str, strength: str) -> None:
        """One bot seat, move after move, until its game is finished."""
        cfg = self.config
        gid = race_gid(race.code, player)
        rng = random.Random(secrets.randbits(64))
        who = Who(player, name, f"{self.stores.instance}.{player}")
        plan: list[str] = []
        plan_n = solved_n = -1
        best_score, stall = -1, 0
        while True:
            live = await self.cache.get(gid, fresh=True)
            if live is None or live.record.finished:
                return
            wait_ms = live.record.started_at_ms - self.clock.now_ms()
            if wait_ms > 0:
                await asyncio.sleep(wait_ms / 1000)
            n = live.n
            if live.record.score > best_score:
                best_score, stall = live.record.score, 0
            planned = None
            if policy.uses_solver(strength):
                # A line from here, unless the one being followed still applies; an
                # exhausted line (the best one of a search that gave up) is searched again
                # every few moves, not on every move.
                if plan_n != n or (not plan and n - solved_n >= 8):
                    plan = await self._line(race, live.game)
                    plan_n = solved_n = n
                planned = plan[0] if plan else None
            move = policy.choose_move(live.game.view(), strength, rng, planned)
            await asyncio.sleep(policy.think_time(strength, rng, cfg.bot_think_scale))
            try:
                if move is None or stall >= cfg.bot_stall_moves:
                    await self.moves.play(who, gid, None, None, "")  # resign: nothing to try
                    return
                await self.moves.play(who, gid, None, n, move)
            except p.Refused as refused:
                log.debug("race %s: bot %s move %s refused: %s", race.code, player, move, refused)
                plan_n = -1
                await asyncio.sleep(0.05)
                continue
            stall += 1
            if plan and move == plan[0]:
                plan.pop(0)
                plan_n = n + 1

    async def _line(self, race: RaceRecord, game: engine.Game) -> list[str]:
        """A solver line from the bot's position (empty if the solver is busy)."""
        try:
            _verdict, found = await self.solver.run(
                solver_pool.line,
                race.game,
                race.seed,
                position_of(game),
                self.config.bot_solve_budget_s,
                lane=BOTS,
            )
        except SolverBusy:
            return []
        return found
