"""The well-behaved players of bench/soak.py, and the tally that the whole soak keeps.

Every player is a lean client (bench/lean_client.py) that plays legal moves chosen from
the public view of its game (the easy bot policy of engine/solve/bot.py) at a human pace:
a log-normal think time around `--pace` seconds. The kinds of load:

- race tables: 2 to 4 players who race each other again and again (the host creates, the
  others join, the host starts; every third race has a time limit, which the players stop
  short of so that the server closes the race; now and then one player reconnects with
  its token between races);
- races with server bots: one player and 1 to 3 bots of each strength, with a time limit;
- daily attempts: a new player plays today's deal of each game (its first attempt is
  resumed from a new connection midway), looks at the board, is refused a second attempt;
- practice games, asking for a hint now and then and playing it, undoing now and then.

Anything a correct server would not do (an error reply, a missing event, a state that
is not one move on, no reply within REPLY_TIMEOUT_S) is a Fault: counted under its kind as
a real error, after which the player carries on with its next game.
"""

from __future__ import annotations

import asyncio
import math
import random
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

import engine
from bench.lean_client import Closed, Fault, LeanClient
from engine.solve.bot import STRENGTHS, choose_move
from protocol.messages import SEED_MAX

enc = msgspec.msgpack.encode
dec = msgspec.msgpack.decode

# A reply slower than this is a hang, not a slow reply (a hint waits for the solver, a
# first daily for its deal's search: seconds).
REPLY_TIMEOUT_S = 60.0
EVENT_TIMEOUT_S = 15.0  # a start's state, a result once every seat has finished
MOVE_CAP = 200  # a player resigns a game it has not finished after this many moves
RACE_TIME_LIMIT_S = 60  # every third race of a table
BOT_RACE_TIME_LIMIT_S = 90
# The least time between two new daily players of one client (each makes a player).
DAILY_PLAYER_EVERY_S = 20.0
Message = dict[str, Any]


@dataclass
class Tally:
    """What the soak counts, shared by all its clients (one event loop: no locks)."""

    requests: Counter[str] = field(default_factory=Counter)  # good clients' requests by type
    events: Counter[str] = field(default_factory=Counter)  # events they received, by type
    load: Counter[str] = field(default_factory=Counter)  # "race started", "hint", ...
    errors: Counter[str] = field(default_factory=Counter)  # real errors by kind
    details: dict[str, str] = field(default_factory=dict)  # the first detail of each kind
    abuse: Counter[str] = field(default_factory=Counter)  # the abusive client's actions
    refusals: Counter[str] = field(default_factory=Counter)  # ... and the refusals it got
    acks: list[float] = field(default_factory=list)  # seconds from a move's send to its state
    acked: dict[str, int] = field(default_factory=dict)  # gid -> moves acknowledged
    # Good players' games and running races, for the abusive client to meddle with.
    others: deque[str] = field(default_factory=lambda: deque(maxlen=200))
    races: deque[str] = field(default_factory=lambda: deque(maxlen=50))

    def fault(self, fault: Fault) -> None:
        self.errors[fault.kind] += 1
        self.details.setdefault(fault.kind, fault.detail)


@dataclass
class Soak:
    """What every client of one soak shares: where the server is, until when, how fast."""

    host: str
    port: int
    deadline: float  # time.monotonic() at which clients stop starting anything
    pace: float  # median seconds a player thinks over a move
    tally: Tally

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws"

    def running(self) -> bool:
        return time.monotonic() < self.deadline

    async def think(self, rng: random.Random) -> None:
        """A human's pause before a move: log-normal around the pace, within 1/4 and 4 times it
        (so a player never nears the server's rate limit of 20 messages a second)."""
        drawn = rng.lognormvariate(math.log(self.pace), 0.5)
        await asyncio.sleep(min(max(drawn, self.pace / 4), 4 * self.pace))

    async def connect(self, name: str, token: str | None = None) -> Conn:
        """A new connection, greeted (a new player without `token`)."""
        try:
            ws = await asyncio.wait_for(LeanClient.connect(self.host, self.port, "/ws"), 30)
        except (OSError, TimeoutError) as exc:  # a refused handshake is a ConnectionError
            raise Fault("connection refused", str(exc) or type(exc).__name__) from None
        conn = Conn(ws, self.tally, name)
        hello: Message = {"t": "hello", "v": 1, "name": name}
        if token is not None:
            hello["token"] = token
        try:
            welcome = await conn.request(hello, "welcome")
        except BaseException:
            conn.close()
            raise
        conn.player, conn.token = welcome["player"], welcome["token"]
        conn.active = welcome["active"]
        return conn


