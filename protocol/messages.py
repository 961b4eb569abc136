"""Protocol v1 messages as typed structs: every request, reply and event, and the codes.

The server decodes client requests straight into these structs (protocol/decoding.py),
so a frame that does not fit never reaches a handler; the client builds its requests
from them and reads the server's messages into them. docs/protocol.md is the reference.

A request field's fixed rules are msgspec `Meta` constraints; a bound that the server's
settings may change is a `Bound` naming its Limits field, which the decoder checks against
the limits it runs with (rules across fields are a request's `check`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

import engine
from protocol.limits import Bound, Limits

VERSION = 1
RACE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
SEED_MAX = 2**31 - 1

# Error codes (PROTOCOL.md "Errors").
BAD_REQUEST = "bad_request"
UNSUPPORTED_VERSION = "unsupported_version"
AUTH_FAILED = "auth_failed"
NOT_FOUND = "not_found"
RACE_FULL = "race_full"
RACE_STARTED = "race_started"
NOT_HOST = "not_host"
ILLEGAL_MOVE = "illegal_move"
OUT_OF_ORDER = "out_of_order"
ALREADY_PLAYED = "already_played"
NAME_TAKEN = "name_taken"
NO_SPECTATORS = "no_spectators"
RATE_LIMITED = "rate_limited"
NOT_OVER = "not_over"
UNAVAILABLE = "unavailable"
INTERNAL = "internal"
ERROR_CODES = (
    BAD_REQUEST, UNSUPPORTED_VERSION, AUTH_FAILED, NOT_FOUND, RACE_FULL, RACE_STARTED,
    NOT_HOST, ILLEGAL_MOVE, OUT_OF_ORDER, ALREADY_PLAYED, NAME_TAKEN, NO_SPECTATORS, RATE_LIMITED,
    NOT_OVER,
    UNAVAILABLE, INTERNAL,
)  # fmt: skip


class Refused(Exception):
    """A request refused: raised anywhere in the server, answered as one `error` reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def reply(self, re: int | None) -> Error:
        return Error(re=re, code=self.code, msg=self.message)


# Close codes (PROTOCOL.md "Close codes").
CLOSE_GOING_AWAY = 1001
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL = 1011

RequestId = Annotated[int, Meta(ge=-(2**63), le=2**63 - 1)]
# Field limits; a Bound names the Limits field of the running server that bounds it.
Name = Annotated[str, Meta(min_length=1), Bound("name_max_chars")]
Token = Annotated[str, Meta(min_length=1), Bound("token_max_chars")]
Gid = Annotated[str, Meta(min_length=1), Bound("gid_max_chars")]
RaceCode = Annotated[str, Meta(min_length=1), Bound("race_code_max_chars")]
GameId = Annotated[str, Meta(min_length=1, max_length=32)]
MoveText = Annotated[str, Meta(min_length=1), Bound("move_max_chars")]
MoveCount = Annotated[int, Meta(ge=0), Bound("max_moves_per_game")]
Seed = Annotated[int, Meta(ge=1, le=SEED_MAX)]
MaxPlayers = Annotated[int, Bound("max_players", low="min_players")]
TimeLimit = Annotated[int, Bound("max_time_limit_s", low="min_time_limit_s")]
DateText = Annotated[str, Meta(min_length=1, max_length=16)]
Limit = Annotated[int, Meta(ge=1), Bound("leaderboard_max_rows")]  # rows of a leaderboard page
PlayerId = Annotated[str, Meta(min_length=1, max_length=32)]
BotCount = Annotated[int, Meta(ge=0), Bound("max_players", offset=-1)]  # the host takes a seat
# An asynchronous race's window: ten minutes to a week.
WINDOW_MIN_S, WINDOW_MAX_S = 600, 604800
WindowS = Annotated[int, Meta(ge=WINDOW_MIN_S, le=WINDOW_MAX_S)]
SeatLine = Annotated[int, Meta(ge=1), Bound("max_players")]  # a line of a race's standings


def _check_game(game: str) -> None:
    if game not in engine.GAMES:
        raise ValueError(f"unknown game {game!r}; games are {', '.join(engine.GAMES)}")


# ---------------------------------------------------------------- requests


class Request(Struct, tag_field="t", kw_only=True, omit_defaults=True):
    """Base of every client request; `id` is echoed as `re` in the reply.

    A client encodes only the fields it sets: an optional field left out is absent from
    the frame, not nil.
    """

    id: RequestId | None = None

    def check(self, limits: Limits) -> str | None:
        """What is wrong with the request under these limits, across its fields (its
        fields' own bounds are checked before); None: nothing."""
        return None


