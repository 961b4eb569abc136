"""Practice games: unranked, with undo and hints (the `practice`, `undo` and `hint` requests).

A practice game is a game of the store like a daily attempt (kind "practice", gid
`p.GAME.NONCE.PID`, under its player's hash tag), so `move`, `get` and `resign` work on it
unchanged. What only practice games allow:

- `undo {gid}` takes back the last move (also after the game ended, won or lost; not after
  `resign`) and answers with the new `state`;
- `hint {gid}` answers `hint {gid, n, move, verdict}`: the next move of a solver's winning
  line from the current position, or the first move towards the best position the search
  found when it gives up. The solver reads the full deal on the server, in the solver pool.

Races and dailies are ranked: `undo` and `hint` on them are refused with `bad_request`.
Nothing ranked depends on a practice game, so its `state` carries its `seed`.
Practice games are listed in `welcome.active` (kind "practice") while unfinished; one
that nobody touches is forgotten after `practice_ttl_s`.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING

import engine
import protocol as p
from server import solver_pool
from server.play import race_machine as races
from server.play.game_machine import GameRecord, LiveGame, dealt_fields
from server.solver_pool import SolverBusy
from server.store.bus import Event, encode_events
from server.store.keys import practice_gid
from server.store.store import flat_fields

if TYPE_CHECKING:
    from server.edge.session import Session

log = logging.getLogger(__name__)

RANKED = "races and dailies are ranked: {what} is for practice games only (solitaire practice)"

# Create a practice game. KEYS: game meta, the player's games set. ARGV: ttl, gid, field,
# value, ... Returns 1 created, 0 the gid exists.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
return 1
"""

# Take back the last move. KEYS: game meta, moves, interest set.
# ARGV: expected n, ttl, origin, channel prefix, payload, field, value, ...
# Returns {status, n}: 1 undone, 0 n mismatch, -1 no such game, -2 not a practice game.
_UNDO = """
local n = redis.call('LLEN', KEYS[2])
if n ~= tonumber(ARGV[1]) or n == 0 then return {0, n} end
if redis.call('HGET', KEYS[1], 'kind') ~= 'practice' then return {-2, n} end
redis.call('RPOP', KEYS[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('EXPIRE', KEYS[1], ARGV[2])
if n > 1 then redis.call('EXPIRE', KEYS[2], ARGV[2]) end
if ARGV[5] ~= '' then
  for _, inst in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    if inst ~= ARGV[3] then redis.call('PUBLISH', ARGV[4] .. inst, ARGV[5]) end
  end
end
return {1, n - 1}
"""


async def handle_practice(session: Session, msg: p.Practice) -> None:
    app, player = session.app, session.player
    assert player is not None and session.name is not None
    store = app.store
    seed = msg.seed if msg.seed is not None else races.new_seed()
    gid = practice_gid(msg.game, secrets.token_hex(4), player)
    start = engine.new_game(msg.game, seed)
    now = app.clock.now_ms()
    record = GameRecord(
        gid=gid,
        kind="practice",
        game=msg.game,
        seed=seed,
        player=player,
        name=session.name,
        **dealt_fields(start, now),
    )
    keys = store.game_keys(gid)
    assert keys is not None
    ttl = app.config.practice_ttl_s
    await store.redis.eval(
        _CREATE, 2, keys.meta, store.keys.player_games(player), ttl, gid,
        *flat_fields(record.to_redis()),
    )  # fmt: skip
    await _expire_older(session, gid)
    log.info("practice game %s: player %s, %s seed %d", gid, player, msg.game, seed)
    live = await app.cache.get(gid, fresh=True)
    if live is None:
        session.error(p.UNAVAILABLE, "the practice game could not be loaded", msg.id)
        return
    session.send(live.state(now, msg.id))


async def _expire_older(session: Session, keep: str) -> None:
    """Give the player's other practice games' move lists the same time to live as their
    records (a move list is made by the first move, without one)."""
    app, player = session.app, session.player
    assert player is not None
    ttl = app.config.practice_ttl_s
    pipe = app.store.redis.pipeline(transaction=False)
    for gid in await app.store.player_games(player):
        keys = app.store.game_keys(gid)
        if gid != keep and gid.startswith("p.") and keys is not None:
            pipe.expire(keys.moves, ttl)
            pipe.expire(keys.meta, ttl)
    await pipe.execute()


async def _practice_game(session: Session, gid: str, re: int | None, what: str) -> LiveGame | None:
    """The asker's practice game `gid`, or None after answering why not."""
    app = session.app
    live = await app.cache.get(gid, fresh=True) if app.store.game_keys(gid) else None
    if live is None or live.record.player != session.player:
        session.error(p.NOT_FOUND, "no such game", re)
        return None
    if live.record.kind != "practice":
        session.error(p.BAD_REQUEST, RANKED.format(what=what), re)
        return None
    return live


async def handle_undo(session: Session, msg: p.Undo) -> None:
    app, gid = session.app, msg.gid
    async with app.cache.lock(gid):
        live = await _practice_game(session, gid, msg.id, "undo")
        if live is None:
            return
        rec = live.record
        if rec.resigned:
            session.error(p.ILLEGAL_MOVE, "this game was resigned", msg.id)
            return
        if not live.move_list:
            session.error(p.ILLEGAL_MOVE, "no move to undo", msg.id)
            return
        moves = live.move_list[:-1]
        game = engine.replay(rec.game, rec.seed, moves)
        over = bool(game.over)
        now = app.clock.now_ms()
        new = rec.evolve(
            score=int(game.score),
            moves=int(game.moves),
            won=bool(game.won),
            over=over,
            finished=over,
            finished_at_ms=rec.finished_at_ms if over else 0,
            n=len(moves),
        )
        state = LiveGame(new, game, moves).state(now)
        events = [Event(to=[rec.player], frames=[p.encode(state)], skip=session.uid)]
        keys = app.store.game_keys(gid)
        assert keys is not None
        status, _n = await app.store.redis.eval(
            _UNDO, 3, keys.meta, keys.moves, keys.interest,
            len(live.move_list), app.config.practice_ttl_s, app.store.instance,
            app.store.channel_prefix, encode_events(events), *flat_fields(new.changing_fields()),
        )  # fmt: skip
        app.cache.evict(gid)
        if int(status) != 1:
            session.error(p.UNAVAILABLE, "the game changed meanwhile; try again", msg.id)
            return
        log.debug("practice game %s: move %d undone", gid, len(live.move_list))
        state.re = msg.id
        session.send(state)
        app.hub.deliver(events)


async def handle_hint(session: Session, msg: p.Hint) -> None:
    app = session.app
    live = await _practice_game(session, msg.gid, msg.id, "a hint")
    if live is None:
        return
    rec = live.record
    if rec.finished:
        session.error(p.ILLEGAL_MOVE, "this game is finished", msg.id)
        return
    moves = list(live.move_list)
    try:
        move, verdict = await app.solver.run(
            solver_pool.hint, rec.game, rec.seed, moves, app.config.hint_budget_s
        )
    except SolverBusy:
        session.error(p.UNAVAILABLE, "the solver is busy; ask again shortly", msg.id)
        return
    log.debug("practice game %s: hint at move %d: %s (%s)", rec.gid, len(moves), move, verdict)
    session.send(p.HintReply(re=msg.id, gid=rec.gid, n=len(moves), move=move, verdict=verdict))
