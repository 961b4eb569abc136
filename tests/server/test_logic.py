"""The pure parts of the server, without sockets: ranking, limits, key layout, decoding."""

from __future__ import annotations

import asyncio
import dataclasses
import random

import msgspec
import pytest
from redis.crc import key_slot
from websockets.frames import Frame, Opcode

import engine
import protocol as p
from engine.solve.bot import choose_move
from server.app import App
from server.clock import Clock
from server.config import Config
from server.domain.ids import daily_gid, race_gid
from server.domain.kinds import GameKind
from server.domain.outcome import RESIGNED, STUCK, Outcome
from server.domain.records import GameRecord, RaceRecord
from server.edge.connection import binary_frame_header
from server.edge.ratelimit import FloodGuard, TokenBucket
from server.play.cache import LiveGames
from server.play.game_machine import Applied, LiveGame, decide_move, decide_resign, timed_out
from server.play.race_machine import RaceMachine, RaceRules, normalise_code
from server.store.keys import Keys


def record(
    player: str, score: int, moves: int, finished_at: int, outcome: Outcome = STUCK, **kw: int
) -> GameRecord:
    return GameRecord(
        gid=race_gid("ABCDEF", player), kind=GameKind.RACE, game="quatorze", seed=5,
        player=player, name=player.upper(), race="ABCDEF", started_at_ms=1000,
        outcome=outcome, finished_at_ms=finished_at, score=score, moves=moves, **kw,
    )  # fmt: skip


def test_standings_rank_by_score_time_moves_and_share_ties():
    race = RaceMachine(RaceRecord("ABCDEF", "quatorze", 5, "a", 8, 0, starts_at_ms=1000,
                       seats=[p.Seat(x, x.upper()) for x in "abcdef"]), RaceRules())  # fmt: skip
    games = [
        record("a", 10, 30, 5000),
        record("b", 12, 40, 9000),  # best score wins whatever the time
        record("c", 10, 30, 5000),  # ties a on all three: same rank, listed after a (seat order)
        record("d", 10, 25, 5000),  # same score and time as a, fewer moves: ahead of a
        record("e", 10, 30, 4000),  # same score, faster: ahead of a, c, d
        record("f", 2, 3, 2000, RESIGNED),
    ]
    standings = race.result(games).standings
    assert [(s.rank, s.player) for s in standings] == [
        (1, "b"), (2, "e"), (3, "d"), (4, "a"), (4, "c"), (6, "f"),
    ]  # fmt: skip
    assert standings[0].time_ms == 8000 and standings[-1].resigned
    assert race.result(games).seed == 5


def test_close_records_stops_unfinished_seats_at_the_deadline():
    open_seat = GameRecord(gid="r.ABCDEF.x", kind=GameKind.RACE, game="quatorze", seed=5,
                           player="x", name="X", race="ABCDEF", started_at_ms=1000,
                           score=4)  # fmt: skip
    done = record("y", 4, 2, 3000)
    closed = [timed_out(g, 31_000) for g in (open_seat, done)]
    assert closed[0].finished and closed[0].timed_out and closed[0].finished_at_ms == 31_000
    assert closed[1] is done


def test_token_bucket_allows_burst_then_rate():
    b = TokenBucket(rate=20, burst=60)
    assert sum(b.allow(100.0) for _ in range(100)) == 60
    assert sum(b.allow(101.0) for _ in range(100)) == 20  # one second later: 20 more


def test_flood_guard_counts_a_five_second_window():
    g = FloodGuard(limit=200, window=5)
    assert not any(g.flooding(10.0 + i * 0.025) for i in range(200))  # 40/s for 5 s: at the limit
    assert g.flooding(14.99)
    g2 = FloodGuard(limit=200, window=5)
    assert not any(g2.flooding(float(t)) for t in range(0, 1000, 1) for _ in range(39))


def test_race_codes_are_normalised_or_refused():
    assert normalise_code(" abc234defg56 ") == "ABC234DEFG56"
    assert normalise_code("ABC10ZABCDEF") is None  # 1 and 0 are not in the alphabet
    assert normalise_code("ABCDEFGHJKLMN") is None  # 13 characters
    # Races made before the upgrade keep their 6-character codes and are found by them.
    assert normalise_code("abc234") == "ABC234"
    assert normalise_code("ABC23") is None  # shorter than any server made
    assert normalise_code("abc234", 6) == "ABC234"


def test_all_keys_of_a_race_share_one_cluster_slot():
    k = Keys("sr")
    gid = race_gid("K7P2QX", "p1")
    game = k.game(gid)
    assert game is not None
    keys = [k.race_meta("K7P2QX"), k.race_seats("K7P2QX"), k.race_interest("K7P2QX"),
            game.meta, game.moves, game.interest]  # fmt: skip
    assert len({key_slot(x.encode()) for x in keys}) == 1
    assert all(x.startswith("{sr:race:K7P2QX}") for x in keys)
    daily = k.game(daily_gid("2026-01-02", "doublets", "p1"))
    assert daily is not None
    assert key_slot(daily.meta.encode()) == key_slot(k.player_games("p1").encode())
    for bad in ("r.A", "x.y.z", "r.{A}.p", "r.A:B.p", "", "r..p"):
        assert k.game(bad) is None, bad


