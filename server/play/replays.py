"""Replays of finished games: who may see which game, and its deal, moves and result.

Who may see what is a rule, decided here in plain functions (`refuse_early`, `shown`):

- a race seat, by anyone, once its race is over (while it runs, the deal is still in play);
- a daily attempt, by anyone, once its UTC day is over; never during its day, whoever asks
  (its own player included: the deal is everyone's that day). That refusal is decided
  from the gid alone, before anything is read, so it says nothing of whether the attempt
  exists;
- a practice game, by its own player only (nobody else learns that it exists), once it is
  finished.

Everything shown comes from the stored record and move list: a client (or the web page,
server/edge/http.py) replays the moves on the deal with the engine; nothing is read from
a stored position (the snapshots of server/play/snapshots.py only speed up loading a game
in play). `Replays` reads through the store, only the moves it shows; its `position`
replays moves in short chunks, one viewer at a time, so that players' moves wait at most
one chunk for the event loop however many people watch replays, and keeps every so many
positions of the games it showed, so that a page replays few moves.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from dataclasses import dataclass

import engine
import protocol as p
from server.clock import Clock
from server.config import Config
from server.daily.seeds import parse_date, utc_date
from server.domain.ids import parse_gid, race_gid
from server.domain.kinds import GameKind
from server.domain.records import GameRecord, RaceRecord, RaceStatus
from server.lru import LRU
from server.play.game_machine import elapsed_ms, timed_out
from server.play.players import Who
from server.play.race_machine import normalise_code, not_found
from server.store.stores import Stores

log = logging.getLogger(__name__)

NO_GAME = "no such game"


@dataclass(frozen=True)
class Shown:
    """A game that may be shown: its record as shown (a daily past its day closed as it
    stood; `record.n` its number of moves) and its place among the others (its race, or its
    day's board). Its moves are read as they are needed (`Replays.moves`)."""

    record: GameRecord
    standings: list[p.Standing] | None = None
    rank: int | None = None
    of: int | None = None


@dataclass(frozen=True)
class Marks:
    """Positions of a game shown, every `every` moves from the deal (the web pages' memo: a
    page then replays at most `every` moves)."""

    n: int
    every: int
    games: list[engine.Game]


# ---------------------------------------------------------------- the rules (pure)


def parse_ref(text: str) -> tuple[str | None, str | None, int | None]:
    """A replay's name as people write it: (gid, None, None), or (None, race, seat) for
    `RACE:SEAT` (the seat's line in the race's standings, from 1)."""
    race, colon, seat = text.partition(":")
    if not colon:
        return text, None, None
    if not seat.isdecimal() or not 1 <= int(seat) <= 1000:
        raise p.Refused(p.NOT_FOUND, f"no seat {seat!r}: RACE:SEAT takes a line of the standings")
    return None, race, int(seat)


def refuse_early(gid: str, today: dt.date) -> None:
    """What the gid alone decides: a daily of a day not over is refused, existing or not."""
    parsed = parse_gid(gid)
    if parsed is None:
        raise p.Refused(p.NOT_FOUND, NO_GAME)
    if parsed.kind is GameKind.DAILY:
        day = parse_date(parsed.date)
        if day is None:
            raise p.Refused(p.NOT_FOUND, NO_GAME)
        if day >= today:
            raise p.Refused(
                p.NOT_OVER,
                f"the daily of {day.isoformat()} is shown once its day is over (00:00 UTC)",
            )


def shown(
    record: GameRecord, race: RaceRecord | None, asker: str | None, today: dt.date
) -> GameRecord:
    """The record of a game as a replay may show it, or Refused. `race`: its race, for a
    race seat; `asker`: the player asking (None on the web, where nobody is known)."""
    if record.kind is GameKind.RACE:
        if race is None or race.code != record.race:
            raise p.Refused(p.NOT_FOUND, NO_GAME)
        if race.status != RaceStatus.DONE:
            raise p.Refused(p.NOT_OVER, f"race {race.code} is not over: its replays come after")
        return record
    if record.kind is GameKind.DAILY:
        day = parse_date(record.date)
        if day is None or day >= today:
            raise p.Refused(p.NOT_OVER, "a daily is shown once its day is over (00:00 UTC)")
        # Closed as it stood at midnight, as the sweep closes (and ranks) it within seconds.
        return timed_out(record, record.ends_at_ms)
    if record.kind is GameKind.PRACTICE and asker is not None and record.player == asker:
        if not record.finished:
            raise p.Refused(p.NOT_OVER, "this practice game is not finished: finish or resign it")
        return record
    raise p.Refused(p.NOT_FOUND, NO_GAME)


def seat_of(race: RaceRecord, line: int) -> str:
    """The gid of the seat on line `line` (from 1) of a finished race's standings."""
    result = race.stored_result()
    if result is None:
        raise p.Refused(p.NOT_OVER, f"race {race.code} is not over: its replays come after")
    if not 1 <= line <= len(result.standings):
        count = len(result.standings)
        raise p.Refused(
            p.NOT_FOUND, f"race {race.code} has no seat {line}: its standings have {count} lines"
        )
    return race_gid(race.code, result.standings[line - 1].player)


def result_of(game: Shown) -> p.ReplayResult:
    """How the game ended; a race seat's rank and time are its race's result's own."""
    rec = game.record
    time_ms, rank, of = elapsed_ms(rec, rec.finished_at_ms), game.rank, game.of
    for s in game.standings or ():
        if s.player == rec.player:
            time_ms, rank, of = s.time_ms, s.rank, len(game.standings or ())
    return p.ReplayResult(
        score=rec.score,
        max_score=engine.MAX_SCORE.get(rec.game, 0),
        moves=rec.moves,
        won=rec.won,
        over=rec.over,
        resigned=rec.resigned,
        timed_out=rec.timed_out,
        time_ms=time_ms,
        rank=rank,
        of=of,
    )


def check_start(game: Shown, start: int) -> None:
    if start > game.record.n:
        raise p.Refused(p.BAD_REQUEST, f"start {start} is past the game's {game.record.n} moves")


def replay_message(
    game: Shown, moves: list[str], start: int = 0, re: int | None = None
) -> p.ReplayReply:
    """The `replay` message of a game shown, with `moves`, its moves from `start`."""
    rec = game.record
    return p.ReplayReply(
        re=re,
        gid=rec.gid,
        kind=rec.kind,
        game=rec.game,
        seed=rec.seed,
        player=rec.player,
        name=rec.name,
        n=rec.n,
        start=start,
        moves=moves,
        result=result_of(game),
        race=rec.race or None,
        date=rec.date or None,
        standings=game.standings,
    )


# ---------------------------------------------------------------- over the store


class Replays:
    """The `replay` request, and what the web's replay pages read."""

    def __init__(self, stores: Stores, clock: Clock, config: Config) -> None:
        self.stores = stores
        self.clock = clock
        self.config = config
        # One viewer's engine work at a time (see the module docstring and `position`).
        self._engine_turn = asyncio.Lock()
        self._marks: LRU[str, Marks] = LRU(config.replay_memo_size)

    def today(self) -> dt.date:
        return utc_date(self.clock.now_s())

    async def replay(self, who: Who, msg: p.Replay) -> list[p.Message]:
        game = await self.find(msg.gid, msg.race, msg.seat, asker=who.player)
        check_start(game, msg.start)
        moves = await self.moves(game, msg.start, msg.start + self.config.replay_page_moves)
        log.debug("replay of %s from move %d for player %s", game.record.gid, msg.start, who.player)
        return [replay_message(game, moves, msg.start, msg.id)]

    async def find(
        self,
        gid: str | None,
        race_code: str | None = None,
        seat: int | None = None,
        *,
        asker: str | None = None,
    ) -> Shown:
        """The game named by `gid`, or by a race's code and a line of its standings, if it
        may be shown to `asker` (None: anyone, on the web). Raises Refused."""
        today = self.today()
        race: RaceRecord | None = None
        if gid is None:
            code = normalise_code(race_code or "", self.config.race_code_length)
            if code is None:
                raise p.Refused(p.NOT_FOUND, f"no race {race_code!r}")
            race = await self.stores.races.load_race(code)
            if race is None:
                raise not_found(code)
            gid = seat_of(race, seat or 0)
        refuse_early(gid, today)
        parsed = parse_gid(gid)
        if parsed is None:
            raise p.Refused(p.NOT_FOUND, NO_GAME)
        if race is None and parsed.kind is GameKind.RACE:
            race = await self.stores.races.load_race(parsed.race)
            if race is None:
                raise p.Refused(p.NOT_FOUND, NO_GAME)
            if race.status != RaceStatus.DONE:
                # Said before the seat is read: whether it exists is the race's business.
                raise p.Refused(p.NOT_OVER, f"race {race.code} is not over: its replays come after")
        (loaded,) = await self.stores.games.load_records([gid])
        if loaded is None:
            raise p.Refused(p.NOT_FOUND, NO_GAME + " (replays are kept as long as finished races)")
        record = shown(loaded, race, asker, today)
        if race is not None:
            result = race.stored_result()
            return Shown(record, result.standings if result is not None else None)
        if record.kind is GameKind.DAILY:
            board = await self.stores.boards.board(
                record.game, record.date, limit=1, asker=record.player
            )
            if board.me is not None:
                return Shown(record, rank=board.me.rank, of=board.total)
        return Shown(record)

    async def moves(self, game: Shown, start: int = 0, stop: int | None = None) -> list[str]:
        """The game's moves from `start` to `stop` (default: its end), read a page at a time
        (no one read of the store is longer than a `replay` reply)."""
        stop = game.record.n if stop is None else min(stop, game.record.n)
        page = self.config.replay_page_moves
        out: list[str] = []
        for lo in range(start, stop, page):
            out += await self.stores.games.game_moves(game.record.gid, lo, min(lo + page, stop))
        return out

    def linkable(self, day: dt.date) -> bool:
        """Whether the daily attempts of `day` may be replayed and are still kept (for the
        leaderboard page's links)."""
        age_s = (self.today() - day).days * 86_400
        return 0 < age_s <= self.config.finished_race_ttl_s

    async def position(self, game: Shown, n: int) -> engine.Game:
        """The game after its first `n` moves, replayed by the engine from the deal (from
        the last position memoised on the way, for a race seat or a daily, which no longer
        change once shown)."""
        rec = game.record
        # Held across the pauses between chunks: the other viewers wait for the lock, not in
        # the event loop's queue, so each turn of the loop runs at most one chunk of theirs.
        async with self._engine_turn:
            marks = self._marks.get(rec.gid)
            if marks is None or marks.n != rec.n or rec.kind is GameKind.PRACTICE:
                marks = await self._mark(game)
                if rec.kind is not GameKind.PRACTICE:
                    self._marks.put(rec.gid, marks)
            base = min(n // marks.every, len(marks.games) - 1) * marks.every
            position = marks.games[base // marks.every].copy()
            await self._play(position, await self.moves(game, base, n))
        return position

    async def _mark(self, game: Shown) -> Marks:
        """Every `replay_checkpoint_moves`-th position of the game, replayed from the deal."""
        rec, every = game.record, self.config.replay_checkpoint_moves
        position = engine.new_game(rec.game, rec.seed)
        games = [position.copy()]
        for lo in range(0, rec.n - rec.n % every, every):
            await self._play(position, await self.moves(game, lo, lo + every))
            games.append(position.copy())
        return Marks(rec.n, every, games)

    async def _play(self, position: engine.Game, moves: list[str]) -> None:
        chunk = self.config.replay_chunk_moves
        for lo in range(0, len(moves), chunk):
            if lo:
                await asyncio.sleep(0)  # what came in meanwhile (players' moves) goes first
            for move in moves[lo : lo + chunk]:
                position.play(move)
