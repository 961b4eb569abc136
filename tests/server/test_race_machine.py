"""The race machine on its own: random joins, leaves, starts, moves, resignations and clock
jumps.

A hypothesis state machine plays several players against server/play/race_machine.py and
server/play/game_machine.py, applying each transition's writes to an in-memory copy of the
race (as the store would) and checking after every step: seats and statuses change only as
the lifecycle allows, the host is always a seated person, no move is taken after a game's
end or past the time limit, a closed race has exactly one result with one standing per
seat, ranked by score, time and moves; a seat that joins again gets what a seat that never
left has (the start and every seat's progress), and anyone joining a finished race its
result; a spectator may watch only a race that takes spectators and is not one of its seats
(until it is done), and gets each seat's board as that seat's own public view, never a
face-down card nor, before the result, the seed.
"""

from __future__ import annotations

import random

import hypothesis.strategies as st
import msgspec
from hypothesis import event, settings
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule
from support.fairness import fair_view, shown

import protocol as p
from engine.cards import NAMES
from engine.solve.bot import choose_move
from server.domain.changes import MUST_NOT_EXIST
from server.domain.records import RaceStatus
from server.play.game_machine import (
    Applied,
    LiveGame,
    Retransmission,
    TimeUp,
    decide_move,
    decide_resign,
)
from server.play.race_machine import RaceMachine, RaceRules

PLAYERS = ["ann", "bob", "cy", "dee", "eve", "bot-1"]  # bot-1: a bot seat (never leaves)
WATCHERS = [*PLAYERS, "sam", None]  # sam never joins; None: a visitor of the race's page
RULES = RaceRules(untimed_race_max_s=3600)