class Conn:
    """One good client's connection: requests answered by id, events kept for the asking."""

    def __init__(self, ws: LeanClient, tally: Tally, name: str) -> None:
        self.ws = ws
        self.tally = tally
        self.name = name
        self.player = ""
        self.token = ""
        self.active: list[Message] = []
        self._ids = iter(range(1, 2**62))
        self._waiting: dict[int, asyncio.Future[Message]] = {}
        self._events: deque[Message] = deque(maxlen=256)
        self._new_event = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                msg = dec(await self.ws.recv())
                re = msg.get("re")
                if re is not None and re in self._waiting:
                    fut = self._waiting.pop(re)
                    if not fut.done():
                        fut.set_result(msg)
                    continue
                self.tally.events[msg.get("t", "?")] += 1
                if msg.get("t") != "progress":  # every seat's every move: nobody waits for one
                    self._events.append(msg)
                    self._new_event.set()
        except (Closed, msgspec.DecodeError):
            pass
        finally:
            for fut in self._waiting.values():
                if not fut.done():
                    fut.set_exception(Fault("connection closed", f"code {self.ws.close_code}"))
            self._new_event.set()

    async def request(
        self, msg: Message, want: str | Sequence[str], refusals: Sequence[str] = ()
    ) -> Message:
        """Sends `msg` and returns its reply, which must be of type `want` (or an error with
        one of the codes `refusals`); raises Fault otherwise."""
        kind = msg["t"]
        self.tally.requests[kind] += 1
        rid = next(self._ids)
        fut: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = fut
        if self._reader.done():
            self._waiting.pop(rid)
            raise Fault("connection closed", f"code {self.ws.close_code}, before {kind}")
        self.ws.send(enc({**msg, "id": rid}))
        try:
            reply = await asyncio.wait_for(fut, REPLY_TIMEOUT_S)
        except TimeoutError:
            raise Fault(f"{kind}: no reply within {REPLY_TIMEOUT_S:g} s") from None
        finally:
            self._waiting.pop(rid, None)
        wanted = (want,) if isinstance(want, str) else tuple(want)
        if reply["t"] in wanted:
            return reply
        if reply["t"] == "error" and reply.get("code") in refusals:
            return reply
        if reply["t"] == "error":
            raise Fault(f"{kind}: error {reply.get('code')}", str(reply.get("msg")))
        raise Fault(f"{kind}: {reply['t']} instead of {'/'.join(wanted)}")

    async def event(self, t: str, timeout: float = EVENT_TIMEOUT_S, **match: Any) -> Message:
        """The first event of type `t` whose fields match, kept or yet to come."""
        deadline = time.monotonic() + timeout
        while True:
            for msg in self._events:
                if msg.get("t") == t and all(msg.get(k) == v for k, v in match.items()):
                    self._events.remove(msg)
                    return msg
            if self._reader.done():
                raise Fault("connection closed", f"code {self.ws.close_code}, awaiting {t}")
            self._new_event.clear()
            try:
                await asyncio.wait_for(self._new_event.wait(), deadline - time.monotonic())
            except TimeoutError:
                raise Fault(f"no {t} event within {timeout:g} s") from None

    async def reconnect(self, soak: Soak) -> Conn:
        """The same player on a new connection (this one closed first), as after a drop."""
        self.close()
        await asyncio.sleep(0.05)
        return await soak.connect(self.name, self.token)

    def close(self) -> None:
        self.ws.close()
        self._reader.cancel()


# ---------------------------------------------------------------- playing one game


