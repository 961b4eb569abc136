"""A rated race's close, on the race machine alone, against openskill called here directly
for the ranking written out by hand: resignations and time-outs count as the rank they got,
a seat that left (timed out without a move) ranks last, ties share a rank; the changes are
checked at the versions read (a new rating must not exist yet); an unrated race carries
no rating. The displayed integer is 1500 + 60 (mu - 25), as the README states."""

from __future__ import annotations

import pytest
from openskill.models import PlackettLuce

import protocol as p
from server.domain.changes import MUST_NOT_EXIST
from server.domain.kinds import GameKind
from server.domain.outcome import RESIGNED, WON
from server.domain.ratings import PlayerRating
from server.domain.records import GameRecord, RaceRecord, RaceStatus
from server.play.race_machine import RaceMachine, RaceRules

START = 1_000_000


def race(players: list[str], rated: bool = True) -> RaceRecord:
    return RaceRecord(
        code="ABCDEFGHJKLM", game="quatorze", seed=7, host=players[0], max_players=4,
        time_limit_s=60, status=RaceStatus.RUNNING, starts_at_ms=START,
        ends_at_ms=START + 60_000, ver=3, seats=[p.Seat(player=pl, name=pl) for pl in players],
        rated=rated,
    )  # fmt: skip


def game(player: str, score: int, moves: int, done_ms: int | None, outcome=None) -> GameRecord:
    return GameRecord(
        gid=f"r.ABCDEFGHJKLM.{player}", kind=GameKind.RACE, game="quatorze", seed=7,
        player=player, name=player, race="ABCDEFGHJKLM", started_at_ms=START,
        ends_at_ms=START + 60_000, outcome=outcome,
        finished_at_ms=done_ms or 0, score=score, moves=moves, ver=5,
    )  # fmt: skip


def shown(mu: float) -> int:
    return round(1500 + 60 * (mu - 25))


def test_ranks_with_a_resignation_a_time_out_and_a_seat_that_left() -> None:
    players = ["ann", "bob", "cat", "dan"]
    games = [
        game("ann", 20, 30, START + 20_000, WON),  # first
        game("bob", 10, 12, START + 30_000, RESIGNED),  # resigned: counts as second
        game("cat", 4, 9, None),  # timed out with moves: third
        game("dan", 0, 0, None),  # timed out without a move: left, last
    ]
    model = PlackettLuce()
    settled = model.rating(mu=30.0, sigma=3.0)
    ratings = [
        PlayerRating("ann", "quatorze", "ann", 30.0, 3.0, games=40, ver=40, stored=True),
        PlayerRating("bob", "quatorze", "bob", 25.0, 25 / 3),
        PlayerRating("cat", "quatorze", "cat", 25.0, 25 / 3),
        PlayerRating("dan", "quatorze", "dan", 25.0, 25 / 3),
    ]
    step = RaceMachine(race(players), RaceRules()).close(games, START + 61_000, ratings)
    assert step is not None and step.change is not None
    result = step.replies[0]
    assert isinstance(result, p.Result)
    # By score first: the result's ranks are the ratings' here.
    assert [(s.player, s.rank) for s in result.standings] == [
        ("ann", 1), ("bob", 2), ("cat", 3), ("dan", 4),
    ]  # fmt: skip
    expected = model.rate(
        [[settled], [model.rating()], [model.rating()], [model.rating()]], ranks=[1, 2, 3, 4]
    )
    want = {pl: shown(team[0].mu) for pl, team in zip(players, expected, strict=True)}
    assert result.rating == {
        "ann": p.RatingChange(before=shown(30.0), after=want["ann"]),
        "bob": p.RatingChange(before=1500, after=want["bob"]),
        "cat": p.RatingChange(before=1500, after=want["cat"]),
        "dan": p.RatingChange(before=1500, after=want["dan"]),
    }
    changes = {c.rating.player: c for c in step.change.ratings}
    assert changes["ann"].expect_ver == 40 and changes["ann"].rating.ver == 41
    assert changes["ann"].rating.games == 41
    assert changes["bob"].expect_ver == MUST_NOT_EXIST and changes["bob"].rating.games == 1
    assert changes["dan"].point.rank == 4 and changes["dan"].point.seats == 4
    assert changes["ann"].rating.mu == pytest.approx(expected[0][0].mu)
    assert changes["ann"].rating.sigma == pytest.approx(expected[0][0].sigma)


def test_a_seat_that_left_ranks_below_one_that_played_for_nothing() -> None:
    # bob played 3 moves for 0 points and ran out of time; cat never moved. By the result
    # cat ranks above bob (fewer moves), but a seat that left ranks last for the ratings.
    players = ["ann", "bob", "cat"]
    games = [
        game("ann", 6, 8, START + 10_000, RESIGNED),
        game("bob", 0, 3, None),
        game("cat", 0, 0, None),
    ]
    ratings = [PlayerRating(pl, "quatorze", pl, 25.0, 25 / 3) for pl in players]
    step = RaceMachine(race(players), RaceRules()).close(games, START + 61_000, ratings)
    assert step is not None and step.change is not None
    result = step.replies[0]
    assert isinstance(result, p.Result)
    assert [(s.player, s.rank) for s in result.standings] == [("ann", 1), ("cat", 2), ("bob", 3)]
    ranks = {c.rating.player: c.point.rank for c in step.change.ratings}
    assert ranks == {"ann": 1, "bob": 2, "cat": 3}
    model = PlackettLuce()
    expected = model.rate([[model.rating()] for _ in range(3)], ranks=[1, 2, 3])
    assert result.rating is not None
    assert result.rating["cat"].after == shown(expected[2][0].mu)
    assert result.rating["bob"].after == shown(expected[1][0].mu)


def test_ties_share_a_rank_and_an_unrated_race_has_no_rating() -> None:
    players = ["ann", "bob"]
    games = [game("ann", 0, 0, START + 5_000, RESIGNED), game("bob", 0, 0, START + 5_000, RESIGNED)]
    ratings = [PlayerRating(pl, "quatorze", pl, 25.0, 25 / 3) for pl in players]
    step = RaceMachine(race(players), RaceRules()).close(games, START + 6_000, ratings)
    assert step is not None and step.change is not None
    assert {c.point.rank for c in step.change.ratings} == {1}
    result = step.replies[0]
    assert isinstance(result, p.Result) and result.rating is not None
    # A tie of equals moves neither mean (openskill: only their sigmas shrink).
    model = PlackettLuce()
    [[a], [b]] = model.rate([[model.rating()], [model.rating()]], ranks=[1, 1])
    assert shown(a.mu) == shown(b.mu) == 1500
    assert result.rating["ann"] == result.rating["bob"] == p.RatingChange(before=1500, after=1500)
    unrated = RaceMachine(race(players, rated=False), RaceRules()).close(games, START + 6_000)
    assert unrated is not None and unrated.change is not None
    assert unrated.change.ratings == []
    assert isinstance(unrated.replies[0], p.Result) and unrated.replies[0].rating is None
