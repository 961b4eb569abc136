"""What the server does with each request: the dispatch table and its handlers.

A handler is `async def handle(session, msg) -> None`; it answers the request
with exactly one reply (`session.send(...)` with `re=msg.id`, or
`session.error(...)`) and may send events. `build_handlers()` is the dispatch
table from request type to handler; other features register theirs there.
The game and race rules live in server/play/game_machine.py and server/play/race_machine.py; this
module loads, asks them, stores and sends.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import engine
import protocol as p
from server.daily import service as daily
from server.play import bots, practice
from server.play import race_machine as races
from server.play.game_machine import (
    Applied,
    GameRecord,
    LiveGame,
    Refusal,
    Retransmission,
    dealt_fields,
    decide_move,
    decide_resign,
)
from server.play.referee import close_if_due
from server.store.bus import Event, encode_events
from server.store.redis_client import StoreUnavailable

if TYPE_CHECKING:
    from server.app import App
    from server.edge.session import Session

log = logging.getLogger(__name__)

Handler = Callable[["Session", Any], Awaitable[None]]


def build_handlers() -> dict[type[p.Request], Handler]:
    """The dispatch table (hello is handled by the session before any of these)."""
    return {
        p.Create: handle_create,
        p.Join: handle_join,
        p.StartRace: handle_start,
        p.Move: handle_move,
        p.Get: handle_get,
        p.Resign: handle_resign,
        p.Daily: daily.handle_daily,
        p.Leaderboard: daily.handle_leaderboard,
        p.Stats: daily.handle_stats,
        p.Practice: practice.handle_practice,
        p.Undo: practice.handle_undo,
        p.Hint: practice.handle_hint,
    }


# ---------------------------------------------------------------- session


async def handle_hello(session: Session, msg: p.Hello) -> bool:
    """Greets a connection; True once it is welcomed (else it may say hello again)."""
    app = session.app
    if msg.v != p.VERSION:
        session.error(
            p.UNSUPPORTED_VERSION, f"this server speaks protocol version {p.VERSION}", msg.id
        )
        return False
    if msg.token is not None:
        player = await app.store.player_for_token(msg.token)
        if player is None:
            session.error(p.AUTH_FAILED, "unknown token", msg.id)
            return False
        token = msg.token
        await app.store.rename_player(player, msg.name)
    else:
        player, token = await app.store.create_player(msg.name, app.clock.now_ms())
    session.player, session.name = player, msg.name
    app.hub.add(session)
    active, lobbies = await _player_games(session)
    session.send(
        p.Welcome(re=msg.id, v=p.VERSION, player=player, name=msg.name, token=token, active=active)
    )
    for lobby in lobbies:
        session.send(lobby)
    log.info(
        "player %s (%s) %s; %d active games",
        player, msg.name, "is back" if msg.token else "is new", len(active),
    )  # fmt: skip
    return True


async def _player_games(session: Session) -> tuple[list[p.State], list[p.Lobby]]:
    """The player's unfinished games and waiting lobbies; registers for their events."""
    app, player = session.app, session.player
    assert player is not None
    keys = app.store.keys
    gids = await app.store.player_games(player)
    records = await app.store.load_records(gids) if gids else []
    interest = {keys.player_interest(player)}
    stale: list[str] = []
    active: list[str] = []
    lobby_codes: list[str] = []
    finished_seats: list[GameRecord] = []
    for gid, rec in zip(gids, records, strict=True):
        if rec is None:
            stale.append(gid)
        elif rec.kind == "race" and not rec.started_at_ms:
            lobby_codes.append(rec.race)
            interest.add(keys.race_interest(rec.race))
        elif not rec.finished:
            active.append(gid)
            if rec.kind == "race":
                interest.add(keys.race_interest(rec.race))
        elif rec.kind == "race":
            finished_seats.append(rec)
        else:
            stale.append(gid)
    for rec in finished_seats:
        # A finished seat still hears its race's progress and result until the race ends.
        race = await app.store.load_race(rec.race)
        if race is not None and race.status == races.RUNNING:
            interest.add(keys.race_interest(rec.race))
        else:
            stale.append(rec.gid)
    await app.store.add_interest(sorted(interest))
    await app.store.forget_player_games(player, stale)
    now = app.clock.now_ms()
    states = []
    for gid in active:
        live = await app.cache.get(gid, fresh=True)
        if live is not None:
            states.append(live.state(now))
    lobbies = []
    for code in lobby_codes:
        race = await app.store.load_race(code)
        if race is not None and race.status == races.LOBBY and race.seated(player):
            lobbies.append(race.lobby())
    return states, lobbies


# ---------------------------------------------------------------- races