class Hello(Request, tag="hello"):
    v: int
    name: Name
    token: Token | None = None
    # True: every `state` this connection is sent for the player's own games carries
    # `legal` (clients without the engine, such as the browser's, highlight from it).
    legal: bool = False

    def __post_init__(self) -> None:
        if not self.name.isprintable():
            raise ValueError("name must be printable characters only")
        if not self.name.strip():
            raise ValueError("name must not be blank")


class Create(Request, tag="create"):
    game: GameId
    seed: Seed | None = None
    max_players: MaxPlayers | None = None
    time_limit_s: TimeLimit | None = None
    # Bot seats (server/play/bots.py), counted in max_players.
    bots: BotCount = 0
    bot_strength: Literal["easy", "medium", "hard"] = "medium"
    # Whether anyone with the race's code may `watch` it (and open its page).
    spectators: bool = True
    # Rated (every seat human): its result changes its players' ratings.
    rated: bool = False
    # An asynchronous race (a challenge): every seat deals when it joins and plays on its
    # own clock within `window_s` seconds of the creation (server/play/race_machine.py).
    async_: bool = msgspec.field(default=False, name="async")
    window_s: WindowS | None = None

    def __post_init__(self) -> None:
        _check_game(self.game)

    def check(self, limits: Limits) -> str | None:
        seats = self.max_players or limits.default_max_players
        if self.bots and self.bots + 1 > seats:
            return f"{self.bots} bots and the host do not fit in max_players {seats}"
        if self.rated and self.bots:
            return "a rated race has no bots: every seat is human"
        if self.rated and self.async_:
            return "an asynchronous race is not rated"
        if self.window_s is not None and not self.async_:
            return "window_s is for asynchronous races (async: true) only"
        return None


class Join(Request, tag="join"):
    race: RaceCode


class StartRace(Request, tag="start"):
    race: RaceCode


class Rematch(Request, tag="rematch"):
    """A seated player asks for a new race like the finished race `race` (server/play/
    races.py): once per race; whoever asks after the first is seated in the same one."""

    race: RaceCode


class Move(Request, tag="move"):
    gid: Gid
    n: MoveCount
    m: MoveText


class Watch(Request, tag="watch"):
    """Follow a race as a spectator: every seat's board, never a seat of one's own."""

    race: RaceCode


class Get(Request, tag="get"):
    gid: Gid


class Resign(Request, tag="resign"):
    gid: Gid


class Daily(Request, tag="daily"):
    game: GameId
    # Without it the reply only says where the player stands (`DailyStatus`): today's deal
    # is dealt to a player once they have confirmed that this is their ranked attempt.
    confirm: bool = False

    def __post_init__(self) -> None:
        _check_game(self.game)


class Leaderboard(Request, tag="leaderboard"):
    game: GameId
    date: DateText | None = None
    limit: Limit | None = None
    around_me: bool = False

    def __post_init__(self) -> None:
        _check_game(self.game)


class Stats(Request, tag="stats"):
    player: PlayerId | None = None  # default: the asker


class Practice(Request, tag="practice"):
    """An unranked game with undo and hints (server/play/practice.py); random deal if no seed."""

    game: GameId
    seed: Seed | None = None

    def __post_init__(self) -> None:
        _check_game(self.game)


class Undo(Request, tag="undo"):
    gid: Gid


class Hint(Request, tag="hint"):
    gid: Gid


class Replay(Request, tag="replay"):
    """A finished game's deal, moves and result (server/play/replays.py), by `gid` or by
    `race` and `seat` (the seat's line in the race's standings, from 1); `start`: the first
    move of the page of moves wanted (a reply carries at most `replay_page_moves`)."""

    gid: Gid | None = None
    race: RaceCode | None = None
    seat: SeatLine | None = None
    start: MoveCount = 0

    def check(self, limits: Limits) -> str | None:
        if self.gid is not None:
            if self.race is not None or self.seat is not None:
                return "name the game by `gid`, or by `race` and `seat`, not both"
            return None
        if self.race is None or self.seat is None:
            return "name the game by `gid`, or by `race` and `seat` (its line in the standings)"
        return None


class Queue(Request, tag="queue"):
    """Wait for a quick race of `game` (server/play/quick.py): players of close ratings."""

    game: GameId

    def __post_init__(self) -> None:
        _check_game(self.game)


class Unqueue(Request, tag="unqueue"):
    """Leave the queue (answered `unqueued` whether or not the player was waiting)."""


class Ratings(Request, tag="ratings"):
    """A game's ratings, highest first (server/play/ratings.py)."""

    game: GameId
    limit: Limit | None = None
    around_me: bool = False

    def __post_init__(self) -> None:
        _check_game(self.game)


# Every request type the server decodes; the daily helper's messages are listed
# here too (their handlers are registered in server/play/handlers.py).
class Challenges(Request, tag="challenges"):
    """The asker's asynchronous races: those still open and those closed lately."""


