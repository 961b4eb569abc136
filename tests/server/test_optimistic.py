"""The one optimistic-concurrency runner, driven through its stale and missing paths on the
real store: between an attempt's decision and its write, a hook makes a real concurrent
write (through a second server's own services, or on the stored hash itself), so that the
write finds the record changed or gone every time, not only by chance under load."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

import engine
import protocol as p
from server.app import App
from server.config import Config
from server.domain.ids import race_gid
from server.play.players import Who
from server.store.keys import GameKeys, Keys

GAME, SEED = "bakers_game", 11


@pytest.fixture
async def apps(redis_url: str, redis_namespace: str) -> AsyncIterator[tuple[App, App]]:
    """Two server processes' services on one store (nothing listening: called directly)."""
    cfg = dataclasses.replace(Config(), namespace=redis_namespace)
    made = App(cfg, redis_url), App(cfg, redis_url)
    for app in made:
        await app.stores.open()
    yield made
    for app in made:
        await app.stores.close()


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    yield r
    await r.aclose()


def who(name: str, app: App) -> Who:
    return Who(player=f"pl-{name}", name=name, uid=f"{app.instance}.{name}")


async def new_race(app: App, host: Who) -> str:
    replies = await app.races.create(host, p.Create(game=GAME, seed=SEED))
    created = replies[0]
    assert isinstance(created, p.Created)
    return created.race


async def test_a_join_that_finds_the_race_changed_is_decided_again(apps):
    """Bob's join is decided, then Cal joins through the other server before Bob's write:
    Bob's write is stale, his join is decided again on the race with Cal, and both sit."""
    one, two = apps
    ann, bob, cal = who("ann", one), who("bob", one), who("cal", two)
    code = await new_race(one, ann)
    seen: list[tuple[str, int]] = []

    async def cal_joins_first(what: str, attempt: int) -> None:
        seen.append((what, attempt))
        if attempt == 0:
            await two.races.join(cal, p.Join(race=code))

    with one.races.runner.interposed(cal_joins_first):
        replies = await one.races.join(bob, p.Join(race=code))
    assert seen == [(f"race {code}", 0), (f"race {code}", 1)]
    lobby = replies[-1]
    assert isinstance(lobby, p.Lobby)
    assert [s.name for s in lobby.players] == ["ann", "cal", "bob"]
    stored = await one.stores.races.load_race(code)
    assert stored is not None and [s.name for s in stored.seats] == ["ann", "cal", "bob"]


async def test_a_race_that_keeps_changing_is_refused_as_unavailable(apps, raw, redis_namespace):
    """Every attempt's write finds the race's version bumped by a real write: after the
    runner's bound, the start is refused as `unavailable`, and the race never started."""
    one, _two = apps
    ann = who("ann", one)
    code = await new_race(one, ann)
    meta = Keys(redis_namespace).race_meta(code)
    attempts: list[int] = []

    async def bump(what: str, attempt: int) -> None:
        attempts.append(attempt)
        await raw.hincrby(meta, "ver", 1)

    with one.races.runner.interposed(bump), pytest.raises(p.Refused) as refused:
        await one.races.start(ann, p.StartRace(race=code))
    assert refused.value.code == p.UNAVAILABLE
    assert attempts == list(range(one.races.runner.retries))
    stored = await one.stores.races.load_race(code)
    assert stored is not None and stored.status == "lobby"


async def test_a_race_gone_before_the_write_is_not_found(apps, raw, redis_namespace):
    one, _two = apps
    ann = who("ann", one)
    code = await new_race(one, ann)

    async def expire(what: str, attempt: int) -> None:
        await raw.delete(Keys(redis_namespace).race_meta(code))

    with one.races.runner.interposed(expire), pytest.raises(p.Refused) as refused:
        await one.races.start(ann, p.StartRace(race=code))
    assert refused.value.code == p.NOT_FOUND