def test_decoder_reads_id_and_type_of_bad_frames():
    d = p.RequestDecoder(p.DEFAULT_LIMITS)
    ok = d.decode(msgspec.msgpack.encode({"t": "move", "gid": "g", "n": 3, "m": "deal", "id": 9}))
    assert isinstance(ok, p.Move) and ok.n == 3 and ok.id == 9
    bad = d.decode(msgspec.msgpack.encode({"t": "move", "gid": "g", "n": "3", "m": "x", "id": 9}))
    assert isinstance(bad, p.BadFrame) and bad.re == 9 and "$.n" in bad.msg
    deep = d.decode(b"\x82\xa1t\xa3get\xa3gid" + b"\x91" * 50_000 + b"\xc0")
    assert isinstance(deep, p.BadFrame)
    assert isinstance(d.decode(b""), p.BadFrame)


def test_state_messages_omit_absent_optional_fields():
    st = p.State(gid="g", kind="daily", game="doublets", n=0, view={}, score=1, won=False,
                 over=False, finished=False, elapsed_ms=0, date="2026-01-02")  # fmt: skip
    decoded = msgspec.msgpack.decode(p.encode(st))
    assert "race" not in decoded and "re" not in decoded and decoded["date"] == "2026-01-02"
    created = msgspec.msgpack.decode(p.encode(p.Created(race="R", game="g", max_players=2,
                                                        time_limit_s=None)))  # fmt: skip
    assert "time_limit_s" in created and created["time_limit_s"] is None


def test_seats_tied_within_one_millisecond_are_listed_in_the_order_they_finished():
    """Both finish at 5000 ms, so they tie on all three (one rank); b finished 300 µs
    before a, so b is listed first although a holds the earlier seat."""
    race = RaceMachine(RaceRecord("ABCDEF", "quatorze", 5, "a", 8, 0, starts_at_ms=1000,
                       seats=[p.Seat(x, x.upper()) for x in "ab"]), RaceRules())  # fmt: skip
    games = [
        record("a", 10, 30, 5000, finished_at_us=5_000_900),
        record("b", 10, 30, 5000, finished_at_us=5_000_600),
    ]
    standings = race.result(games).standings
    assert [(s.rank, s.player) for s in standings] == [(1, "b"), (1, "a")]


@pytest.mark.parametrize("length", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_binary_frame_header_is_the_one_websockets_writes(length):
    # The server frames its sends itself (server/edge/connection.py); websockets' own
    # serializer is the reference for every length encoding (7-bit, 16-bit, 64-bit).
    payload = bytes(range(256)) * (length // 256) + bytes(length % 256)
    expected = Frame(Opcode.BINARY, payload).serialize(mask=False)
    assert binary_frame_header(length) + payload == expected


async def test_game_turns_go_in_order_and_skip_cancelled_waiters():
    cache = LiveGames(stores=None, size=10)
    assert cache.claim("g") is None  # free: ours at once
    second, third = cache.claim("g"), cache.claim("g")
    assert second is not None and third is not None
    cache.release("g")
    assert second.done() and not third.done()  # handed to the next in line only
    cache.release("g")
    assert third.done()
    cache.release("g")
    assert cache.claim("g") is None  # nobody left: the game is free again
    # A waiter cancelled while it waits never gets the turn: the game is not left stuck.
    waiting = asyncio.create_task(cache.wait_turn("g", cache.claim("g")))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    cache.release("g")
    assert cache.claim("g") is None
    cache.release("g")


@pytest.mark.parametrize("game", sorted(engine.GAMES))
@pytest.mark.parametrize("resign_at", [None, 5])
def test_a_write_stores_every_field_that_the_move_changed(game, resign_at):
    """The move path writes only `written_fields()`; every stored field that differs after
    a move or resignation must be among them, with its new value."""
    rec = GameRecord(gid=race_gid("ABCDEF", "ann"), kind=GameKind.RACE, game=game, seed=11,
                     player="ann", name="Ann", race="ABCDEF", started_at_ms=1000)  # fmt: skip
    live = LiveGame.replay(rec, [])
    rnd = random.Random(3)
    now_us = 2_000_000
    for n in range(400):
        now_us += 1000
        before = live.record.to_redis()
        if n == resign_at:
            applied = decide_resign(live, now_us)
        else:
            move = choose_move(live.game.view(), "easy", rnd)
            if move is None:
                break
            applied = decide_move(live, n, move, now_us)
            assert isinstance(applied, Applied), applied
        live = applied.after
        decision = live.record
        after, written = decision.to_redis(), decision.written_fields()
        changed = {k: v for k, v in after.items() if before[k] != v}
        assert changed.items() <= written.items(), (n, changed, written)
        if decision.finished:
            break
    assert live.record.finished or live.record.moves >= 1


async def test_a_remembered_lobby_is_a_guess_only_while_it_cannot_have_expired(redis_url):
    """Races' last lobby: the race as this process wrote it, once, and never after its lobby
    could have expired (a new race may then have the same code at the same version)."""
    cfg = dataclasses.replace(Config(), lobby_ttl_s=60)
    app = App(cfg, redis_url)
    races = app.races
    seats = [p.Seat(player="ann", name="Ann")]
    race = RaceRecord(code="ABCDEF", game="quatorze", seed=5, host="ann", max_players=4,
                      time_limit_s=0, created_ms=0, seats=seats)  # fmt: skip
    races._remember_lobby(race)
    assert races._last_lobby("ABCDEF") is race
    assert races._last_lobby("ABCDEF") is None  # forgotten once asked for
    races._remember_lobby(race)
    races.clock = Clock(offset_s=59)
    assert races._last_lobby("ABCDEF") is race
    races.clock = Clock()
    races._remember_lobby(race)
    races.clock = Clock(offset_s=61)
    assert races._last_lobby("ABCDEF") is None
    await app.stores.redis.aclose()
