"""The leaderboard and stats stores on a real Redis: packing, ranks, windows, streaks."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from server.daily.seeds import daily_seed, parse_date, utc_date
from server.store.boards import (
    LeaderboardStore,
    Result,
    pack_all_time,
    pack_day,
)
from server.store.keys import Keys
from server.store.stats_repo import StatsRepo

GAME = "doublets"
DAY = "2026-03-14"


@pytest.fixture
async def redis(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    client = aioredis.from_url(redis_url)
    yield client
    await client.aclose()


@pytest.fixture
def keys(redis_namespace: str) -> Keys:
    return Keys(redis_namespace)


def res(
    player: str, score: int, time_ms: int, moves: int, won: bool = False, resigned: bool = False
) -> Result:
    return Result(player, f"name-{player}", score, moves, time_ms, won, resigned=resigned)


def test_daily_seed_is_hmac_of_date_and_game_in_range() -> None:
    import hashlib
    import hmac

    digest = hmac.new(b"k", b"2026-03-14:doublets", hashlib.sha256).digest()
    expected = int.from_bytes(digest[:8], "big") % (2**31 - 1) + 1
    assert daily_seed(b"k", dt.date(2026, 3, 14), "doublets") == expected
    assert daily_seed(b"k", "2026-03-14", "doublets") == expected
    seeds = {daily_seed(b"k", dt.date(2026, 1, 1) + dt.timedelta(d), g)
             for d in range(200) for g in ("doublets", "quatorze")}  # fmt: skip
    assert len(seeds) == 400
    assert all(1 <= s <= 2**31 - 1 for s in seeds)
    assert daily_seed(b"other", DAY, GAME) != daily_seed(b"k", DAY, GAME)


def test_utc_date_and_parse_date() -> None:
    midnight = dt.datetime(2026, 3, 15, tzinfo=dt.UTC).timestamp()
    assert utc_date(midnight - 0.001) == dt.date(2026, 3, 14)
    assert utc_date(midnight) == dt.date(2026, 3, 15)
    assert parse_date("2026-03-14") == dt.date(2026, 3, 14)
    for bad in ("20260314", "2026-02-30", "2026-3-14", " 2026-03-14", 20260314, None, "all"):
        assert parse_date(bad) is None


def test_packing_orders_score_then_time_then_moves_below_2_pow_53() -> None:
    assert pack_day(52, True, 10_000, 100) < pack_day(51, False, 1, 1)  # higher score first
    assert pack_day(10, False, 86_400_000, 500) < pack_day(10, True, 1, 1)  # then not resigned
    assert pack_day(10, True, 999, 500) < pack_day(10, True, 1000, 1)  # then lower time
    assert pack_day(10, False, 1000, 99) < pack_day(10, False, 1000, 100)  # then fewer moves
    assert pack_day(0, True, 2**40, 2**20) == 2**53 - 1  # worst, clipped, still exact
    assert pack_day(63, False, 0, 0) == 0
    assert pack_all_time(3, 0) < pack_all_time(2, 10**6)
    assert pack_all_time(3, 101) < pack_all_time(3, 100)
    assert pack_all_time(0, 0) == 2**53 - 1


async def test_ties_share_a_rank_and_list_in_finishing_order(
    redis: aioredis.Redis, keys: Keys
) -> None:
    store = LeaderboardStore(redis, keys)
    # Finishing order: d, b, c, a. a is best; b and c tie exactly; d is last.
    for r in (res("d", 5, 900, 9), res("b", 10, 500, 40), res("c", 10, 500, 40),
              res("a", 12, 800, 50)):  # fmt: skip
        assert await store.record_day(GAME, DAY, r) > 0
    board = await store.board(GAME, DAY, limit=10)
    assert [(e.rank, e.player) for e in board.entries] == [(1, "a"), (2, "b"), (2, "c"), (4, "d")]
    assert board.total == 4
    # The tie lists in finishing order even when the later finisher's id sorts first.
    await store.record_day(GAME, "2026-03-15", res("zz", 1, 1, 1))
    await store.record_day(GAME, "2026-03-15", res("aa", 1, 1, 1))
    b2 = await store.board(GAME, "2026-03-15", asker="aa")
    assert [(e.rank, e.player) for e in b2.entries] == [(1, "zz"), (1, "aa")]
    assert b2.me is not None and b2.me.rank == 1 and b2.me.player == "aa"


async def test_at_equal_score_a_resigned_attempt_ranks_after_one_played_out(
    redis: aioredis.Redis, keys: Keys
) -> None:
    store = LeaderboardStore(redis, keys)
    await store.record_day(GAME, DAY, res("quitter", 8, 1_000, 0, resigned=True))
    await store.record_day(GAME, DAY, res("stayer", 8, 600_000, 80))
    await store.record_day(GAME, DAY, res("better", 9, 900_000, 90, resigned=True))
    board = await store.board(GAME, DAY, asker="quitter")
    got = [(e.rank, e.player, e.resigned) for e in board.entries]
    assert got == [(1, "better", True), (2, "stayer", False), (3, "quitter", True)]
    assert board.me is not None and board.me.rank == 3


async def test_a_second_result_for_the_same_day_changes_nothing(
    redis: aioredis.Redis, keys: Keys
) -> None:
    store = LeaderboardStore(redis, keys)
    assert await store.record_day(GAME, DAY, res("p", 3, 100, 10)) == 1
    assert await store.record_day(GAME, DAY, res("p", 50, 1, 1)) == 0
    board = await store.board(GAME, DAY, asker="p")
    assert board.total == 1 and board.me is not None and board.me.score == 3


async def test_ranks_and_around_me_agree_with_a_brute_force_ranking(
    redis: aioredis.Redis, keys: Keys
) -> None:
    store = LeaderboardStore(redis, keys)
    rng = random.Random(7)
    # Few distinct values, so that ties are everywhere.
    results = [res(f"p{i}", rng.randint(0, 4), rng.choice([1000, 2000]), rng.randint(1, 3))
               for i in range(3000)]  # fmt: skip
    await store.record_day_many(GAME, DAY, results)

    def key(r: Result) -> tuple[int, int, int]:
        return (-r.score, r.time_ms, r.moves)

    order = sorted(range(len(results)), key=lambda i: (*key(results[i]), i))

    expected_rank = {r.player: 1 + sum(key(o) < key(r) for o in results) for r in results}
    expected_order = [results[i].player for i in order]

    top = await store.board(GAME, DAY, limit=100)
    assert top.total == 3000
    assert [e.player for e in top.entries] == expected_order[:100]
    assert all(e.rank == expected_rank[e.player] for e in top.entries)

    for player in ("p0", "p1234", expected_order[-1], expected_order[1500], expected_order[1]):
        b = await store.board(GAME, DAY, limit=11, asker=player, around_me=True)
        pos = expected_order.index(player)
        start = min(max(0, pos - 5), 3000 - 11)
        assert [e.player for e in b.entries] == expected_order[start : start + 11]
        assert [e.rank for e in b.entries] == [expected_rank[e.player] for e in b.entries]
        assert b.me is not None and b.me.rank == expected_rank[player]
        assert b.me.player == player and b.me.name == f"name-{player}"


async def test_asker_without_entry_gets_no_me_and_the_top(
    redis: aioredis.Redis, keys: Keys
) -> None:
    store = LeaderboardStore(redis, keys)
    await store.record_day(GAME, DAY, res("a", 1, 1, 1))
    b = await store.board(GAME, DAY, asker="nobody", around_me=True)
    assert b.me is None and [e.player for e in b.entries] == ["a"]
    empty = await store.board(GAME, "2001-01-01", asker="a")
    assert empty.total == 0 and empty.entries == [] and empty.me is None


async def test_streaks_and_all_time_board(redis: aioredis.Redis, keys: Keys) -> None:
    stats = StatsRepo(redis, keys)
    store = LeaderboardStore(redis, keys)
    d0 = dt.date(2026, 3, 1)

    def day(n: int) -> dt.date:
        return d0 + dt.timedelta(days=n)

    # alice: days 0,1,2 won, 3 lost, 5 won (gap on 4). Day 1 arrives late (after day 2).
    for n, won, score in ((0, True, 48), (2, True, 48), (1, True, 48), (3, False, 20),
                          (5, True, 48)):  # fmt: skip
        assert await stats.record(GAME, day(n), Result("alice", "Alice", score, 90, 60_000, won))
    assert not await stats.record(GAME, day(5), Result("alice", "Alice", 48, 90, 1, True))
    # bob: days 0..5 played every day, won twice.
    for n in range(6):
        won = n in (2, 5)
        await stats.record(GAME, day(n), Result("bob", "Bob", 48 if won else 30, 80, 50_000, won))

    name, per_game = await stats.player_stats(("doublets", "quatorze"), "alice", day(5))
    a = per_game["doublets"]
    assert name == "Alice"
    assert (a.played, a.won, a.total_score) == (5, 4, 48 * 4 + 20)
    assert (a.streak, a.best_streak) == (1, 4)  # days 0-3 played in a row, then 5
    assert (a.win_streak, a.best_win_streak) == (1, 3)  # days 0-2 won
    assert a.last_played == day(5).isoformat()
    assert per_game["quatorze"].played == 0
    # Streaks stay alive through the next day, then read 0.
    _, later = await stats.player_stats(("doublets",), "alice", day(6))
    assert later["doublets"].streak == 1
    _, gone = await stats.player_stats(("doublets",), "alice", day(7))
    assert gone["doublets"].streak == 0 and gone["doublets"].best_streak == 4

    _, b = await stats.player_stats(("doublets",), "bob", day(5))
    assert (b["doublets"].streak, b["doublets"].best_streak) == (6, 6)
    assert (b["doublets"].win_streak, b["doublets"].best_win_streak) == (1, 1)

    # carol ties bob exactly on days won and total score, after him.
    await stats.record(GAME, day(0), Result("carol", "Carol", 48, 1, 1, True))
    await stats.record(GAME, day(1), Result("carol", "Carol", 48 * 2 + 30 * 4 - 48, 1, 1, True))
    board = await store.board(GAME, "all", limit=10, asker="carol")
    rows = [(e.rank, e.player, e.days_won, e.score) for e in board.entries]
    assert rows == [(1, "alice", 4, 212), (2, "bob", 2, 216), (2, "carol", 2, 216)]
    assert board.me is not None and board.me.rank == 2 and board.me.best_streak == 2
    assert board.entries[0].won and board.entries[0].played == 5
