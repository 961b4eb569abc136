"""The race machine's asynchronous races on their own (no store, no sockets): seats dealt
as they join, on their own clocks; when the race closes and how; what a seat is told."""

from __future__ import annotations

import hypothesis.strategies as st
import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

import engine
import protocol as p
from server.domain.changes import MUST_NOT_EXIST
from server.domain.records import RaceStatus
from server.play.game_machine import Applied, LiveGame, decide_move, decide_resign
from server.play.race_machine import RaceMachine, RaceRules

RULES = RaceRules()
T0 = 1_000_000_000
HOUR = 3_600_000


def seat(name: str) -> p.Seat:
    return p.Seat(player=name, name=name.title())


def challenge(max_players: int = 2, window_s: int = 3600, limit: int | None = None):
    machine, step = RaceMachine.create(
        RULES, code="ASYNCRACE234", game="quatorze", seed=7, host=seat("ann"),
        max_players=max_players, time_limit_s=limit, now_ms=T0, window_s=window_s,
    )  # fmt: skip
    return machine, step


def join(machine: RaceMachine, name: str, now: int, own: LiveGame | None = None) -> LiveGame:
    step = machine.join_async(seat(name), own, now)
    assert step.change is not None and len(step.dealt) == 1
    lobby, start, state = step.replies
    assert isinstance(lobby, p.Lobby) and isinstance(start, p.Start)
    assert isinstance(state, p.State) and state.seed is None
    assert start.async_ and start.starts_at_ms == now
    return step.dealt[0]


def play(live: LiveGame, count: int, now: int) -> LiveGame:
    for i in range(count):
        move = sorted(live.game.legal_moves())[0]
        decision = decide_move(live, live.n, move, (now + i) * 1000)
        assert isinstance(decision, Applied)
        live = decision.after
    return live


def resign(live: LiveGame, now: int) -> LiveGame:
    return decide_resign(live, now * 1000).after


def test_a_challenge_runs_from_its_creation_with_its_host_seated_but_not_dealt() -> None:
    machine, step = challenge(window_s=600)
    race = machine.race
    assert race.async_race and race.status is RaceStatus.RUNNING
    assert machine.deadline_ms() == T0 + 600_000
    assert step.change is not None and step.change.ttl_s == 0  # kept until it closes
    [host] = step.change.games
    assert host.expect_ver == MUST_NOT_EXIST and host.record.started_at_ms == 0
    with pytest.raises(p.Refused) as refused:
        machine.start("ann", T0)
    assert refused.value.code == p.RACE_STARTED
    with pytest.raises(p.Refused) as refused:
        machine.may_watch("sam")
    assert refused.value.code == p.NO_SPECTATORS