async def handle_create(session: Session, msg: p.Create) -> None:
    app, player = session.app, session.player
    assert player is not None and session.name is not None
    cfg = app.config
    for _ in range(8):
        race = races.Race(
            code=races.new_code(cfg.race_code_length),
            game=msg.game,
            seed=msg.seed if msg.seed is not None else races.new_seed(),
            host=player,
            max_players=msg.max_players or cfg.default_max_players,
            time_limit_s=msg.time_limit_s or 0,
            created_ms=app.clock.now_ms(),
            seats=[p.Seat(player=player, name=session.name)],
        )
        host_record = race.new_game_record(race.seats[0])
        instances = await app.store.seat_player(player, host_record.gid)
        events = [Event(to=[player], frames=[p.encode(race.lobby())], skip=session.uid)]
        if await app.store.create_race(race, host_record, encode_events(events), instances):
            break
        await app.store.forget_player_games(player, [host_record.gid])
    else:
        session.error(p.UNAVAILABLE, "could not find a free race code; try again", msg.id)
        return
    if msg.bots:
        race = await bots.seat_bots(app, race, msg.bots, msg.bot_strength, session.uid)
    app.remember_lobby(race)
    log.info(
        "race %s created by player %s: %s, %d seats, time limit %s",
        race.code, player, race.game, race.max_players, race.time_limit_s or "none",
    )  # fmt: skip
    session.send(p.with_re(race.created(), msg.id))
    session.send(race.lobby())
    app.hub.deliver(events)


async def handle_join(session: Session, msg: p.Join) -> None:
    app, player = session.app, session.player
    assert player is not None and session.name is not None
    code = races.normalise_code(msg.race)
    if code is None:
        session.error(p.NOT_FOUND, f"no race {msg.race!r}", msg.id)
        return
    for _ in range(8):
        race = await app.store.load_race(code)
        if race is None:
            session.error(p.NOT_FOUND, f"no race {code}", msg.id)
            return
        if race.seated(player):
            await app.store.add_interest([app.store.keys.race_interest(code)])
            session.send(p.with_re(race.lobby(), msg.id))
            result = race.stored_result()
            if result is not None:
                # The seat may have been offline when the result went out; welcome.active
                # lists unfinished games only, so this is how it gets the result back.
                session.send(result)
                log.info("race %s: result sent again to player %s", code, player)
            return
        refusal = race.join_refusal(player)
        if refusal is not None:
            session.error(*refusal, msg.id)
            return
        seat = p.Seat(player=player, name=session.name)
        record = race.new_game_record(seat)
        race.seats.append(seat)
        lobby = race.lobby()
        events = [Event(to=race.players(), frames=[p.encode(lobby)], skip=session.uid)]
        instances = await app.store.seat_player(player, record.gid)
        status = await app.store.join_race(race, record, encode_events(events), instances)
        if status == 1:
            log.info("race %s: player %s (%s) joined", code, player, session.name)
            race.ver += 1  # as the join script left it
            app.remember_lobby(race)
            session.send(p.with_re(lobby, msg.id))
            app.hub.deliver(events)
            return
        if status < 0:
            session.error(p.NOT_FOUND, f"no race {code}", msg.id)
            return
    session.error(p.UNAVAILABLE, "the race kept changing; try again", msg.id)


async def handle_start(session: Session, msg: p.StartRace) -> None:
    app, player = session.app, session.player
    assert player is not None
    code = races.normalise_code(msg.race)
    if code is None:
        session.error(p.NOT_FOUND, f"no race {msg.race!r}", msg.id)
        return
    # First as this process last wrote it, if it did: the start script refuses a race that
    # changed since (status 0), and then it is read again.
    guess = app.last_lobby(code)
    for _ in range(8):
        race = guess or await app.store.load_race(code)
        guess = None
        if race is None:
            session.error(p.NOT_FOUND, f"no race {code}", msg.id)
            return
        refusal = race.start_refusal(player)
        if refusal is not None:
            session.error(*refusal, msg.id)
            return
        starts = app.clock.now_ms()
        ends = starts + race.time_limit_s * 1000 if race.time_limit_s else 0
        race.starts_at_ms, race.ends_at_ms = starts, ends
        game = engine.new_game(race.game, race.seed)
        dealt = dealt_fields(game, starts)
        seats = [
            LiveGame(race.new_game_record(seat).evolve(ends_at_ms=ends, **dealt), game)
            for seat in race.seats
        ]
        start_frame = p.encode(race.start_message())
        states = {live.record.player: live.state(starts) for live in seats}
        events = [
            Event(to=[pl], frames=[start_frame, p.encode(st)], skip=session.uid)
            for pl, st in states.items()
        ]
        initial = seats[0].record.changing_fields()
        deadline = race.deadline_ms(app.config.untimed_race_max_s)
        status = await app.store.start_race(
            race, starts, ends, initial, encode_events(events), deadline
        )
        if status == 1:
            log.info("race %s started by player %s with %d seats", code, player, len(race.seats))
            # The starter's first move needs neither its game nor the seats from the store.
            app.cache.adopt(next(live for live in seats if live.record.player == player))
            app.remember_race_players(code, race.players())
            session.send(p.with_re(race.start_message(), msg.id))
            session.send(states[player])
            app.hub.deliver(events)
            if dealt["over"]:
                await close_if_due(app, code)
            if any(bots.is_bot(pl) for pl in race.players()):
                await app.bots.race_started(code)
            return
        if status < 0:
            session.error(p.NOT_FOUND, f"no race {code}", msg.id)
            return
    session.error(p.UNAVAILABLE, "the race kept changing; try again", msg.id)