class RaceLife(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = 1_000_000
        self.machine: RaceMachine | None = None
        self.games: dict[str, LiveGame] = {}
        self.results: list[p.Result] = []
        self.rng = random.Random(0)
        self.rematch_code: str | None = None  # the rematch decided for the race, if any
        self.codes = 0  # fresh codes handed to rematch asks
        self.races = 1  # the races lived: the first, then its rematches

    # ------------------------------------------------------------ inputs

    @precondition(lambda self: self.machine is None)
    @rule(
        game=st.sampled_from(["doublets", "quatorze", "bakers_game", "hopscotch"]),
        seed=st.integers(1, 10_000),
        max_players=st.integers(2, 5),
        limit=st.sampled_from([0, 30, 120]),
        spectators=st.booleans(),
    )
    def create(self, game: str, seed: int, max_players: int, limit: int, spectators: bool) -> None:
        machine, step = RaceMachine.create(
            RULES, code="ABCDEF", game=game, seed=seed, host=p.Seat("ann", "Ann"),
            max_players=max_players, time_limit_s=limit or None, now_ms=self.now,
            spectators=spectators,
        )  # fmt: skip
        assert step.replies[0] == p.Created(
            race="ABCDEF", game=game, max_players=max_players, time_limit_s=limit or None,
            spectators=spectators,
        )  # fmt: skip
        assert step.change is not None and step.change.expect_ver == MUST_NOT_EXIST
        assert machine.race.status == RaceStatus.LOBBY and machine.players() == ["ann"]
        self.machine = machine

    @precondition(lambda self: self.machine is not None)
    @rule(who=st.sampled_from(PLAYERS))
    def join(self, who: str) -> None:
        m = self.machine
        assert m is not None
        before = list(m.players())
        status = m.race.status
        records = [live.record for live in self.games.values()]
        try:
            step = m.join(p.Seat(who, who.title()), records, self.now)
        except p.Refused as refused:
            assert who not in before and status != RaceStatus.DONE
            if status != RaceStatus.LOBBY:
                assert refused.code == p.RACE_STARTED
            else:
                assert refused.code == p.RACE_FULL and len(before) == m.race.max_players
            assert m.players() == before
            return
        lobby = step.replies[0]
        assert isinstance(lobby, p.Lobby) and [s.player for s in lobby.players] == m.players()
        if status == RaceStatus.DONE:
            # Seated or not: the race's one result, as every seat was sent it.
            assert step.change is None and m.players() == before
            assert step.replies[1:] == self.results
        elif who in before:
            assert step.change is None and m.players() == before
            if status == RaceStatus.RUNNING:
                self._check_rejoin(step.replies[1:])
            else:
                assert len(step.replies) == 1
        else:
            assert step.change is not None and m.players() == [*before, who]
            assert len(m.players()) <= m.race.max_players

    def _check_rejoin(self, replies: list[p.Message]) -> None:
        """What a seat joining a running race again gets: the start and one progress per
        seat, in seat order, as the seats' records stand now."""
        m = self.machine
        assert m is not None
        start, *progress = replies
        assert isinstance(start, p.Start) and start.starts_at_ms == m.race.starts_at_ms
        limit_ms = m.race.time_limit_s * 1000
        assert start.ends_at_ms == (m.race.starts_at_ms + limit_ms if limit_ms else None)
        assert [g.player for g in progress] == m.players()
        for got in progress:
            assert isinstance(got, p.Progress)
            rec = self.games[got.player].record
            assert (got.score, got.moves, got.won, got.over, got.finished) == (
                rec.score, rec.moves, rec.won, rec.over, rec.finished,
            )  # fmt: skip
            # The seat's clock, from the start to its end (or now), within the time limit.
            end = rec.finished_at_ms if rec.finished else self.now
            if limit_ms:
                end = min(end, m.race.starts_at_ms + limit_ms)
            assert got.elapsed_ms == max(0, end - m.race.starts_at_ms)

    @precondition(lambda self: self.machine is not None)
    @rule(who=st.sampled_from(PLAYERS))
    def leave(self, who: str) -> None:
        """`who`'s last connection closed (and the grace passed)."""
        m = self.machine
        assert m is not None
        before, host, ver = list(m.players()), m.race.host, m.race.ver
        step = m.leave(who)
        others = [pl for pl in before if pl != who]
        humans = [pl for pl in others if not pl.startswith("bot-")]
        stays = (
            m.race.status != RaceStatus.LOBBY
            or who not in before
            or who.startswith("bot-")
            or (who == host and not humans)
        )
        if stays:
            assert step.change is None and m.players() == before and m.race.host == host
            return
        assert step.change is not None and step.change.expect_ver == ver
        assert [s.player for s in step.change.gone_seats] == [who]
        assert m.players() == others and m.race.ver == ver + 1
        assert m.race.host == (humans[0] if who == host else host)
        lobby = step.replies[0]
        assert isinstance(lobby, p.Lobby) and lobby.host == m.race.host
        (say,) = step.says
        assert sorted(say.to.players) == sorted(others) and say.messages == [lobby]

    @precondition(lambda self: self.machine is not None)
    @rule(who=st.sampled_from(PLAYERS))
    def start(self, who: str) -> None:
        m = self.machine
        assert m is not None
        status = m.race.status
        try:
            step = m.start(who, self.now)
        except p.Refused as refused:
            assert who != m.race.host or status != RaceStatus.LOBBY
            assert refused.code in (p.NOT_HOST, p.RACE_STARTED)
            return
        assert status == RaceStatus.LOBBY and who == m.race.host
        assert m.race.status == RaceStatus.RUNNING
        self.games = {live.record.player: live for live in step.dealt}
        assert sorted(self.games) == sorted(m.players())
        # The same deal for every seat, each seat's position its own (a move is played on it
        # in place).
        assert len({id(live.game) for live in step.dealt}) == len(step.dealt)
        assert all(live.game == step.dealt[0].game for live in step.dealt)
        self._close_if_due()

    @precondition(lambda self: self.games)
    @rule(who=st.sampled_from(PLAYERS), resign=st.booleans(), replay=st.booleans())
    def play(self, who: str, resign: bool, replay: bool) -> None:
        live = self.games.get(who)
        if live is None:
            return
        rec = live.record
        open_ = not rec.finished and rec.started_at_ms <= self.now
        in_time = not rec.ends_at_ms or self.now < rec.ends_at_ms
        try:
            if resign:
                decision = decide_resign(live, self.now * 1000)
            elif replay and live.tail:
                decision = decide_move(live, 0, live.tail[0], self.now * 1000)
                assert isinstance(decision, Retransmission)
                return
            else:
                move = choose_move(live.game.view(), "easy", self.rng)
                if move is None:
                    return
                decision = decide_move(live, live.n, move, self.now * 1000)
        except TimeUp:
            assert not in_time and not rec.finished
            self._close_if_due()
            return
        except p.Refused as refused:
            assert not open_, refused.message
            return
        assert open_ and in_time, "a move or resignation was taken after the game's end"
        assert isinstance(decision, Applied)
        assert decision.record.ver == rec.ver + 1
        assert decision.after is live, "decided on the game owned, in place"
        self.games[live.record.player] = live
        if live.record.finished:
            self._close_if_due()

    @precondition(lambda self: self.machine is not None)
    @rule(who=st.sampled_from(WATCHERS))
    def watch(self, who: str | None) -> None:
        m = self.machine
        assert m is not None
        status, before = m.race.status, (m.race.ver, list(m.players()))
        boards = list(self.games.values())
        try:
            replies = m.watch(who, boards, self.now)
        except p.Refused as refused:
            assert refused.code == p.NO_SPECTATORS
            assert not m.race.spectators
            return
        assert m.race.spectators  # anyone may watch, its own seats too
        assert (m.race.ver, m.players()) == before, "watching changed the race"
        lobby, *rest = replies
        assert isinstance(lobby, p.Lobby) and [s.player for s in lobby.players] == m.players()
        if status == RaceStatus.LOBBY:
            assert rest == []
            return
        seats = m.players()
        start, *rest = rest
        assert isinstance(start, p.Start) and start.starts_at_ms == m.race.starts_at_ms
        got, progress = rest[: len(seats)], rest[len(seats) : 2 * len(seats)]
        assert [b.player for b in got] == seats and [g.player for g in progress] == seats
        # While it runs, no card that a seat still playing has not seen (engine's unseen,
        # itself checked against whole histories in tests/engine/test_engine_unseen.py).
        withheld: set[int] = set()
        if status == RaceStatus.RUNNING:
            for live in self.games.values():
                if not live.record.finished:
                    withheld |= set(live.game.unseen())
        for board in got:
            assert isinstance(board, p.SeatBoard)
            live = self.games[board.player]
            view = msgspec.msgpack.decode(board.view)
            # The seat's own public view, less the cards withheld (counted face down), and
            # in full once the race is over; every face-down card stays face down.
            may_show = {name for c, name in enumerate(NAMES) if c not in withheld}
            assert view == fair_view(live.game.view(), may_show) and board.n == live.n
            assert shown(view) <= may_show
            hidden = {c for code in live.game.HIDDEN for c in live.game.piles[code]}
            assert not hidden & set(msgspec.json.encode(view).decode().split('"'))
        assert rest[2 * len(seats) :] == (self.results if status == RaceStatus.DONE else [])
        assert all(not hasattr(r, "seed") for r in replies if not isinstance(r, p.Result))

    @rule(seconds=st.integers(0, 200))
    def wait(self, seconds: int) -> None:
        # The clock jumps; the race is closed only when something looks (the reaper, or a
        # move that finds the time up), as on the server.
        self.now += seconds * 1000

    @precondition(lambda self: self.games)
    @rule()
    def reap(self) -> None:
        self._close_if_due()

    def _seated_person(self, asker: str | int) -> str:
        """`asker` itself, or (a number) one of the race's seated people."""
        m = self.machine
        assert m is not None
        people = [pl for pl in m.players() if not pl.startswith("bot-")]
        return people[asker % len(people)] if isinstance(asker, int) else asker

    @precondition(lambda self: self.machine is not None)
    @rule(asker=st.one_of(st.sampled_from(PLAYERS), st.integers(0, 7)))
    def rematch(self, asker: str | int) -> None:
        m = self.machine
        assert m is not None
        who = self._seated_person(asker)
        before = m.race
        self.codes += 1
        code = f"NEXT{self.codes:04d}"
        try:
            step = m.rematch(who, code)
        except p.Refused as refused:
            if who not in before.players() or who.startswith("bot-"):
                assert refused.code == p.NOT_FOUND
            else:
                assert refused.code == p.NOT_OVER and before.status != RaceStatus.DONE
            assert m.race is before
            return
        assert before.status == RaceStatus.DONE and who in before.players()
        if self.rematch_code is None:
            # The first ask decides, checked against the version it was decided on.
            assert step.change is not None and step.change.expect_ver == before.ver
            assert step.change.race.rematch == code and m.race.ver == before.ver + 1
            assert step.change.race.status == RaceStatus.DONE
            self.rematch_code = code
        else:
            # Any later ask (the other asker, reading again) finds the race decided then.
            assert step.change is None and m.race is before
        assert m.race.rematch == self.rematch_code

    @precondition(lambda self: self.rematch_code is not None)
    @rule(asker=st.integers(0, 7), seed=st.integers(1, 10_000))
    def play_the_rematch(self, asker: int, seed: int) -> None:
        """One who asked for the rematch makes it (its host), as races.py does, and seats
        its bots; the race is then the rematch, and lives on."""
        done = self.machine
        assert done is not None
        who = self._seated_person(asker)
        machine, step = RaceMachine.create_rematch(
            RULES, done.race, seed=seed, host=p.Seat(who, who.title()), now_ms=self.now
        )
        race, old = machine.race, done.race
        assert step.change is not None and step.change.expect_ver == MUST_NOT_EXIST
        assert race.code == self.rematch_code and race.seed == seed
        assert (race.game, race.max_players, race.time_limit_s) == (
            old.game, old.max_players, old.time_limit_s,
        )  # fmt: skip
        assert race.status == RaceStatus.LOBBY and machine.players() == [who]
        assert race.host == who and not race.rematch and not race.result_json
        for bot in done.bot_seats():
            machine.join(bot)
        assert [s.player for s in machine.bot_seats()] == [s.player for s in done.bot_seats()]
        self.machine, self.games, self.results = machine, {}, []
        self.rematch_code = None
        self.races += 1
        event(f"rematches lived: {self.races - 1}")

    # ------------------------------------------------------------ what the store would do

    def _close_if_due(self) -> None:
        m = self.machine
        assert m is not None
        records = [self.games[pl].record for pl in m.players()]
        was = m.race.status
        step = m.close(records, self.now)
        if step is None:
            assert was != RaceStatus.RUNNING or not (
                all(r.finished for r in records) or self.now >= m.deadline_ms()
            )
            return
        assert was == RaceStatus.RUNNING and m.race.status == RaceStatus.DONE
        assert step.change is not None
        for change in step.change.games:  # as the store applies them
            self.games[change.record.player].record = change.record
        result = step.replies[0]
        assert isinstance(result, p.Result)
        self.results.append(result)
        event(f"race {self.races} done")

    # ------------------------------------------------------------ invariants

    @invariant()
    def the_host_is_a_seated_person(self) -> None:
        m = self.machine
        if m is None:
            return
        assert m.race.host in m.players() and not m.race.host.startswith("bot-")

    @invariant()
    def only_a_finished_race_has_a_rematch(self) -> None:
        m = self.machine
        if m is None:
            return
        assert m.race.rematch == (self.rematch_code or "")
        assert not m.race.rematch or m.race.status == RaceStatus.DONE

    @invariant()
    def one_result_with_one_standing_per_seat(self) -> None:
        m = self.machine
        if m is None:
            return
        assert len(self.results) == (1 if m.race.status == RaceStatus.DONE else 0)
        if not self.results:
            return
        standings = self.results[0].standings
        assert sorted(s.player for s in standings) == sorted(m.players())
        assert all(live.record.finished for live in self.games.values())

    @invariant()
    def ranks_follow_score_time_moves(self) -> None:
        if not self.results:
            return
        standings = self.results[0].standings
        # docs/protocol.md, "Races": a seat that resigned ranks after one that did not at
        # the same score (server/play/ranking.py since the resigned tie-break).
        keys = [(-s.score, s.resigned, s.time_ms, s.moves) for s in standings]
        assert keys == sorted(keys)
        for i, s in enumerate(standings):
            expected = standings[i - 1].rank if i and keys[i] == keys[i - 1] else i + 1
            assert s.rank == expected

    @invariant()
    def clocks_stay_within_the_time_limit(self) -> None:
        m = self.machine
        if m is None or not m.race.time_limit_s or not self.results:
            return
        for s in self.results[0].standings:
            assert s.time_ms <= m.race.time_limit_s * 1000


RaceLife.TestCase.settings = settings(max_examples=80, stateful_step_count=60, deadline=None)
test_race_life = RaceLife.TestCase