def test_join_deals_each_seat_on_its_own_clock_and_a_full_race_refuses() -> None:
    machine, _ = challenge()
    host_record = machine.seat_record(seat("ann"))
    ann = join(machine, "ann", T0 + 10, LiveGame(host_record, engine.new_game("quatorze", 7)))
    assert ann.record.started_at_ms == T0 + 10
    bob = join(machine, "bob", T0 + HOUR // 2)
    assert bob.record.started_at_ms == T0 + HOUR // 2
    assert bob.game.view() == ann.game.view()  # the same deal
    with pytest.raises(p.Refused) as refused:
        machine.join_async(seat("cy"), None, T0 + HOUR // 2)
    assert refused.value.code == p.RACE_FULL
    # Joining again: the same seat, as it stands, nothing written.
    again = machine.join_async(seat("bob"), bob, T0 + HOUR // 2 + 5)
    assert again.change is None and again.dealt == [bob]


def test_it_closes_once_every_seat_is_taken_and_finished_each_timed_on_its_own_clock() -> None:
    machine, _ = challenge()
    ann = join(machine, "ann", T0)
    ann = resign(play(ann, 3, T0 + 1000), T0 + 5000)
    # One seat free: open, though every seated player has finished.
    assert machine.close([ann.record], T0 + 6000) is None
    bob = join(machine, "bob", T0 + HOUR // 2)
    assert machine.close([ann.record, bob.record], T0 + HOUR // 2 + 1) is None
    bob = resign(play(bob, 1, T0 + HOUR // 2 + 1000), T0 + HOUR // 2 + 2000)
    step = machine.close([ann.record, bob.record], T0 + HOUR // 2 + 2001)
    assert step is not None and machine.race.status is RaceStatus.DONE
    [result] = step.replies
    assert isinstance(result, p.Result) and result.seed == 7
    times = {s.player: s.time_ms for s in result.standings}
    assert times == {"ann": 5000, "bob": 2000}


def test_the_window_end_closes_unfinished_games_as_they_stand() -> None:
    machine, _ = challenge(max_players=3, window_s=600)
    ann = play(join(machine, "ann", T0), 2, T0 + 100)
    bob = join(machine, "bob", T0 + 500_000)
    assert machine.close([ann.record, bob.record], T0 + 599_999) is None
    step = machine.close([ann.record, bob.record], T0 + 700_000)
    assert step is not None
    rows = {s.player: s for s in step.replies[0].standings}  # type: ignore[attr-defined]
    # Closed at the window's end, not when the close happened to run.
    assert rows["ann"].time_ms == 600_000 and rows["bob"].time_ms == 100_000
    assert rows["ann"].moves == ann.record.moves
    with pytest.raises(p.Refused):
        challenge(window_s=600)[0].join_async(seat("cy"), None, T0 + 600_000)


def test_a_seat_sees_the_standings_so_far_only_once_it_has_played() -> None:
    machine, _ = challenge(max_players=3)
    ann = resign(play(join(machine, "ann", T0), 3, T0 + 10), T0 + 900)
    bob = play(join(machine, "bob", T0 + 1000), 1, T0 + 1100)
    records = [ann.record, bob.record]
    playing = machine.challenge("bob", records, T0 + 2000)
    assert playing.open and not playing.played and playing.standings == []
    done = machine.challenge("ann", records, T0 + 2000)
    assert done.played and [s.player for s in done.standings] == ["ann"]
    assert done.closes_at_ms == T0 + 3600_000 and done.seats == 2


# ---------------------------------------------------------------- random lives

PLAYERS = ["ann", "bob", "cy", "dee"]


class ChallengeLife(RuleBasedStateMachine):
    """Random joins, moves, resignations and clock jumps on one asynchronous race, its
    writes applied to in-memory copies as the store would; checked after every step: a
    seat is dealt once, on its own clock; nothing names the seed before the result; the
    race closes exactly when every seat is taken and finished or its window is over, with
    one standing per seat, each timed on its own clock and never past the window."""

    def __init__(self) -> None:
        super().__init__()
        self.now = T0
        self.machine: RaceMachine | None = None
        self.games: dict[str, LiveGame] = {}
        self.result: p.Result | None = None

    @initialize(
        max_players=st.integers(2, 4),
        window_s=st.sampled_from([600, 3600]),
        limit=st.sampled_from([0, 30, 300]),
    )
    def create(self, max_players: int, window_s: int, limit: int) -> None:
        self.machine, _ = challenge(max_players, window_s, limit or None)
        self.games = {}

    @rule(who=st.sampled_from(PLAYERS))
    def join(self, who: str) -> None:
        m = self.machine
        assert m is not None
        own = self.games.get(who)
        if own is None and m.seated(who):
            own = LiveGame(m.seat_record(seat(who)), engine.new_game("quatorze", 7))
        before = list(m.players())
        try:
            step = m.join_async(seat(who), own, self.now)
        except p.Refused as refused:
            assert self.result is None
            assert refused.code in (p.RACE_FULL, p.RACE_STARTED)
            if refused.code == p.RACE_FULL:
                assert who not in before and len(before) == m.race.max_players
            else:
                assert self.now >= m.deadline_ms()
            return
        if self.result is not None:
            assert step.change is None and step.replies[1:] == [self.result]
            return
        lobby, start, state = step.replies
        assert isinstance(lobby, p.Lobby) and lobby.race == m.code
        assert isinstance(start, p.Start) and start.async_ and isinstance(state, p.State)
        assert state.seed is None
        [dealt] = step.dealt
        if who in self.games:  # joined again: the same game, nothing written
            assert step.change is None and dealt is self.games[who]
        else:
            assert step.change is not None and start.starts_at_ms == self.now
            self.games[who] = dealt
        assert m.seated(who) and len(m.players()) <= m.race.max_players

    @rule(who=st.sampled_from(PLAYERS), resign=st.booleans())
    def act(self, who: str, resign: bool) -> None:
        live = self.games.get(who)
        if live is None or live.record.finished or self.result is not None:
            return
        try:
            if resign or not live.game.legal_moves():
                decision = decide_resign(live, self.now * 1000)
            else:
                move = sorted(live.game.legal_moves())[0]
                decision = decide_move(live, live.n, move, self.now * 1000)
        except p.Refused:  # its own time is up
            assert live.record.ends_at_ms and self.now >= live.record.ends_at_ms
            return
        assert isinstance(decision, Applied)
        self.games[who] = decision.after

    @rule(ms=st.sampled_from([10, 1_000, 40_000, 400_000, 2_000_000]))
    def tick(self, ms: int) -> None:
        self.now += ms

    @rule()
    def close(self) -> None:
        m = self.machine
        assert m is not None
        was_done = self.result is not None
        seated = [p_ for p_ in m.players()]
        records = [
            self.games[pl].record if pl in self.games else m.seat_record(seat(pl)) for pl in seated
        ]
        step = m.close(records, self.now)
        full = len(seated) == m.race.max_players
        done = all(r.finished or (r.ends_at_ms and self.now >= r.ends_at_ms) for r in records)
        due = (full and done) or self.now >= m.deadline_ms()
        if was_done:
            assert step is None
            return
        assert (step is not None) == due
        if step is None:
            return
        [result] = step.replies
        assert isinstance(result, p.Result) and result.seed == 7
        assert sorted(s.player for s in result.standings) == sorted(seated)
        window = m.race.window_s * 1000
        for s in result.standings:
            assert 0 <= s.time_ms <= window
            rec = self.games.get(s.player)
            if rec is None:
                assert s.time_ms == 0 and s.moves == 0
            elif rec.record.ends_at_ms:
                assert s.time_ms <= rec.record.ends_at_ms - rec.record.started_at_ms
        self.result = result

    @invariant()
    def seats_fit(self) -> None:
        m = self.machine
        if m is not None:
            assert len(m.players()) <= m.race.max_players
            assert (m.race.status is RaceStatus.DONE) == (self.result is not None)


ChallengeLife.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
test_challenge_life = ChallengeLife.TestCase
