"""A race's lifecycle as a pure state machine: create, join, start, close (finish or time-up).

Like websockets' sans-I/O protocol objects: an input goes in (with the time), a
`Transition` comes out: the writes to make (a RaceChange, checked by the store against
the version the decision was made on), the replies for whoever asked, and what to say to
each seat. No await, no Redis, no sockets. Every status change of a race is made here:

    lobby --start--> running --close (every seat finished, or the deadline)--> done

In any status a race may be watched (`watch`): the machine says whether the asker may and
what they are first sent; server/edge/watchers.py follows the race for them from then on.
In its lobby a race also changes seats: `join` adds one, `leave` frees one (a player gone
from every connection), handing the race to another human when its host leaves.

Once done, a seated player may ask for a `rematch`: the race records the code of a new race
like it (decided once), which `create_rematch` makes, and every seat hears of it (`offer`).

server/play/races.py feeds it what it loads and stores what it decides; when the store
finds the race changed meanwhile, it reads it again and asks the machine again.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace

import msgspec

import engine
import protocol as p
from server.config import Config
from server.domain.changes import MUST_NOT_EXIST, GameChange, RaceChange, RatingChange
from server.domain.ids import race_gid
from server.domain.kinds import GameKind
from server.domain.ratings import PlayerRating, RatingPoint
from server.domain.records import GameRecord, RaceRecord, RaceStatus
from server.play import ratings as rating_model
from server.play.bot_seats import is_bot
from server.play.effects import Say, ToPlayers, ToSpectators
from server.play.game_machine import (
    LiveGame,
    dealt_fields,
    elapsed_ms,
    progress,
    seat_seen,
    time_up,
    timed_out,
)
from server.play.ranking import rank_key, ranked
from server.play.spectator_boards import SpectatorBoards
from server.store.events import SeatSeen


@dataclass(frozen=True)
class RaceRules:
    """The settings the lifecycle depends on (from the server's Config)."""

    code_length: int = 12
    default_max_players: int = 8
    lobby_ttl_s: int = 24 * 3600
    finished_race_ttl_s: int = 30 * 24 * 3600
    untimed_race_max_s: int = 24 * 3600

    @classmethod
    def from_config(cls, cfg: Config) -> RaceRules:
        return cls(
            code_length=cfg.race_code_length,
            default_max_players=cfg.default_max_players,
            lobby_ttl_s=cfg.lobby_ttl_s,
            finished_race_ttl_s=cfg.finished_race_ttl_s,
            untimed_race_max_s=cfg.untimed_race_max_s,
        )


@dataclass
class Transition:
    """What one input decided: store `change` (None: nothing to store), then send
    `replies` to the asker and say `says` (server/play/effects.py: the applier encodes
    them, puts them in the write for the other instances, and delivers them here)."""

    change: RaceChange | None
    replies: list[p.Message] = field(default_factory=list)
    says: list[Say] = field(default_factory=list)
    # The seats' games as a start dealt them (the caller may cache them once stored).
    dealt: list[LiveGame] = field(default_factory=list)


def new_code(length: int) -> str:
    return "".join(secrets.choice(p.RACE_ALPHABET) for _ in range(length))


def new_seed() -> int:
    return secrets.randbelow(p.SEED_MAX) + 1


# Codes made by earlier versions had 6 characters; their races are still found by them.
OLDEST_CODE_LENGTH = 6


def normalise_code(text: str, length: int = 12) -> str | None:
    """The race code a user typed, upper-cased, or None if it cannot be one: `length`
    characters, as this server makes them, or as few as earlier versions made."""
    code = text.strip().upper()
    if not OLDEST_CODE_LENGTH <= len(code) <= max(length, OLDEST_CODE_LENGTH):
        return None
    if any(c not in p.RACE_ALPHABET for c in code):
        return None
    return code


def lobby_message(race: RaceRecord) -> p.Lobby:
    return p.Lobby(race=race.code, game=race.game, host=race.host, players=list(race.seats))


def not_found(code: str) -> p.Refused:
    return p.Refused(p.NOT_FOUND, f"no race {code}")


class RaceMachine:
    """One race as loaded from the store, and the decisions on it."""

    def __init__(self, race: RaceRecord, rules: RaceRules) -> None:
        self.race = race
        self.rules = rules

    # ------------------------------------------------------------ questions

    @property
    def code(self) -> str:
        return self.race.code

    def seated(self, player: str) -> bool:
        return any(s.player == player for s in self.race.seats)

    def players(self) -> list[str]:
        return self.race.players()

    def gids(self) -> list[str]:
        return [race_gid(self.code, s.player) for s in self.race.seats]

    def deadline_ms(self) -> int:
        """When a running race closes whatever happens."""
        race = self.race
        if race.ends_at_ms:
            return race.ends_at_ms
        return race.starts_at_ms + self.rules.untimed_race_max_s * 1000

    def lobby(self) -> p.Lobby:
        return lobby_message(self.race)

    def start_message(self) -> p.Start:
        race = self.race
        return p.Start(
            race=race.code,
            game=race.game,
            starts_at_ms=race.starts_at_ms,
            ends_at_ms=race.ends_at_ms or None,
        )

    def seat_record(self, seat: p.Seat) -> GameRecord:
        race = self.race
        return GameRecord(
            gid=race_gid(race.code, seat.player),
            kind=GameKind.RACE,
            game=race.game,
            seed=race.seed,
            player=seat.player,
            name=seat.name,
            race=race.code,
        )

    # ------------------------------------------------------------ inputs

    @classmethod
    def create(
        cls,
        rules: RaceRules,
        *,
        code: str,
        game: str,
        seed: int,
        host: p.Seat,
        max_players: int | None,
        time_limit_s: int | None,
        now_ms: int,
        spectators: bool = True,
        rated: bool = False,
        window_s: int | None = None,
    ) -> tuple[RaceMachine, Transition]:
        """A new race in its lobby with its host seated. The store refuses it if the code
        is taken.

        With `window_s` (None: a live race) an asynchronous race: running from now until
        the window ends (its deadline), its host seated but not yet dealt (`join` deals)."""
        race = RaceRecord(
            code=code,
            game=game,
            seed=seed,
            host=host.player,
            max_players=max_players or rules.default_max_players,
            time_limit_s=time_limit_s or 0,
            created_ms=now_ms,
            seats=[host],
            spectators=spectators,
            rated=rated,
        )
        if window_s is not None:
            race.async_race, race.window_s = True, window_s
            race.status = RaceStatus.RUNNING
            race.starts_at_ms, race.ends_at_ms = now_ms, now_ms + window_s * 1000
        machine = cls(race, rules)
        created = p.Created(
            race=race.code,
            game=race.game,
            max_players=race.max_players,
            time_limit_s=race.time_limit_s or None,
            spectators=race.spectators,
        )
        lobby = machine.lobby()
        says = [machine._lobby_say(lobby, [host.player])]
        change = RaceChange(
            race=race,
            expect_ver=MUST_NOT_EXIST,
            new_seats=[host],
            games=[GameChange(machine.seat_record(host), MUST_NOT_EXIST, all_fields=True)],
            # An asynchronous race runs from its creation: its keys persist until it closes.
            ttl_s=0 if race.async_race else rules.lobby_ttl_s,
        )
        return machine, Transition(change, [created, lobby], says)

    @classmethod
    def create_quick(
        cls,
        rules: RaceRules,
        *,
        code: str,
        game: str,
        seed: int,
        seats: list[p.Seat],
        max_players: int,
        time_limit_s: int,
        now_ms: int,
        starts_at_ms: int,
        rated: bool,
    ) -> tuple[RaceMachine, Transition]:
        """A quick race the matcher formed: every seat placed at once (nobody may join it:
        it is full, or a bot fills it), starting by itself at `starts_at_ms` (`autostart`).
        Its players hear `matched`, then its lobby."""
        race = RaceRecord(
            code=code,
            game=game,
            seed=seed,
            host=seats[0].player,
            max_players=max_players,
            time_limit_s=time_limit_s,
            created_ms=now_ms,
            starts_at_ms=starts_at_ms,
            seats=list(seats),
            rated=rated,
        )
        machine = cls(race, rules)
        matched = p.Matched(race=code, game=game, starts_at_ms=starts_at_ms)
        lobby = machine.lobby()
        says = [
            Say(ToPlayers([s.player for s in seats]), [matched, lobby]),
            Say(ToPlayers([]), [lobby], ToSpectators(code, seats=machine.players())),
        ]
        change = RaceChange(
            race=race,
            expect_ver=MUST_NOT_EXIST,
            new_seats=list(seats),
            games=[
                GameChange(machine.seat_record(s), MUST_NOT_EXIST, all_fields=True) for s in seats
            ],
            ttl_s=rules.lobby_ttl_s,
        )
        return machine, Transition(change, [], says)

    @property
    def starts_by_itself(self) -> bool:
        """A quick race in its lobby: it starts at its `starts_at_ms`, not by its host."""
        return self.race.status == RaceStatus.LOBBY and self.race.starts_at_ms > 0

    def join(
        self,
        seat: p.Seat,
        games: list[GameRecord] | None = None,
        now_ms: int = 0,
    ) -> Transition:
        """`seat.player` asks for a seat. A seated player gets the race as it stands, as a
        seat that never left has it: its lobby; once it runs, its `start` and every seat's
        `progress` from `games` (the seats' records as read at `now_ms`); once it is done,
        its result (how a seat that was offline when the result went out gets it back).
        Anyone gets a finished race's lobby and result: nothing in them is hidden any more.
        `change` is then None."""
        race = self.race
        seated = self.seated(seat.player)
        if seated or race.status == RaceStatus.DONE:
            replies: list[p.Message] = [self.lobby()]
            result = race.stored_result()
            if result is not None:
                replies.append(result)
            elif not seated:
                raise p.Refused(p.RACE_STARTED, f"race {race.code} has finished")
            elif race.status == RaceStatus.RUNNING:
                replies.append(self.start_message())
                by_player = {g.player: g for g in games or ()}
                replies += [
                    progress(by_player[s.player], now_ms)
                    for s in race.seats
                    if s.player in by_player
                ]
            return Transition(None, replies)
        if race.status != RaceStatus.LOBBY:
            raise p.Refused(p.RACE_STARTED, f"race {race.code} has already started")
        if len(race.seats) >= race.max_players:
            raise p.Refused(p.RACE_FULL, f"race {race.code} is full ({race.max_players} players)")
        if race.rated and is_bot(seat.player):
            raise p.Refused(p.BAD_REQUEST, f"race {race.code} is rated: no bots")
        expect = race.ver
        joined = replace(race, seats=[*race.seats, seat], ver=expect + 1)
        self.race = joined
        lobby = self.lobby()
        says = [self._lobby_say(lobby, joined.players())]
        change = RaceChange(
            race=joined,
            expect_ver=expect,
            new_seats=[seat],
            games=[GameChange(self.seat_record(seat), MUST_NOT_EXIST, all_fields=True)],
            ttl_s=self.rules.lobby_ttl_s,
        )
        return Transition(change, [lobby], says)

    def may_watch(self, player: str | None) -> None:
        """Refuses (`no_spectators`) unless `player` may watch the race (None: a visitor of
        its page): its creator decides whether anyone may. Its own seats may too: while it
        runs, spectators see no card that a seat still playing has not seen in its own
        game (server/play/spectator_boards.py), so a seat learns nothing of its deal."""
        race = self.race
        if not race.spectators:
            raise p.Refused(p.NO_SPECTATORS, f"race {race.code} does not take spectators")
        if race.async_race and race.status != RaceStatus.DONE:
            # Its seats play the same deal at different times: no board is shown to anyone
            # (nor to a seat, which could learn the deal) until the race closes.
            raise p.Refused(
                p.NO_SPECTATORS,
                f"race {race.code} is an asynchronous race: it may be watched once it closes",
            )

    def watch(self, player: str | None, boards: list[LiveGame], now_ms: int) -> list[p.Message]:
        """What a spectator is first sent: the race as it stands, as a seat that never left
        has heard it (its lobby; once it runs its `start`, and every seat's board and
        `progress` from `boards`, the seats' games as read at `now_ms`; once it is done, its
        result), and only that: each board is its player's own public view, less (while
        the race runs) every card a seat still playing has not seen. Refused as
        `may_watch` says."""
        self.may_watch(player)
        race = self.race
        replies: list[p.Message] = [self.lobby()]
        if race.status == RaceStatus.LOBBY:
            return replies
        replies.append(self.start_message())
        by_player = {live.record.player: live for live in boards}
        seats = [by_player[s.player] for s in race.seats if s.player in by_player]
        if race.status == RaceStatus.RUNNING:
            fair = SpectatorBoards()
            fair.seats(self.players())
            replies += fair.boards(race.code, self.seen(seats, now_ms))
        else:
            replies += [live.board(now_ms) for live in seats]
        replies += [live.progress(now_ms) for live in seats]
        result = race.stored_result()
        if result is not None:
            replies.append(result)
        return replies

    @staticmethod
    def seen(boards: list[LiveGame], now_ms: int) -> list[SeatSeen]:
        """The seats' boards as their spectators' boards are decided from them."""
        return [seat_seen(live, live.state(now_ms)) for live in boards]

    def _lobby_say(self, lobby: p.Lobby, to: list[str], but_asker: bool = True) -> Say:
        """The lobby for `to` (but the asker, who has it as the reply), and for the race's
        spectators (with its seats)."""
        seen = ToSpectators(self.code, seats=self.players())
        return Say(ToPlayers(to, but_asker), [lobby], seen)

    def leave(self, player: str) -> Transition:
        """`player` has gone (no connection left) while the race waits in its lobby: their
        seat is freed, and if they were its host the race passes to the next seated human,
        in the order they joined. A host with no human left to hand it to keeps the race
        (the lobby waits for them to come back until it expires). `change` is None when
        nothing changes: the race has started, the player is not seated, or is that host."""
        race = self.race
        if race.status != RaceStatus.LOBBY or not self.seated(player) or is_bot(player):
            return Transition(None)
        if self.starts_by_itself:
            # A quick race keeps its seats: a player who leaves it ranks last (rated: their
            # game times out unplayed) rather than leaving the others a seat short.
            return Transition(None)
        staying = [s for s in race.seats if s.player != player]
        host = race.host
        if player == host:
            humans = [s.player for s in staying if not is_bot(s.player)]
            if not humans:
                return Transition(None)
            host = humans[0]
        expect = race.ver
        gone = [s for s in race.seats if s.player == player]
        self.race = RaceRecord(
            **{**race.__dict__, "seats": staying, "host": host, "ver": expect + 1}
        )
        lobby = self.lobby()
        says = [self._lobby_say(lobby, self.players(), but_asker=False)]
        change = RaceChange(
            race=self.race,
            expect_ver=expect,
            gone_seats=gone,
            ttl_s=self.rules.lobby_ttl_s,
        )
        return Transition(change, [lobby], says)

    def start(self, player: str, now_ms: int) -> Transition:
        """The host starts the race: every seat is dealt the same deal, the clock starts."""
        race = self.race
        if race.async_race:
            raise p.Refused(
                p.RACE_STARTED,
                f"race {race.code} is an asynchronous race: each seat's game starts when it joins",
            )
        if player != race.host:
            raise p.Refused(p.NOT_HOST, f"only the host may start race {race.code}")
        if race.status != RaceStatus.LOBBY:
            raise p.Refused(p.RACE_STARTED, f"race {race.code} has already started")
        if self.starts_by_itself:
            raise p.Refused(p.NOT_HOST, f"race {race.code} starts by itself")
        return self._start(now_ms, player)

    def autostart(self, now_ms: int) -> Transition | None:
        """Start a quick race whose start time has come (None: not such a race, or not
        yet). Every seat hears the usual `start` and `state`."""
        if not self.starts_by_itself or now_ms < self.race.starts_at_ms:
            return None
        return self._start(now_ms, None)

    def _start(self, now_ms: int, player: str | None) -> Transition:
        race = self.race
        ends = now_ms + race.time_limit_s * 1000 if race.time_limit_s else 0
        expect = race.ver
        started = replace(
            race,
            status=RaceStatus.RUNNING,
            starts_at_ms=now_ms,
            ends_at_ms=ends,
            ver=expect + 1,
        )
        self.race = started
        game = engine.new_game(race.game, race.seed)
        dealt = dealt_fields(game, now_ms)
        # Every seat's game was created with the race (version 0) and is dealt now, each
        # seat's position its own (a move is played on it in place once it is cached).
        seats = [
            LiveGame(self.seat_record(seat).evolve(ends_at_ms=ends, ver=1, **dealt), game.copy())
            for seat in race.seats
        ]
        start = self.start_message()
        states = {live.record.player: live.state(now_ms) for live in seats}
        says = [
            Say(ToPlayers([pl], but_asker=player is not None), [start, st])
            for pl, st in states.items()
        ]
        # Its spectators hear the start once, with every seat's board as dealt.
        boards = [seat_seen(live, states[live.record.player]) for live in seats]
        seen = ToSpectators(race.code, seats=self.players(), boards=boards)
        says.append(Say(ToPlayers([]), [start], seen))
        change = RaceChange(
            race=started,
            expect_ver=expect,
            games=[GameChange(live.record, 0, all_fields=True) for live in seats],
            ttl_s=0,
        )
        replies: list[p.Message] = [start, states[player]] if player is not None else []
        return Transition(change, replies, says, dealt=seats)

    def close(
        self,
        games: list[GameRecord],
        now_ms: int,
        ratings: list[PlayerRating] | None = None,
    ) -> Transition | None:
        """Close a running race whose every seat has finished, or whose deadline has
        passed (`games`: its seats' records as read). None while neither is true. Unfinished
        seats stop at the deadline (or now, if that is earlier), as timed out.

        A rated race's close also rates its seats (`ratings`: theirs as read, one per seat,
        a new player's unstored), in the same change: the result says every seat's rating
        before and after, and the store writes the new ratings with the close or not at all."""
        race = self.race
        if race.status != RaceStatus.RUNNING:
            return None
        deadline = self.deadline_ms()
        end = min(now_ms, deadline)
        if race.async_race:
            final = self._async_final(games, now_ms)
            if final is None:
                return None
        else:
            complete = bool(games) and all(g.finished for g in games)
            if not (complete or now_ms >= deadline):
                return None
            final = [timed_out(g, end) for g in games]
        result = self.result(final)
        rating_changes: list[RatingChange] = []
        if race.rated:
            if ratings is None:
                raise ValueError("a rated race is closed with its seats' ratings")
            rating_changes = self.rate(result, final, ratings, end)
            result.rating = {
                c.rating.player: p.RatingChange(before=c.point.before, after=c.point.after)
                for c in rating_changes
            }
        expect = race.ver
        self.race = replace(
            race,
            status=RaceStatus.DONE,
            ver=expect + 1,
            result_json=msgspec.json.encode(result).decode(),
        )
        says = [Say(ToPlayers(self.players()), [result], ToSpectators(race.code, over=True))]
        change = RaceChange(
            race=self.race,
            expect_ver=expect,
            # Every seat is checked at the version read: a move stored since would change
            # the result, so the close is then decided again.
            games=[GameChange(f, g.ver) for f, g in zip(final, games, strict=True)],
            ttl_s=self.rules.finished_race_ttl_s,
            ratings=rating_changes,
        )
        return Transition(change, [result], says)

    def rate(
        self,
        result: p.Result,
        final: list[GameRecord],
        ratings: list[PlayerRating],
        at_ms: int,
    ) -> list[RatingChange]:
        """Every seat's new rating from the race's ranking. Resignations and time-outs
        count as the rank they got; a seat that left (timed out without a single move)
        ranks last, below every seat that played, tied with any other that left."""
        by_player = {r.player: r for r in ratings}
        left = {g.player for g in final if g.timed_out and g.moves == 0}
        standing = {s.player: s.rank for s in result.standings}
        played = [s.rank for s in result.standings if s.player not in left]

        def rank(player: str) -> int:
            if player in left:
                return len(played) + 1
            return 1 + sum(1 for r in played if r < standing[player])

        seats = [by_player[s.player] for s in result.standings]
        ranks = [rank(r.player) for r in seats]
        new = rating_model.rate(seats, ranks)
        out = []
        for old, r, (mu, sigma) in zip(seats, ranks, new, strict=True):
            after = PlayerRating(
                player=old.player, game=old.game, name=old.name or old.player, mu=mu,
                sigma=sigma, games=old.games + 1, ver=old.ver + 1, stored=True,
            )  # fmt: skip
            point = RatingPoint(
                race=self.code, at_ms=at_ms, rank=r, seats=len(seats),
                before=rating_model.shown(old.mu), after=rating_model.shown(mu),
            )  # fmt: skip
            expect = old.ver if old.stored else MUST_NOT_EXIST
            out.append(RatingChange(after, expect, point, rating_model.shown(mu)))
        return out

    # ------------------------------------------------------------ asynchronous races

    def _async_final(self, games: list[GameRecord], now_ms: int) -> list[GameRecord] | None:
        """An asynchronous race's seats as it closes now, or None while it stays open: it
        closes once every seat is taken and has finished (a seat whose own time limit has
        passed counts as finished, timed out), or at the end of its window, every game
        then closed as it stands (a seat never dealt with nothing played)."""
        race = self.race
        deadline = self.deadline_ms()
        full = len(race.seats) >= race.max_players and len(games) == len(race.seats)
        done = all(g.finished or time_up(g, now_ms) for g in games)
        if not ((full and done) or now_ms >= deadline):
            return None
        end = min(now_ms, deadline)
        return [timed_out(g, min(end, g.ends_at_ms) if g.ends_at_ms else end) for g in games]

    def seat_start(self, own: GameRecord) -> p.Start:
        """An asynchronous race's `start` for one seat: its own deal's times."""
        return p.Start(
            race=self.race.code,
            game=self.race.game,
            starts_at_ms=own.started_at_ms,
            ends_at_ms=own.ends_at_ms or None,
            async_=True,
        )

    def challenge(self, player: str, games: list[GameRecord], now_ms: int) -> p.Challenge:
        """An asynchronous race as `player` (one of its seats) sees it in a list of their
        challenges: open or closed, and the standings of the seats that have finished,
        ranked among themselves (a closed race's result as it went out); none while the
        player's own game is in play, whose final scores would tell the targets early."""
        race = self.race
        mine = next((g for g in games if g.player == player), None)
        played = mine is not None and mine.finished
        result = race.stored_result()
        if result is not None:
            standings = result.standings
        elif played:
            done = [g for g in games if g.finished]
            standings = self.result(done).standings
        else:
            standings = []
        return p.Challenge(
            race=race.code,
            game=race.game,
            created_ms=race.created_ms,
            closes_at_ms=race.ends_at_ms,
            open=race.status != RaceStatus.DONE and now_ms < race.ends_at_ms,
            seats=len(race.seats),
            max_players=race.max_players,
            played=played or result is not None,
            standings=standings,
        )

    def join_async(self, seat: p.Seat, own: LiveGame | None, now_ms: int) -> Transition:
        """`seat.player` joins an asynchronous race: seated (if a seat is free) and dealt at
        once, its own clock starting now: `lobby`, then its `start` and `state`. A seat
        already dealt (`own`: its game) gets the same again, as it stands; the host, seated
        by `create`, is dealt on its first `join`. A closed race answers `lobby` and
        `result` to anyone. Seats already playing hear nothing of a join: they see each
        other only as ghosts (server/play/ghosts.py)."""
        race = self.race
        if race.status == RaceStatus.DONE:
            return self.join(seat)
        seated = self.seated(seat.player)
        if own is not None and own.record.started_at_ms:
            replies: list[p.Message] = [
                self.lobby(),
                self.seat_start(own.record),
                own.state(now_ms),
            ]
            return Transition(None, replies, dealt=[own])
        if now_ms >= self.deadline_ms():
            raise p.Refused(p.RACE_STARTED, f"race {race.code} has closed")
        if not seated and len(race.seats) >= race.max_players:
            raise p.Refused(p.RACE_FULL, f"race {race.code} is full ({race.max_players} players)")
        game = engine.new_game(race.game, race.seed)
        # The seat plays until its own time limit, and never past the window: a move or a
        # resignation after it is refused (and the race closes), as after a time limit.
        ends = race.ends_at_ms
        if race.time_limit_s:
            ends = min(ends, now_ms + race.time_limit_s * 1000)
        base = own.record if own is not None else self.seat_record(seat)
        dealt = LiveGame(
            base.evolve(ends_at_ms=ends, ver=base.ver + 1, **dealt_fields(game, now_ms)), game
        )
        expect = race.ver
        self.race = replace(
            race, seats=race.seats if seated else [*race.seats, seat], ver=expect + 1
        )
        change = RaceChange(
            race=self.race,
            expect_ver=expect,
            new_seats=[] if seated else [seat],
            games=[
                GameChange(
                    dealt.record,
                    base.ver if own is not None else MUST_NOT_EXIST,
                    all_fields=True,
                )
            ],
        )
        dealt_replies: list[p.Message] = [
            self.lobby(),
            self.seat_start(dealt.record),
            dealt.state(now_ms),
        ]
        return Transition(change, dealt_replies, dealt=[dealt])

    # ------------------------------------------------------------ rematch

    def rematch(self, player: str, code: str) -> Transition:
        """`player` asks for a rematch of this race, to be made under `code` (a fresh one).
        Only a seated person may ask, and only once the race is done. Decided once: the
        race records the code, written against the version read, so that of two players
        asking at once one write goes through and the other, reading the race again, finds
        it. Asked again, `change` is None and `self.race.rematch` names the race decided
        before. An outsider is told nothing of the race (`not_found`), as of a lobby."""
        race = self.race
        if not self.seated(player) or is_bot(player):
            raise p.Refused(
                p.NOT_FOUND,
                f"no race {race.code} of yours: only its players may ask for a rematch",
            )
        if race.status != RaceStatus.DONE:
            raise p.Refused(
                p.NOT_OVER, f"race {race.code} is not over: a rematch is asked for after its result"
            )
        if race.rematch:
            return Transition(None)
        expect = race.ver
        self.race = replace(race, rematch=code, ver=expect + 1)
        change = RaceChange(race=self.race, expect_ver=expect, ttl_s=self.rules.finished_race_ttl_s)
        return Transition(change)

    def bot_seats(self) -> list[p.Seat]:
        return [s for s in self.race.seats if is_bot(s.player)]

    @classmethod
    def create_rematch(
        cls,
        rules: RaceRules,
        done: RaceRecord,
        *,
        seed: int,
        host: p.Seat,
        now_ms: int,
    ) -> tuple[RaceMachine, Transition]:
        """The rematch of race `done` under the code it records: the same game, number of
        seats and time limit, a new deal (`seed`), with `host` (whoever makes it) seated
        as its host. Its bot seats are then seated as `create` seats them."""
        assert done.rematch, "the rematch is decided (RaceMachine.rematch) before it is made"
        return cls.create(
            rules,
            code=done.rematch,
            game=done.game,
            seed=seed,
            host=host,
            max_players=done.max_players,
            time_limit_s=done.time_limit_s or None,
            now_ms=now_ms,
            spectators=done.spectators,
            window_s=done.window_s if done.async_race else None,
        )

    def offer(self, asker: p.Seat) -> Say:
        """The `rematch` event for every person seated in this race (bar the asker's
        connection, which made the rematch): `asker` asked, and the race to join."""
        race = self.race
        offer = p.RematchOffer(
            race=race.code, next=race.rematch, player=asker.player, name=asker.name
        )
        people = [pl for pl in self.players() if not is_bot(pl)]
        return Say(ToPlayers(people, but_asker=True), [offer])

    # ------------------------------------------------------------ result

    def result(self, games: list[GameRecord]) -> p.Result:
        """The race's result from its seats' final records (all finished): by score, then
        not resigned before resigned, then time, then moves; equal seats share a rank,
        listed in the order they finished."""
        race = self.race
        seat_index = {s.player: i for i, s in enumerate(race.seats)}

        def time_ms(g: GameRecord) -> int:
            if race.async_race:  # each seat on its own clock
                return elapsed_ms(g, g.finished_at_ms)
            return max(0, g.finished_at_ms - race.starts_at_ms)

        order = ranked(
            games,
            key=lambda g: rank_key(g.score, g.resigned, time_ms(g), g.moves),
            finish_order=lambda g: (
                g.finished_at_ms,
                g.finished_at_us,
                seat_index.get(g.player, 0),
            ),
        )
        standings = [
            p.Standing(
                rank=rank,
                player=g.player,
                name=g.name,
                score=g.score,
                moves=g.moves,
                time_ms=time_ms(g),
                won=g.won,
                resigned=g.resigned,
            )
            for rank, g in order
        ]
        return p.Result(race=race.code, game=race.game, seed=race.seed, standings=standings)
