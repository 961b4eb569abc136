"""The abusive client of bench/soak.py: everything a careless or hostile client may send.

It runs beside the good players, from the same address, action after action until the
soak ends, on websockets' own client (one client: its speed does not matter, and it
gives the close codes). Each action expects the refusal the protocol promises
(docs/protocol.md, "Errors" and "Close codes"); what it gets is counted in
`tally.refusals`, and anything else (another error code, no reply, a game of another
player acted on, a handshake refused although the soak set the limits to let it in) is
a real error in `tally.errors`:

- on its own connection, slowly (well within the rate limit): bytes that are not
  msgpack, msgpack that is not a map or has no string keys, wrong field types, unknown
  types, fields over their limits, a value nested too deeply, a text frame, a second
  hello;
- other players' games (gids the good players play): move, get, resign, undo, hint on
  them, and a gid forged with its own player id; running races: join and start them;
- its own practice game: old moves sent again (a retransmission gets the current state
  and stores nothing; another move at an old count is out_of_order), counts ahead;
- on connections of their own, one at a time: a flood (rate_limited, then closed 1008),
  an oversized frame (1009), invalid UTF-8 in a text frame (1007), a request before
  hello (1008), hellos with a bad version or token, a connection that never says hello
  (closed 1008 after hello_timeout_s);
- bursts of new connections at once, within the per-address limits.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from bench.lean_client import Fault
from bench.soak_load import Message, Soak
from engine.solve.bot import choose_move

enc = msgspec.msgpack.encode
dec = msgspec.msgpack.decode

REPLY_TIMEOUT_S = 15.0
FLOOD_FRAMES = 400  # over the flood limit (2 x rate x 5 s = 200) with the defaults
OVERSIZED_BYTES = 20_000  # over max_frame_bytes (16 KiB)
HELLO_TIMEOUT_S = 10.0  # the server's default hello_timeout_s
OWN_GAME = "quatorze"  # short games: a new one is dealt often


class Abuser:
    def __init__(self, soak: Soak, burst: int) -> None:
        self.soak = soak
        self.tally = soak.tally
        self.burst = burst
        self.rng = random.Random("abuse")
        self.ws: ClientConnection | None = None
        self.token = ""
        self.player = ""
        self._ids = iter(range(1, 2**62))
        self.own: Message = {}  # the state of its own practice game
        self.own_moves: list[str] = []
        # Actions that wait long for their close run beside the others, one of each at a time.
        self.background: dict[str, asyncio.Task[None]] = {}

    # ------------------------------------------------------------ running

    async def run(self) -> None:
        # The first round in this order (the short runs of the tests see each action once,
        # the others' games early), every later round shuffled.
        actions: list[Callable[[], Awaitable[None]]] = [
            self.garbage, self.others_games, self.replays, self.flood, self.wrong_types,
            self.forged_gid, self.others_races, self.never_hello, self.over_limits, self.deep,
            self.oversized, self.not_a_map, self.text_frame, self.second_hello,
            self.invalid_utf8, self.before_hello, self.bad_hellos, self.burst_of_connections,
        ]  # fmt: skip
        await asyncio.sleep(1.0)  # the good players' first games, for it to meddle with
        try:
            while self.soak.running():
                for action in actions:
                    if not self.soak.running():
                        break
                    try:
                        if self.ws is None:
                            await self.connect_main()
                        await action()
                    except Fault as fault:
                        self.tally.fault(fault)
                        await self.close_main()
                    await asyncio.sleep(0.1 + 0.3 * self.rng.random())
                self.rng.shuffle(actions)
        finally:
            await self.close_main()
            if self.background:
                await asyncio.wait(self.background.values(), timeout=2 * REPLY_TIMEOUT_S)

    def beside(self, what: str, action: Callable[[], Awaitable[None]]) -> None:
        """Runs `action` in the background unless one of its kind still runs."""
        running = self.background.get(what)
        if running is not None and not running.done():
            return

        async def counted() -> None:
            try:
                await action()
            except Fault as fault:
                self.tally.fault(fault)

        self.background[what] = asyncio.create_task(counted())

    async def connect_main(self) -> None:
        self.ws = await self.open()
        welcome = await self.ask(self.hello(), "hello")
        if welcome["t"] != "welcome":
            raise Fault("abuse: its own hello was refused", repr(welcome))
        self.token, self.player = welcome["token"], welcome["player"]
        await self.new_own_game()

    async def close_main(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        self.ws = None

    async def open(self) -> ClientConnection:
        try:
            return await connect(self.soak.url, compression=None, max_size=None, open_timeout=30)
        except InvalidStatus as exc:
            status = exc.response.status_code
            raise Fault(f"abuse: handshake refused with {status}", "within the limits") from None
        except (OSError, TimeoutError) as exc:
            raise Fault("abuse: could not connect", str(exc)) from None

    def hello(self, **fields: Any) -> Message:
        msg: Message = {"t": "hello", "v": 1, "name": "abuser"}
        if self.token:
            msg["token"] = self.token
        return {**msg, **fields}

    # ------------------------------------------------------------ asking and expecting

    async def ask(
        self,
        msg: Message | bytes | str,
        what: str,
        ws: ClientConnection | None = None,
        rid: int | None = None,
    ) -> Message:
        """Sends a request on `ws` (default: the main connection) and returns its reply: the
        one with `re` = its id (a dict gets one; a frame made by hand says it in `rid`), or
        for a frame without one, the next error without `re`."""
        ws = ws or self.ws
        assert ws is not None
        if isinstance(msg, dict):
            rid = next(self._ids)
            msg = enc({**msg, "id": rid})
        try:
            await ws.send(msg)
            async with asyncio.timeout(REPLY_TIMEOUT_S):
                while True:
                    reply: dict[str, Any] = dec(await ws.recv(decode=False))
                    if reply.get("re") == rid and (rid is not None or reply["t"] == "error"):
                        return reply
        except TimeoutError:
            raise Fault(f"abuse {what}: no reply within {REPLY_TIMEOUT_S:g} s") from None
        except ConnectionClosed as exc:
            code = exc.rcvd.code if exc.rcvd else None
            raise Fault(f"abuse {what}: closed ({code}) instead of answered") from None

    async def refused(
        self, msg: Message | bytes | str, what: str, *codes: str, rid: int | None = None
    ) -> Message:
        """Sends `msg`, which must be refused with one of `codes`."""
        self.tally.abuse[what] += 1
        reply = await self.ask(msg, what, rid=rid)
        if reply["t"] == "error" and reply["code"] in codes:
            self.tally.refusals[reply["code"]] += 1
            return reply
        if reply["t"] in ("state", "hint") and reply.get("gid", "").split(".")[-1] != self.player:
            raise Fault("abuse: acted on another player's game", f"{what}: {reply['t']}")
        got = reply.get("code", reply["t"])
        raise Fault(f"abuse {what}: {got} instead of {'/'.join(codes)}", str(reply.get("msg")))

    async def closed_with(self, ws: ClientConnection, code: int, what: str) -> None:
        """Waits for the server to close `ws` with `code` (frames meanwhile are read)."""
        try:
            async with asyncio.timeout(REPLY_TIMEOUT_S + HELLO_TIMEOUT_S):
                while True:
                    await ws.recv()
        except ConnectionClosed as exc:
            got = exc.rcvd.code if exc.rcvd else None
            if got != code:
                raise Fault(f"abuse {what}: closed with {got} instead of {code}") from None
            self.tally.refusals[f"closed {code}"] += 1
        except TimeoutError:
            raise Fault(f"abuse {what}: not closed (expected {code})") from None

    # ------------------------------------------------------------ its own connection

    async def garbage(self) -> None:
        await self.refused(b"\xc1\xc1\xc1", "bytes that are not msgpack", "bad_request")
        truncated = enc({"t": "get", "gid": "x" * 20})[:-5]
        await self.refused(truncated, "truncated msgpack", "bad_request")

    async def not_a_map(self) -> None:
        await self.refused(enc([1, 2, 3]), "msgpack that is not a map", "bad_request")
        await self.refused(enc({1: "get"}), "a map without string keys", "bad_request")

    async def wrong_types(self) -> None:
        for msg in (
            {"t": "move", "gid": 123, "n": "zero", "m": None},
            {"t": 5},
            {"t": "teleport", "to": "moon"},
            {"t": "create", "game": "chess"},
            {"t": "hint"},
        ):
            await self.refused(msg, "wrong types", "bad_request")
            await asyncio.sleep(0.05)

    async def over_limits(self) -> None:
        gid = self.own["gid"]
        for msg in (
            {"t": "get", "gid": "r." + "A" * 200 + ".x"},
            {"t": "move", "gid": gid, "n": -1, "m": "deal"},
            {"t": "move", "gid": gid, "n": 10**9, "m": "deal"},
            {"t": "move", "gid": gid, "n": 0, "m": "t0-f0" * 10},
            {"t": "create", "game": "doublets", "max_players": 99},
            {"t": "create", "game": "doublets", "time_limit_s": 1},
            {"t": "create", "game": "doublets", "max_players": 2, "bots": 5},
        ):
            await self.refused(msg, "fields over their limits", "bad_request")
            await asyncio.sleep(0.05)

    async def deep(self) -> None:
        rid = next(self._ids)
        # {t: move, id: rid, gid: [[[...]]]}: built by hand, no encoder nests this deep.
        frame = b"\x83" + enc("t") + enc("move") + enc("id") + enc(rid) + enc("gid")
        frame += b"\x91" * 5000 + b"\xc0"
        await self.refused(frame, "a value nested too deeply", "bad_request", rid=rid)

    async def text_frame(self) -> None:
        await self.refused('{"t": "get"}', "a text frame", "bad_request")

    async def second_hello(self) -> None:
        await self.refused(self.hello(), "a second hello", "bad_request")

    # ------------------------------------------------------------ others' games and races

    async def others_games(self) -> None:
        if not self.tally.others:
            return
        gid = self.rng.choice(self.tally.others)
        for msg in (
            {"t": "move", "gid": gid, "n": 0, "m": "deal"},
            {"t": "get", "gid": gid},
            {"t": "resign", "gid": gid},
            {"t": "undo", "gid": gid},
            {"t": "hint", "gid": gid},
        ):
            await self.refused(msg, "another player's game", "not_found")
            await asyncio.sleep(0.05)

    async def forged_gid(self) -> None:
        """A race game of another player, with the gid's player part made its own."""
        races = [g for g in self.tally.others if g.startswith("r.")]
        if not races:
            return
        gid = self.rng.choice(races).rsplit(".", 1)[0] + "." + self.player
        await self.refused({"t": "move", "gid": gid, "n": 0, "m": "deal"}, "a forged gid",
                           "not_found")  # fmt: skip

    async def others_races(self) -> None:
        if not self.tally.races:
            return
        code = self.rng.choice(self.tally.races)
        self.tally.abuse["join a running race"] += 1
        reply = await self.ask({"t": "join", "race": code}, "join a running race")
        if reply["t"] == "lobby":  # finished meanwhile: anyone may look at it, seatless
            if self.player in [s["player"] for s in reply["players"]]:
                raise Fault("abuse: seated in a race that had started")
            self.tally.refusals["finished race shown, no seat"] += 1
        elif reply["t"] == "error" and reply["code"] == "race_started":
            self.tally.refusals["race_started"] += 1
        else:
            raise Fault(f"abuse join a running race: {reply.get('code', reply['t'])}")
        await self.refused({"t": "start", "race": code}, "start another's race", "not_host",
                           "race_started")  # fmt: skip

    # ------------------------------------------------------------ replays of old moves

    async def new_own_game(self) -> None:
        self.own = await self.ask({"t": "practice", "game": OWN_GAME}, "its own practice game")
        if self.own["t"] != "state":
            raise Fault("abuse: its own practice game was refused", repr(self.own))
        self.own_moves = []
        self.tally.acked[self.own["gid"]] = 0

    async def own_move(self) -> None:
        move = choose_move(self.own["view"], "easy", self.rng)
        n = self.own["n"]
        if move is None:
            raise Fault("abuse: its own game has no move left", f"at move {n}")
        reply = await self.ask({"t": "move", "gid": self.own["gid"], "n": n, "m": move}, "move")
        if reply["t"] != "state" or reply["n"] != n + 1:
            raise Fault("abuse: its own legal move was refused", repr(reply.get("msg")))
        self.own = reply
        self.own_moves.append(move)
        self.tally.acked[reply["gid"]] = reply["n"]

    async def replays(self) -> None:
        if self.own["finished"]:
            await self.new_own_game()
        while len(self.own_moves) < 2 and not self.own["finished"]:
            await self.own_move()
        if len(self.own_moves) < 2:
            return
        gid, n = self.own["gid"], self.own["n"]
        for k in (0, n - 1):  # the first move and the last, sent again
            self.tally.abuse["an old move sent again"] += 1
            reply = await self.ask({"t": "move", "gid": gid, "n": k, "m": self.own_moves[k]},
                                   "an old move sent again")  # fmt: skip
            if reply["t"] != "state" or reply["n"] != n:
                raise Fault("abuse: a retransmission was not answered with the current state",
                            repr(reply))  # fmt: skip
            self.tally.refusals["retransmission: current state, nothing stored"] += 1
        other = "deal" if self.own_moves[0] != "deal" else "c0-c1"
        await self.refused({"t": "move", "gid": gid, "n": 0, "m": other},
                           "another move at an old count", "out_of_order")  # fmt: skip
        await self.refused({"t": "move", "gid": gid, "n": n + 3, "m": self.own_moves[0]},
                           "a count ahead", "out_of_order")  # fmt: skip
        if not self.own["finished"]:
            await self.own_move()

    # ------------------------------------------------------------ connections of their own

    async def flood(self) -> None:
        # The server closes a flooding connection at once, but it may take the whole
        # close_timeout (10 s) to see the end of the TCP connection: in the background.
        self.beside("flood", self._flood)

    async def _flood(self) -> None:
        self.tally.abuse["flood"] += 1
        ws = await self.open()
        try:
            await self.ask(self.hello(), "flood's hello", ws)
            frame = enc({"t": "get", "gid": self.own["gid"]})
            limited = 0
            with contextlib.suppress(ConnectionClosed):
                for _ in range(FLOOD_FRAMES):
                    await ws.send(frame)
            try:
                async with asyncio.timeout(REPLY_TIMEOUT_S):
                    while True:
                        reply = dec(await ws.recv(decode=False))
                        limited += reply.get("code") == "rate_limited"
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd else None
                if code != 1008 or not limited:
                    msg = f"closed with {code} after {limited} rate_limited"
                    raise Fault("abuse flood: not refused as promised", msg) from None
                self.tally.refusals["rate_limited"] += limited
                self.tally.refusals["closed 1008"] += 1
            except TimeoutError:
                raise Fault("abuse flood: not closed") from None
        finally:
            await ws.close()

    async def oversized(self) -> None:
        self.tally.abuse["an oversized frame"] += 1
        ws = await self.open()
        try:
            await self.ask(self.hello(), "hello", ws)
            with contextlib.suppress(ConnectionClosed):
                await ws.send(os.urandom(OVERSIZED_BYTES))
            await self.closed_with(ws, 1009, "an oversized frame")
        finally:
            await ws.close()

    async def invalid_utf8(self) -> None:
        self.tally.abuse["invalid UTF-8 in a text frame"] += 1
        ws = await self.open()
        try:
            await self.ask(self.hello(), "hello", ws)
            with contextlib.suppress(ConnectionClosed):
                await ws.send(b"\xff\xfe\xfd", text=True)
            await self.closed_with(ws, 1007, "invalid UTF-8 in a text frame")
        finally:
            await ws.close()

    async def before_hello(self) -> None:
        self.tally.abuse["a request before hello"] += 1
        ws = await self.open()
        try:
            with contextlib.suppress(ConnectionClosed):
                await ws.send(enc({"t": "move", "gid": self.own["gid"], "n": 0, "m": "deal"}))
            await self.closed_with(ws, 1008, "a request before hello")
        finally:
            await ws.close()

    async def bad_hellos(self) -> None:
        ws = await self.open()
        try:
            for fields, code in (({"v": 2}, "unsupported_version"),
                                 ({"token": "f" * 64}, "auth_failed"),
                                 ({"name": ""}, "bad_request"),
                                 ({"name": "x" * 100}, "bad_request")):  # fmt: skip
                self.tally.abuse["a bad hello"] += 1
                reply = await self.ask(self.hello(**fields), "a bad hello", ws)
                if reply.get("code") != code:
                    raise Fault(f"abuse a bad hello: {reply.get('code', reply['t'])} not {code}")
                self.tally.refusals[code] += 1
            # The connection stays open: a good hello is still welcome.
            if (await self.ask(self.hello(), "hello after bad ones", ws))["t"] != "welcome":
                raise Fault("abuse: a good hello after bad ones was refused")
        finally:
            await ws.close()

    async def never_hello(self) -> None:
        """A connection that never says hello, watched in the background."""
        self.beside("never hello", self._never_hello)

    async def _never_hello(self) -> None:
        self.tally.abuse["a connection that never says hello"] += 1
        ws = await self.open()
        try:
            await self.closed_with(ws, 1008, "a connection that never says hello")
        finally:
            await ws.close()

    async def burst_of_connections(self) -> None:
        """`burst` connections at once: a third greets, a third sends garbage first, a
        third leaves at once."""
        self.tally.abuse["burst of connections"] += 1
        opened = await asyncio.gather(*(self.open() for _ in range(self.burst)),
                                      return_exceptions=True)  # fmt: skip
        conns = [c for c in opened if isinstance(c, ClientConnection)]
        try:
            for c in opened:
                if isinstance(c, BaseException):
                    raise c
            self.tally.refusals["burst: every handshake within the limits answered"] += 1
            greeted = conns[0::3]
            replies = await asyncio.gather(*(self.ask(self.hello(), "burst hello", c)
                                             for c in greeted))  # fmt: skip
            if any(r["t"] != "welcome" for r in replies):
                raise Fault("abuse burst: a hello with the token was refused")
            rude = conns[1::3]
            for c in rude:
                with contextlib.suppress(ConnectionClosed):
                    await c.send(b"\xc1")
            await asyncio.gather(*(self.closed_with(c, 1008, "garbage before hello")
                                   for c in rude))  # fmt: skip
        finally:
            await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
