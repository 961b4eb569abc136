"""Bot seats in races, played by the server at a human pace.

`create {..., bots, bot_strength}` seats `bots` bot players next to the host (counted in
max_players). A bot is a player like any other in lobby, progress and result: its player
id starts with "bot-" (a human's never does) and its name ends with " (bot)".

Once the race starts, some instance drives its bots: it holds a lease in Redis
(`{ns:race:CODE}:botlease`, `bot_lease_s`) and renews it while it plays. Every instance's
`BotRunner` looks at the races whose bots are to be driven (`{ns:index}:bots`) and takes
over any whose lease has expired, so bots keep playing when the instance that started them
dies. Two instances never both drive a race for long (the lease), and even then every bot
move goes through the same validated, durable move path as a human's (`handlers._play`,
with its move count check), so a move is never applied twice.

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
from typing import TYPE_CHECKING, Any

import protocol as p
from engine.solve import bot as policy
from server import solver_pool
from server.play import race_machine as races
from server.solver_pool import SolverBusy
from server.store.bus import Event, encode_events
from server.store.keys import race_gid

if TYPE_CHECKING:
    from server.app import App

log = logging.getLogger(__name__)

BOT_PREFIX = "bot-"
BOT_SUFFIX = " (bot)"
BOT_NAMES = (
    "Ada", "Bram", "Cleo", "Dov", "Edda", "Finn", "Gus", "Hana",
    "Ivo", "Juno", "Kai", "Lea", "Milo", "Nell", "Otto", "Pia",
)  # fmt: skip

# Renew the lease if this instance holds it. KEYS: lease. ARGV: owner, ms. Returns 1 if held.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def is_bot(player: str) -> bool:
    return player.startswith(BOT_PREFIX)


async def seat_bots(app: App, race: races.Race, count: int, strength: str, skip: str) -> races.Race:
    """Seat `count` bots in a race still in its lobby; returns the race as it now stands."""
    store, keys = app.store, app.store.keys
    now = app.clock.now_ms()
    bots_key = keys.race_bots(race.code)
    for i in range(count):
        player = BOT_PREFIX + secrets.token_hex(6)
        name = BOT_NAMES[i % len(BOT_NAMES)] + BOT_SUFFIX
        await store.redis.hset(
            keys.player_meta(player), mapping={"name": name, "created_ms": now, "bot": strength}
        )
        await store.redis.expire(keys.player_meta(player), app.config.finished_race_ttl_s)
        await store.redis.hset(bots_key, player, strength)
        await store.redis.expire(bots_key, app.config.lobby_ttl_s)
        for _ in range(8):
            loaded = await store.load_race(race.code)
            if loaded is None:
                return race
            race = loaded
            seat = p.Seat(player=player, name=name)
            record = race.new_game_record(seat)
            race.seats.append(seat)
            events = [Event(to=race.players(), frames=[p.encode(race.lobby())], skip=skip)]
            status = await store.join_race(race, record, encode_events(events), [])
            if status == 1:
                app.hub.deliver(events)
                break
            race.seats.pop()
            if status < 0:
                return race
    log.info("race %s: %d %s bots seated", race.code, count, strength)
    return await store.load_race(race.code) or race


class _BotSession:
    """What handlers._play needs of a session, for a bot: it keeps the reply."""

    def __init__(self, app: App, player: str, name: str) -> None:
        self.app = app
        self.player = player
        self.name = name
        self.uid = f"{app.instance}.{player}"
        self.reply: Any = None

    def send(self, message: p.Message) -> None:
        self.reply = message

    def error(self, code: str, msg: str, re: int | None) -> None:
        self.reply = p.Error(re=re, code=code, msg=msg)


class BotRunner:
    """Drives the bots of the races whose lease this instance holds."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._races: dict[str, asyncio.Task[None]] = {}

    async def race_started(self, code: str) -> None:
        """Called once a race has started: drive its bots, if it has any."""
        app = self.app
        keys = app.store.keys
        if not await app.store.redis.exists(keys.race_bots(code)):
            return
        ttl = app.config.untimed_race_max_s + app.config.finished_race_ttl_s
        await app.store.redis.expire(keys.race_bots(code), ttl)
        await app.store.redis.sadd(keys.bot_index(), code)
        await self._try_take(code)

    async def run(self) -> None:
        """Forever: take over the races whose bots nobody drives (an expired lease)."""
        while True:
            try:
                codes = await self.app.store.redis.smembers(self.app.store.keys.bot_index())
                for code in sorted(codes):
                    if code not in self._races:
                        await self._try_take(code)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("bots: scan failed; will retry")
            await asyncio.sleep(self.app.config.bot_lease_s / 3)

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
        app = self.app
        lease_ms = int(app.config.bot_lease_s * 1000)
        lease = app.store.keys.race_bot_lease(code)
        if not await app.store.redis.set(lease, app.instance, nx=True, px=lease_ms):
            return
        task = asyncio.create_task(self._drive(code), name=f"bots-{code}")
        self._races[code] = task
        task.add_done_callback(lambda _t: self._races.pop(code, None))

    async def _drive(self, code: str) -> None:
        app = self.app
        redis, keys = app.store.redis, app.store.keys
        lease = keys.race_bot_lease(code)
        lease_ms = int(app.config.bot_lease_s * 1000)
        done = False
        try:
            race = await app.store.load_race(code)
            strengths = await redis.hgetall(keys.race_bots(code))
            if race is None or race.status != races.RUNNING or not strengths:
                done = race is None or race.status == races.DONE or not strengths
                return
            log.info("race %s: instance %s drives %d bots", code, app.instance, len(strengths))
            names = {s.player: s.name for s in race.seats}
            players = [
                asyncio.create_task(self._play(race, pl, names.get(pl, pl), strength))
                for pl, strength in strengths.items()
            ]
            try:
                while not all(t.done() for t in players):
                    await asyncio.wait(players, timeout=app.config.bot_lease_s / 3)
                    renewed = await redis.eval(_RENEW, 1, lease, app.instance, lease_ms)
                    if not int(renewed):
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
                await redis.srem(keys.bot_index(), code)
                await redis.eval(_RELEASE, 1, lease, app.instance)

    async def _play(self, race: races.Race, player: str, name: str, strength: str) -> None:
        """One bot seat, move after move, until its game is finished."""
        from server.play.handlers import play_as  # the one move path; imported late (cycle)

        app, cfg = self.app, self.app.config
        gid = race_gid(race.code, player)
        rng = random.Random(secrets.randbits(64))
        session = _BotSession(app, player, name)
        plan: list[str] = []
        plan_n = solved_n = -1
        best_score, stall = -1, 0
        while True:
            live = await app.cache.get(gid, fresh=True)
            if live is None or live.record.finished:
                return
            wait_ms = live.record.started_at_ms - app.clock.now_ms()
            if wait_ms > 0:
                await asyncio.sleep(wait_ms / 1000)
            n = len(live.move_list)
            if live.record.score > best_score:
                best_score, stall = live.record.score, 0
            planned = None
            if policy.uses_solver(strength):
                # A line from here, unless the one being followed still applies; an
                # exhausted line (the best one of a search that gave up) is searched again
                # every few moves, not on every move.
                if plan_n != n or (not plan and n - solved_n >= 8):
                    plan = await self._line(race, live.move_list)
                    plan_n = solved_n = n
                planned = plan[0] if plan else None
            move = policy.choose_move(live.game.view(), strength, rng, planned)
            await asyncio.sleep(policy.think_time(strength, rng, cfg.bot_think_scale))
            if move is None or stall >= cfg.bot_stall_moves:
                await play_as(session, gid, None, None, "")  # resign: nothing left to try
                return
            await play_as(session, gid, None, n, move)
            reply = session.reply
            if isinstance(reply, p.State):
                stall += 1
                if plan and move == plan[0]:
                    plan.pop(0)
                    plan_n = n + 1
            elif isinstance(reply, p.Error):
                log.debug("race %s: bot %s move %s refused: %s", race.code, player, move, reply.msg)
                plan_n = -1
                await asyncio.sleep(0.05)

    async def _line(self, race: races.Race, moves: list[str]) -> list[str]:
        """A solver line from the bot's position (empty if the solver is busy)."""
        app = self.app
        try:
            _verdict, found = await app.solver.run(
                solver_pool.line, race.game, race.seed, list(moves), app.config.bot_solve_budget_s
            )
        except SolverBusy:
            return []
        return found