async def play(
    soak: Soak,
    conn: Conn,
    state: Message,
    rng: random.Random,
    what: str,
    *,
    stop_at_ms: int | None = None,
    hints: bool = False,
) -> Message:
    """Plays the game of `state` until it is finished, the soak ends, or its race's time
    limit is a second away; returns its last state. `hints` (practice): asks for a hint
    now and then and plays it, and undoes a move now and then."""
    tally, gid = soak.tally, state["gid"]
    tally.acked[gid] = state["n"]
    tally.others.append(gid)
    while not state["finished"]:
        await soak.think(rng)
        if not soak.running() or (stop_at_ms and time.time() * 1000 > stop_at_ms - 1000):
            break
        n = state["n"]
        if n >= MOVE_CAP:
            state = await conn.request({"t": "resign", "gid": gid}, "state")
            tally.load[f"{what} resigned"] += 1
            break
        move = None
        if hints and (n == 2 or rng.random() < 0.1):
            hint = await conn.request({"t": "hint", "gid": gid}, "hint")
            tally.load["hint"] += 1
            if hint["n"] != n:
                raise Fault("hint: for another position", f"n {hint['n']}, not {n}")
            move = hint["move"]
        if move is None:
            move = choose_move(state["view"], "easy", rng)
        if move is None:  # no move left: the game is over, and its state said so
            raise Fault(f"{what}: no legal move in a game not finished")
        sent = time.perf_counter()
        reply = await conn.request({"t": "move", "gid": gid, "n": n, "m": move}, "state")
        tally.acks.append(time.perf_counter() - sent)
        if reply["gid"] != gid or reply["n"] != n + 1:
            raise Fault("move: state not one move on", f"n {reply['n']} after move {n}")
        state = reply
        tally.acked[gid] = state["n"]
        tally.load[f"{what} moves"] += 1
        if hints and not state["finished"] and rng.random() < 0.08:
            undone = await conn.request({"t": "undo", "gid": gid}, "state")
            if undone["n"] != n:
                raise Fault("undo: state not one move back", f"n {undone['n']}, not {n}")
            state = undone
            tally.acked[gid] = n
            tally.load["undo"] += 1
    return state


async def keep_playing(soak: Soak, body: Callable[[], Awaitable[None]]) -> None:
    """Runs one client's `body` again and again until the soak ends; a Fault is counted and
    the client starts afresh a second later."""
    while soak.running():
        try:
            await body()
        except Fault as fault:
            soak.tally.fault(fault)
            await asyncio.sleep(1.0)


# ---------------------------------------------------------------- race tables


async def race_table(soak: Soak, table: int, seats: int) -> None:
    """`seats` players racing each other, race after race; the host changes every race."""
    rng = random.Random(f"table {table}")
    tokens: list[str | None] = [None] * seats  # after a fault, the same players come back
    races = 0

    async def body() -> None:
        nonlocal races
        conns: list[Conn] = []
        try:
            for i in range(seats):
                conns.append(await soak.connect(f"t{table}p{i}", tokens[i]))
                tokens[i] = conns[i].token
            while soak.running():
                await one_race(soak, conns, table, races, rng)
                races += 1
                if soak.running() and rng.random() < 0.3:
                    i = rng.randrange(seats)
                    conns[i] = await conns[i].reconnect(soak)
                    soak.tally.load["reconnection"] += 1
        finally:
            for conn in conns:
                conn.close()

    await keep_playing(soak, body)