# ---------------------------------------------------------------- games in play


# The move path is the server's hot path: its helpers that need not wait are plain
# functions, and the handlers below return _play's coroutine rather than wrap it in another.


def handle_move(session: Session, msg: p.Move) -> Awaitable[None]:
    return _play(session, msg.gid, msg.id, msg.n, msg.m)


def handle_resign(session: Session, msg: p.Resign) -> Awaitable[None]:
    return _play(session, msg.gid, msg.id, None, "")


async def handle_get(session: Session, msg: p.Get) -> None:
    app = session.app
    live = await app.cache.get(msg.gid, fresh=True) if app.store.game_keys(msg.gid) else None
    if live is None or live.record.player != session.player:
        session.error(p.NOT_FOUND, "no such game", msg.id)
        return
    session.send(live.state(app.clock.now_ms(), msg.id))


async def _play(session: Session, gid: str, re: int | None, n: int | None, move: str) -> None:
    """A move (`n` given) or a resignation (`n` None) on one of the player's games."""
    app, player = session.app, session.player
    if app.store.game_keys(gid) is None:
        session.error(p.NOT_FOUND, "no such game", re)
        return
    cache = app.cache
    async with cache.lock(gid):
        for _ in range(4):  # again only if the stored game moved on meanwhile
            live = cache.peek(gid)
            if live is None or (n is not None and n != len(live.move_list)):
                # Not cached, or our copy may be behind (a move made through another process).
                live = await cache.get(gid, fresh=True)
            if live is None or live.record.player != player:
                session.error(p.NOT_FOUND, "no such game", re)
                return
            now_us = app.clock.now_us()
            now = now_us // 1000
            decision = (
                decide_move(live, n, move, now_us) if n is not None else decide_resign(live, now_us)
            )
            if isinstance(decision, Retransmission):
                fresh = await cache.get(gid, fresh=True)
                assert fresh is not None
                session.send(fresh.state(app.clock.now_ms(), re))
                return
            if isinstance(decision, Refusal):
                app.metrics.moves_rejected.labels(decision.code).inc()
                session.error(decision.code, decision.msg, re)
                if decision.time_up:
                    await app.game_time_up(live.record)
                return
            # The decision is made on `live` (a move is already played on its game): until the
            # store has it, it runs ahead of the store, so it stays out of the cache meanwhile.
            cache.evict(gid)
            # Written only over the game it was decided on (a resignation too): a copy cached
            # here may be stale if another connection of the player moved through another
            # instance, and writing its record would undo those moves.
            expect_n = len(live.move_list)
            if isinstance(decision, Applied):
                live.record = decision.record
                live.move_list.append(move)
            else:
                live.record = decision
            record = live.record
            state = live.state(now)
            events = [Event(to=[player], frames=[p.encode(state)], skip=session.uid)]
            if record.kind == "race":
                seats = app.known_race_players(record.race) or await app.race_players(record.race)
                events.append(Event(to=seats, frames=[p.encode(live.progress(now))]))
            try:
                outcome = await app.store.write_game(
                    record, move, expect_n, now, encode_events(events)
                )
            except StoreUnavailable as exc:
                log.warning("game %s of player %s: store failed: %s", gid, player, exc)
                session.error(p.UNAVAILABLE, "the store is unavailable; resend", re)
                return
            if outcome.status == 1:
                _stored(app, live, move)
                if record.finished and record.kind == "daily":
                    # Ranked before its final state goes out: whoever sees that state may ask
                    # for the board next and must find the attempt on it.
                    await app.game_finished(record)
                state.re = re
                session.send(state)
                app.hub.deliver(events)
                if record.finished and record.kind != "daily":
                    await app.game_finished(record)
                return
            if outcome.status == -1:
                session.error(p.NOT_FOUND, "no such game", re)
                return
        session.error(p.UNAVAILABLE, "the game kept changing; resend", re)


def _stored(app: App, live: LiveGame, move: str) -> None:
    """The store has the move (or resignation): cache the game as it now is, count, log."""
    record = live.record
    app.cache.adopt(live)
    if move:
        app.metrics.moves_accepted.value += 1
        if log.isEnabledFor(logging.DEBUG):
            log.debug(
                "game %s (race %s): player %s move %d %s (score %d)",
                record.gid, record.race or "-", record.player, len(live.move_list), move,
                record.score,
            )  # fmt: skip
    else:
        log.info("game %s: player %s resigned", record.gid, record.player)


# Bots (server/play/bots.py) play through exactly this path.
play_as = _play