REQUEST_TYPES: tuple[type[Request], ...] = (
    Hello, Create, Join, StartRace, Move, Get, Resign, Daily, Leaderboard, Stats,
    Practice, Undo, Hint, Replay, Rematch, Watch, Challenges, Queue, Unqueue, Ratings,
)  # fmt: skip


# ---------------------------------------------------------------- server messages


class Message(Struct, tag_field="t", kw_only=True, omit_defaults=True):
    """Base of every server message; `re` is present only in replies."""

    re: int | None = None


class State(Message, tag="state"):
    gid: str
    # "race", "daily" or "practice"; a str, not a Literal, so that a client still reads a
    # welcome listing a kind of game a newer server has (and leaves that game alone).
    kind: str
    game: str
    n: int
    # The engine's public view (a dict), or msgspec.Raw of its msgpack: a move's state is
    # encoded twice (the reply and the event for the player's other connections), its
    # view once.
    view: Any
    score: int
    won: bool
    over: bool
    finished: bool
    elapsed_ms: int
    race: str | None = None
    date: str | None = None
    seed: int | None = None  # practice games only: nothing ranked depends on them
    # The legal moves, only to connections whose hello asked for them (`legal: true`).
    legal: list[str] | None = None


class Welcome(Message, tag="welcome"):
    v: int
    player: str
    name: str
    token: str
    active: list[State]
    # The server's public address for people (http(s)://HOST[:PORT][/PATH]), when its
    # operator set one: race links are made from it. Absent: the address the client used.
    url: str | None = None


class Created(Message, tag="created"):
    race: str
    game: str
    max_players: int
    time_limit_s: int | None  # always sent; nil means no time limit
    spectators: bool = True  # absent: spectators may watch (as from servers before them)


class Seat(Struct):
    player: str
    name: str


class Lobby(Message, tag="lobby"):
    race: str
    game: str
    host: str
    players: list[Seat]


class Start(Message, tag="start"):
    race: str
    game: str
    starts_at_ms: int
    ends_at_ms: int | None = None
    # An asynchronous race: the times are this seat's own (its deal, its time limit).
    async_: bool = msgspec.field(default=False, name="async")


class Progress(Message, tag="progress"):
    race: str
    player: str
    name: str
    score: int
    moves: int
    won: bool
    over: bool
    finished: bool
    elapsed_ms: int
    # An earlier run of an asynchronous race, replayed at the viewer's own elapsed time.
    ghost: bool = False


class SeatBoard(Message, tag="seat"):
    """One race seat's board as its own player sees it (the `state` they were sent, less
    what only they need), for spectators: after each move of that seat, and on `watch`."""

    race: str
    player: str
    n: int
    view: Any  # the engine's public view, as in `state` (msgspec.Raw when the server sends it)
    score: int
    won: bool
    over: bool
    finished: bool
    elapsed_ms: int


class Standing(Struct):
    rank: int
    player: str
    name: str
    score: int
    moves: int
    time_ms: int
    won: bool
    resigned: bool


class RatingChange(Struct):
    before: int
    after: int


class Result(Message, tag="result"):
    race: str
    game: str
    seed: int
    standings: list[Standing]
    # A rated race's: every seat's rating before and after it (absent when unrated).
    rating: dict[str, RatingChange] | None = None


class Queued(Message, tag="queued"):
    """The reply to `queue`: waiting since `since_ms` with `rating`; sent again as an update
    with `bot` (its strength) when the player, alone too long, is offered a bot race."""

    game: str
    rating: int
    since_ms: int
    bot: str | None = None


class Matched(Message, tag="matched"):
    """Event: a quick race was formed for the player; its `lobby` follows, and it starts by
    itself at `starts_at_ms`."""

    race: str
    game: str
    starts_at_ms: int


class Unqueued(Message, tag="unqueued"):
    pass


class RatingEntry(Struct):
    rank: int
    player: str
    name: str
    rating: int
    games: int
    provisional: bool


class RatingsReply(Message, tag="ratings"):
    """The `ratings` message (and the JSON of /ratings/GAME.json)."""

    game: str
    total: int
    entries: list[RatingEntry]
    me: RatingEntry | None = None


class RatingPoint(Struct):
    """One rated race in a player's history: the rating it left them with."""

    race: str
    at_ms: int
    rank: int
    seats: int
    before: int
    after: int


class GameRating(Struct):
    """A player's rating in one game, as `stats` carries it (newest history first)."""

    rating: int
    games: int
    provisional: bool
    history: list[RatingPoint]


class Challenge(msgspec.Struct, omit_defaults=True):
    """One asynchronous race of the asker's: `standings` lists only the seats that have
    finished (ranked among themselves), and none while the asker's own game is in play."""

    race: str
    game: str
    created_ms: int
    closes_at_ms: int  # the window's end (or when it closed, once closed)
    open: bool
    seats: int
    max_players: int
    played: bool  # whether the asker's own game has finished
    standings: list[Standing] = msgspec.field(default_factory=list)