async def one_race(
    soak: Soak, conns: list[Conn], table: int, races: int, rng: random.Random
) -> None:
    tally = soak.tally
    host = conns[races % len(conns)]
    timed = races % 3 == 2
    create: Message = {
        "t": "create",
        "game": engine.GAMES[(table + races) % len(engine.GAMES)],
        "seed": rng.randint(1, SEED_MAX),
        "max_players": len(conns),
    }
    if timed:
        create["time_limit_s"] = RACE_TIME_LIMIT_S
    code = (await host.request(create, "created"))["race"]
    for conn in conns:
        if conn is not host:
            lobby = await conn.request({"t": "join", "race": code}, "lobby")
            if conn.player not in [s["player"] for s in lobby["players"]]:
                raise Fault("join: the lobby does not list the player who joined")
    start = await host.request({"t": "start", "race": code}, "start")
    tally.load["race started"] += 1
    tally.races.append(code)
    ends = start.get("ends_at_ms")
    if timed != (ends is not None):
        raise Fault("start: ends_at_ms does not match the time limit")

    async def seat(conn: Conn) -> Message:
        state = await conn.event("state", gid=f"r.{code}.{conn.player}")
        return await play(soak, conn, state, rng, "race", stop_at_ms=ends)

    # Each seat plays its game out even if another one met a fault (then raised here).
    finals = await asyncio.gather(*(seat(conn) for conn in conns), return_exceptions=True)
    for final in finals:
        if isinstance(final, BaseException):
            raise final
    if not soak.running() or not (timed or all(f["finished"] for f in finals)):  # type: ignore[index]
        return  # the soak ended mid-race: nobody waits for its result
    # With a time limit the server closes the race within a second or so of its end.
    wait_s = max(0.0, (ends or 0) / 1000 - time.time()) + EVENT_TIMEOUT_S
    results = await asyncio.gather(*(c.event("result", wait_s, race=code) for c in conns))
    for result in results:
        if len(result["standings"]) != len(conns):
            raise Fault("result: standings do not list every seat")
    played_out = all(f["finished"] for f in finals)  # type: ignore[index]
    tally.load["race finished" if played_out else "race closed at its time limit"] += 1


# ---------------------------------------------------------------- races with server bots


async def bot_races(soak: Soak, i: int) -> None:
    """One player racing 1 to 3 server bots (easy, medium, hard in turn), race after race,
    each with a time limit, so that bots that wander end with it."""
    rng = random.Random(f"bots {i}")
    token: str | None = None
    races = 0

    async def body() -> None:
        nonlocal token, races
        conn = await soak.connect(f"b{i}", token)
        token = conn.token
        try:
            while soak.running():
                await one_bot_race(soak, conn, i + races, rng)
                races += 1
        finally:
            conn.close()

    await keep_playing(soak, body)


async def one_bot_race(soak: Soak, conn: Conn, k: int, rng: random.Random) -> None:
    tally = soak.tally
    bots = 1 + k % 3
    create = {
        "t": "create",
        "game": engine.GAMES[k % len(engine.GAMES)],
        "seed": rng.randint(1, SEED_MAX),
        "max_players": bots + 1,
        "time_limit_s": BOT_RACE_TIME_LIMIT_S,
        "bots": bots,
        "bot_strength": STRENGTHS[k % len(STRENGTHS)],
    }
    code = (await conn.request(create, "created"))["race"]
    lobby = await conn.event("lobby", race=code)
    seated = [s["player"] for s in lobby["players"]]
    if len(seated) != bots + 1 or sum(s.startswith("bot-") for s in seated) != bots:
        raise Fault("create: the lobby does not list the bots", repr(seated))
    start = await conn.request({"t": "start", "race": code}, "start")
    tally.load["bot race started"] += 1
    tally.races.append(code)
    state = await conn.event("state", gid=f"r.{code}.{conn.player}")
    await play(soak, conn, state, rng, "bot race", stop_at_ms=start["ends_at_ms"])
    if not soak.running():
        return
    wait_s = max(0.0, start["ends_at_ms"] / 1000 - time.time()) + EVENT_TIMEOUT_S
    result = await conn.event("result", wait_s, race=code)
    if len(result["standings"]) != bots + 1:
        raise Fault("result: standings do not list every seat")
    tally.load["bot race result"] += 1


# ---------------------------------------------------------------- daily attempts


