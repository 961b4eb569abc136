"""The move that ends a race seat's game learns from the store whether it ended the race's
last game (Written.APPLIED_LAST), checked in the write's own atomic step on the real store:
so that only that seat's instance reads and closes the race, and of seats ending together,
in one batch of the group commit or on two instances, exactly one is told it was last.
The race-level consequences (the result once every seat has ended, on one server or two)
are in test_race.py and test_resilience.py."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from server.domain.changes import MUST_NOT_EXIST, GameChange, Written
from server.domain.ids import race_gid
from server.domain.kinds import GameKind
from server.domain.outcome import RESIGNED, STUCK
from server.domain.records import GameRecord
from server.store.stores import Stores

CODE = "LASTSE"


async def seat_games(store: Stores, code: str, players: list[str]) -> list[GameRecord]:
    """Each seat's game of race `code`, stored as a running race's (version 1, no moves)."""
    records = []
    for player in players:
        record = GameRecord(
            gid=race_gid(code, player), kind=GameKind.RACE, game="quatorze", seed=7,
            player=player, name=player.upper(), race=code, started_at_ms=1000, ver=1,
        )  # fmt: skip
        change = GameChange(record, MUST_NOT_EXIST, all_fields=True)
        assert await store.games.write_game(change) is Written.APPLIED
        records.append(record)
    return records


def moved(record: GameRecord, *, ends: bool = False) -> GameRecord:
    """The record after one more move (its game ended by it, with `ends`)."""
    return replace(
        record,
        moves=record.moves + 1,
        score=record.score + 2,
        ver=record.ver + 1,
        n=record.n + 1,
        outcome=STUCK if ends else None,
        finished_at_ms=5000 if ends else 0,
    )


def others(records: list[GameRecord], record: GameRecord) -> list[str]:
    return [r.gid for r in records if r.gid != record.gid]


async def test_only_the_write_that_ends_the_last_game_hears_it_was_last(
    stores: list[Stores],
) -> None:
    store = stores[0]
    games = store.games
    ann, bob, cat, dan = await seat_games(store, CODE, ["ann", "bob", "cat", "dan"])
    seats = [ann, bob, cat, dan]

    # A move that does not end its game checks nothing.
    ann1 = moved(ann)
    assert await games.write_move(ann1, "m1", ann.ver, b"", at_ms=2000) is Written.APPLIED
    # Ending while others play: applied, not last.
    ann2 = moved(ann1, ends=True)
    written = await games.write_move(ann2, "m2", ann1.ver, b"", at_ms=3000,
                                     peers=others(seats, ann))  # fmt: skip
    assert written is Written.APPLIED

    # Bob and cat end in the same batch of the group commit (both submitted before either is
    # awaited), bob's with a snapshot (five keys of its own before its peers'), and after
    # them a move of a game of another race with no peers, in the same script call: every
    # write lands on its own keys.
    (other,) = await seat_games(store, "OTHERR", ["eve"])
    bob1, cat1, other1 = moved(bob, ends=True), moved(cat, ends=True), moved(other)
    futures = [
        games.write_move(bob1, "b1", bob.ver, b"", "SNAP-B", 4000, others(seats, bob)),
        games.write_move(cat1, "c1", cat.ver, b"", "", 4001, others(seats, cat)),
        games.write_move(other1, "e1", other.ver, b"", "SNAP-E", 4002),
    ]
    assert await asyncio.gather(*futures) == [Written.APPLIED, Written.APPLIED, Written.APPLIED]
    # Dan's resignation ends the last game: told so.
    dan1 = replace(dan, ver=dan.ver + 1, outcome=RESIGNED, finished_at_ms=6000)
    written = await games.write_move(dan1, "", dan.ver, b"", at_ms=6000, peers=others(seats, dan))
    assert written is Written.APPLIED_LAST

    # A write whose version check fails is not applied, whatever its peers: not "last".
    stale = moved(ann2, ends=True)
    assert await games.write_move(stale, "x", ann1.ver, b"", peers=others(seats, ann)) == 0
    # A race of one seat: its end is its race's last.
    (solo,) = await seat_games(store, "SOLOOO", ["sol"])
    solo1 = moved(solo, ends=True)
    assert await games.write_move(solo1, "s1", solo.ver, b"", peers=[]) is Written.APPLIED_LAST

    # Every write is stored where it belongs.
    for record, moves in (
        (ann2, ["m1", "m2"]), (bob1, ["b1"]), (cat1, ["c1"]), (dan1, []), (other1, ["e1"]),
    ):  # fmt: skip
        loaded = await games.load_game(record.gid)
        assert loaded is not None
        stored, stored_moves = loaded
        assert stored_moves == moves, record.gid
        assert (stored.ver, stored.score, stored.finished) == (
            record.ver, record.score, record.finished,
        ), record.gid  # fmt: skip
    assert await games.move_times([bob1.gid, cat1.gid, other1.gid]) == [[4000], [4001], [4002]]


async def test_seats_ending_together_on_two_instances_elect_exactly_one_last(
    stores: list[Stores],
) -> None:
    """Two instances' group commits each carry one of a race's two last seats' ends, sent
    together, many times over: each time exactly one of them hears it was last."""
    for round_ in range(40):
        code = f"TWO{round_:03d}"
        a, b = await seat_games(stores[0], code, ["ann", "bob"])
        seats = [a, b]
        got = await asyncio.gather(
            *(
                store.games.write_move(moved(r, ends=True), "m", r.ver, b"", peers=others(seats, r))
                for store, r in zip(stores, seats, strict=True)
            )
        )
        assert sorted(got) == [Written.APPLIED, Written.APPLIED_LAST], (round_, got)