class ChallengesReply(Message, tag="challenges"):
    races: list[Challenge]


class RematchOffer(Message, tag="rematch"):
    """Event to every seat of finished race `race`: `player` (`name`) asked for a rematch,
    race `next`, which they may `join`."""

    race: str
    next: str
    player: str
    name: str


class HintReply(Message, tag="hint"):
    gid: str
    n: int  # the move count of the position the hint is for
    move: str | None  # None: no move is left
    verdict: str  # "won", "unwinnable" or "gave_up" (a str for newer servers, as `kind`)


class DailyStatus(Message, tag="daily"):
    """The reply to an unconfirmed `daily`: where the player stands today, without the deal."""

    game: str
    date: str
    status: Literal["not_started", "in_progress", "finished"]
    ends_at_ms: int  # the end of the day (00:00 UTC), when an open attempt is closed
    gid: str | None = None  # the attempt, once started


class Entry(msgspec.Struct, omit_defaults=True):
    """A ranked row as the `leaderboard` message carries it.

    On all-time boards `score`, `moves` and `time_ms` are totals over every daily attempt,
    `won` says whether the player ever won one, and the extra fields are filled in.
    """

    rank: int
    player: str
    name: str
    score: int
    moves: int
    time_ms: int
    won: bool
    days_won: int | None = None
    played: int | None = None
    best_streak: int | None = None
    # Day boards: the player's identity was made on the board's (UTC) day.
    new: bool = False
    # Day boards: the attempt was resigned (it ranks after unresigned ones of equal score).
    resigned: bool = False


class GameStats(msgspec.Struct):
    """One game's statistics of one player, as the `stats` message carries them."""

    played: int = 0
    won: int = 0
    streak: int = 0
    best_streak: int = 0
    win_streak: int = 0
    best_win_streak: int = 0
    total_score: int = 0
    # Absent (not nil) until the player has played, like every optional field we send.
    last_played: str | msgspec.UnsetType = msgspec.UNSET


class LeaderboardReply(Message, tag="leaderboard"):
    """The `leaderboard` message (and the JSON of /leaderboard/GAME/DATE.json)."""

    game: str
    date: str
    total: int
    entries: list[Entry]
    me: Entry | None = None
    seed: int | None = None
    # Past days only: a winning line of the deal and its length (absent when none is known).
    par: int | None = None
    line: list[str] | None = None


class StatsReply(Message, tag="stats"):
    """The `stats` message: a player's daily statistics per game."""

    player: str
    name: str
    games: dict[str, GameStats]
    # Per game the player has a rating in (absent when none).
    ratings: dict[str, GameRating] | None = None


class ReplayResult(msgspec.Struct, omit_defaults=True):
    """How a replayed game ended, as stored: what its last position must show."""

    score: int
    max_score: int
    moves: int  # the engine's count of the player's moves
    won: bool
    over: bool
    resigned: bool
    timed_out: bool  # closed by its race's time limit or the end of its day
    time_ms: int
    rank: int | None = None  # in its race, or on its day's board
    of: int | None = None  # seats of the race, or entries of the board


class ReplayReply(Message, tag="replay"):
    """The `replay` message (and the JSON of /replay/ID.json): replay `moves` from `start`
    on the deal of `seed` with the engine (`engine.replay(game, seed, moves)`)."""

    gid: str
    kind: str  # "race", "daily" or "practice" (a str, as in `state`)
    game: str
    seed: int
    player: str
    name: str
    n: int  # moves in the whole game
    start: int  # the index of moves[0] in the game's moves
    moves: list[str]
    result: ReplayResult
    race: str | None = None
    date: str | None = None
    # A race seat's: the race's standings, whose lines are the seats of `replay {race, seat}`.
    standings: list[Standing] | None = None


class Error(Message, tag="error"):
    code: str
    msg: str


# Every message type the server sends, as a client decodes them (protocol/decoding.py).
MESSAGE_TYPES: tuple[type[Message], ...] = (
    State, Welcome, Created, Lobby, Start, Progress, Result, HintReply, DailyStatus,
    LeaderboardReply, StatsReply, ReplayReply, RematchOffer, Error, SeatBoard,
    ChallengesReply, Queued, Matched, Unqueued, RatingsReply,
)  # fmt: skip


_encoder = msgspec.msgpack.Encoder()


def encode(message: Message | Request) -> bytes:
    """The frame of a server message, or of a client's request."""
    return _encoder.encode(message)


def encode_value(value: Any) -> bytes:
    """msgpack of a plain value (a view), to embed in messages as msgspec.Raw."""
    return _encoder.encode(value)


def with_re(message: Message, re: int | None) -> Message:
    """The same message as a reply to request `re`."""
    return msgspec.structs.replace(message, re=re) if re is not None else message