async def daily_state(conn: Conn, game: str, refusals: Sequence[str] = ()) -> Message:
    """Today's attempt at `game`: its state (an error in `refusals` is returned as is).

    `confirm: true` deals at once on a server that asks for it (one that answers an
    unconfirmed `daily` with a `daily` status message); an older server ignores the field.
    Should the status come back anyway, its attempt is fetched by gid."""
    msg = {"t": "daily", "game": game, "confirm": True}
    reply = await conn.request(msg, ("state", "daily"), refusals)
    if reply["t"] != "daily":
        return reply
    if reply.get("status") == "finished" and "already_played" in refusals:
        return {"t": "error", "code": "already_played"}
    if not reply.get("gid"):
        raise Fault("daily: a status without the attempt, though confirmed", repr(reply))
    return await conn.request({"t": "get", "gid": reply["gid"]}, "state")


async def daily_player(soak: Soak, i: int) -> None:
    """New players, one after another, each playing today's daily of every game."""
    rng = random.Random(f"daily {i}")
    players = 0

    async def body() -> None:
        nonlocal players
        began = time.monotonic()
        conn = await soak.connect(f"d{i}n{players}")
        players += 1
        soak.tally.load["daily player"] += 1
        try:
            for k, game in enumerate(engine.GAMES):
                if not soak.running():
                    return
                conn = await one_daily(soak, conn, game, resume=k == 0, rng=rng)
            await conn.request({"t": "stats"}, "stats")
        finally:
            conn.close()
        next_player = min(began + DAILY_PLAYER_EVERY_S, soak.deadline)
        await asyncio.sleep(max(0.0, next_player - time.monotonic()))

    await keep_playing(soak, body)


async def one_daily(soak: Soak, conn: Conn, game: str, resume: bool, rng: random.Random) -> Conn:
    """One attempt at `game`'s daily, to its end; the connection it ended on. `resume`: a
    few moves in, the player comes back on a new connection and resumes it."""
    tally = soak.tally
    state = await daily_state(conn, game)
    if state["kind"] != "daily" or state["n"] != 0:
        raise Fault("daily: not a new attempt", f"kind {state['kind']}, n {state['n']}")
    tally.load["daily attempt"] += 1
    if resume:
        state = await play(soak, conn, state, rng, "daily", stop_at_ms=_in_ms(3 * soak.pace))
        conn = await conn.reconnect(soak)
        if state["gid"] not in [g["gid"] for g in conn.active] and not state["finished"]:
            raise Fault("hello: welcome.active does not list the open daily attempt")
        again = await daily_state(conn, game, refusals=("already_played",))
        if again["t"] == "state" and (again["gid"] != state["gid"] or again["n"] != state["n"]):
            raise Fault("daily: resumed a different attempt", f"n {again['n']}, not {state['n']}")
        if again["t"] == "state":
            state = again
        tally.load["daily resumed"] += 1
    state = await play(soak, conn, state, rng, "daily")
    if not state["finished"]:
        return conn  # the soak ended
    board = await conn.request({"t": "leaderboard", "game": game, "around_me": True}, "leaderboard")
    if (board.get("me") or {}).get("player") != conn.player:
        raise Fault("leaderboard: the finished attempt is not on today's board")
    refused = await daily_state(conn, game, refusals=("already_played",))
    if refused["t"] != "error":
        raise Fault("daily: a second attempt was dealt")
    tally.load["daily second attempt refused"] += 1
    return conn


def _in_ms(seconds: float) -> int:
    return int((time.time() + seconds) * 1000) + 1000


# ---------------------------------------------------------------- practice


async def practice_player(soak: Soak, i: int) -> None:
    """Practice games of each game in turn, with hints and undos."""
    rng = random.Random(f"practice {i}")
    token: str | None = None
    games = 0

    async def body() -> None:
        nonlocal token, games
        conn = await soak.connect(f"p{i}", token)
        token = conn.token
        try:
            while soak.running():
                game = engine.GAMES[(i + games) % len(engine.GAMES)]
                games += 1
                state = await conn.request({"t": "practice", "game": game}, "state")
                if state["kind"] != "practice" or "seed" not in state:
                    raise Fault("practice: not a practice game's state")
                soak.tally.load["practice game"] += 1
                await play(soak, conn, state, rng, "practice", hints=True)
        finally:
            conn.close()

    await keep_playing(soak, body)