async def started(app: App, host: Who) -> tuple[str, str, str]:
    """A running race of one seat: its code, the seat's gid and a legal first move."""
    code = await new_race(app, host)
    await app.races.start(host, p.StartRace(race=code))
    move = sorted(engine.new_game(GAME, SEED).legal_moves())[0]
    return code, race_gid(code, host.player), move


async def test_a_move_made_meanwhile_through_another_server_is_answered_once(apps):
    """Ann's move is decided on her cached game, then the same move (her other connection)
    goes through the other server first: the write is stale, the move is decided again on
    the game as stored, found to be a retransmission, and answered with the stored state.
    The game holds the move once."""
    one, two = apps
    ann = who("ann", one)
    _code, gid, move = await started(one, ann)
    elsewhere = dataclasses.replace(ann, uid=f"{two.instance}.ann")

    async def other_connection(what: str, attempt: int) -> None:
        if attempt == 0:
            await two.moves.play(elsewhere, gid, None, 0, move)

    with one.moves.runner.interposed(other_connection):
        (state,) = await one.moves.play(ann, gid, 7, 0, move)
    assert isinstance(state, p.State) and state.n == 1 and state.re == 7
    assert await one.stores.games.game_moves(gid, 0, 10) == [move]
    # The cached copy that the stale write was decided on is gone: the next move is decided
    # on the game as stored.
    cached = one.cache.peek(gid)
    assert cached is not None and cached.n == 1


async def seat_keys(app: App, namespace: str) -> tuple[Who, str, str, GameKeys]:
    """ann alone in a running race: her seat, its gid, a legal move and its keys."""
    ann = who("ann", app)
    _code, gid, move = await started(app, ann)
    keys = Keys(namespace).game(gid)
    assert keys is not None
    return ann, gid, move, keys


async def test_a_move_on_a_game_gone_before_the_write_is_not_found(apps, raw, redis_namespace):
    one, _two = apps
    ann, gid, move, keys = await seat_keys(one, redis_namespace)

    async def gone(what: str, attempt: int) -> None:
        assert what == f"game {gid}"
        await raw.delete(keys.meta)

    with one.moves.runner.interposed(gone), pytest.raises(p.Refused) as refused:
        await one.moves.play(ann, gid, 1, 0, move)
    assert refused.value.code == p.NOT_FOUND
    assert await raw.llen(keys.moves) == 0


async def test_a_game_that_keeps_changing_is_refused_as_unavailable(apps, raw, redis_namespace):
    one, _two = apps
    ann, gid, move, keys = await seat_keys(one, redis_namespace)
    attempts: list[int] = []

    async def bump(what: str, attempt: int) -> None:
        attempts.append(attempt)
        await raw.hincrby(keys.meta, "ver", 1)

    with one.moves.runner.interposed(bump), pytest.raises(p.Refused) as refused:
        await one.moves.play(ann, gid, 1, 0, move)
    assert refused.value.code == p.UNAVAILABLE
    assert attempts == list(range(one.moves.runner.retries))
    assert await raw.llen(keys.moves) == 0


async def test_a_move_is_decided_on_a_game_nobody_else_sees_until_it_is_stored(apps):
    """Between the decision and the write, the game decided on is out of the cache: a
    reader in this process gets the game as the store has it (before the move), never the
    one being written; once stored, the cache holds the game after the move."""
    one, _two = apps
    ann = who("ann", one)
    _code, gid, move = await started(one, ann)
    seen: list[int] = []

    async def look(what: str, attempt: int) -> None:
        assert one.cache.peek(gid) is None
        (state,) = await one.moves.get(ann, p.Get(gid=gid, id=1))
        assert isinstance(state, p.State)
        seen.append(state.n)

    with one.moves.runner.interposed(look):
        (state,) = await one.moves.play(ann, gid, 2, 0, move)
    assert seen == [0] and isinstance(state, p.State) and state.n == 1
    cached = one.cache.peek(gid)
    assert cached is not None and cached.n == 1
