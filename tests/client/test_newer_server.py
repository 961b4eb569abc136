"""The client reads the server's messages into the protocol's structs and builds its
requests from them, and stays tolerant of a later server: fields it adds are ignored, a
message type it does not know is passed over, and neither drops the connection.

The later server is the real one behind a relay (a real WebSocket server in this process)
that adds fields to every message, also inside its lists, and follows every state with
an event of a type no version of this client knows.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from client_deals import QUATORZE_SEED, QUATORZE_WIN
from client_harness import Bot
from support.server_proc import ServerProcess
from websockets.asyncio.client import connect
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

import protocol as p

UNKNOWN_EVENT = {"t": "chat", "from": "the server", "text": "a message of a later version"}
# An unknown type that answers no request of this client (its ids start at 0 and 1).
UNKNOWN_REPLY = {"t": "poll", "re": 2**40, "question": "?"}
LATER_FIELDS = {"shiny": {"since": 2, "flags": ["a", "b"]}, "season": 7}
NESTED = ("players", "standings", "entries")


def later(message: dict[str, Any]) -> dict[str, Any]:
    """The message as a later server might send it: more fields, also in its rows."""
    out = {**message, **LATER_FIELDS}
    for key in NESTED:
        if isinstance(out.get(key), list):
            out[key] = [{**row, "badge": "gold"} for row in out[key]]
    if isinstance(out.get("active"), list):
        out["active"] = [later(state) for state in out["active"]]
    return out


class LaterServer:
    """The relay, on its own event loop in a thread (the bots are read synchronously)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="relay", daemon=True)
        self.server: Server | None = None

    def __enter__(self) -> LaterServer:
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(10)
        return self

    async def _serve(self) -> Server:
        return await serve(self._relay, "127.0.0.1", 0, compression=None)

    def __exit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        asyncio.run_coroutine_threadsafe(self.server.wait_closed(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)

    @property
    def url(self) -> str:
        assert self.server is not None
        port = next(iter(self.server.sockets)).getsockname()[1]
        return f"ws://127.0.0.1:{port}/ws"

    async def _relay(self, client: ServerConnection) -> None:
        async with connect(self.upstream, compression=None) as upstream:

            async def up() -> None:
                async for frame in client:
                    await upstream.send(frame)

            async def down() -> None:
                async for frame in upstream:
                    assert isinstance(frame, bytes)
                    message = msgspec.msgpack.decode(frame)
                    await client.send(msgspec.msgpack.encode(later(message)))
                    if message["t"] == "state":
                        await client.send(msgspec.msgpack.encode(UNKNOWN_EVENT))
                        await client.send(msgspec.msgpack.encode(UNKNOWN_REPLY))

            tasks = [asyncio.create_task(up()), asyncio.create_task(down())]
            with contextlib.suppress(ConnectionClosed):
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                    await task


@pytest.fixture
def relay(server: ServerProcess) -> Iterator[LaterServer]:
    with LaterServer(server.ws_url) as relay:
        yield relay


@pytest.fixture
def bots() -> Iterator[list[Bot]]:
    started: list[Bot] = []
    yield started
    for bot in started:
        bot.kill()


def finish(bot: Bot) -> None:
    """The bot leaves cleanly, having never lost its connection or seen a foreign type."""
    bot.close_input()
    assert bot.wait() == 0
    stderr = bot.proc.stderr.read() if bot.proc.stderr else ""
    assert "Traceback" not in stderr, stderr
    kinds = {m["t"] for m in bot.seen}
    assert not kinds & {"chat", "poll", "status"}, bot.seen


def test_a_practice_game_is_played_through_a_later_server(
    relay: LaterServer, bots: list[Bot], tmp_path: Path
) -> None:
    bot = Bot(tmp_path / "p", "--server", relay.url, "practice", "quatorze",
              "--seed", str(QUATORZE_SEED))  # fmt: skip
    bots.append(bot)
    state = bot.next("state")
    assert (state["kind"], state["n"], state["seed"]) == ("practice", 0, QUATORZE_SEED)
    # Read into the protocol's State: what this version knows of it, nothing more.
    assert "shiny" not in state and "season" not in state
    for n, move in enumerate(QUATORZE_WIN[:3], start=1):
        assert move in state["legal"]
        bot.send(move)
        state = bot.next("state")
        assert state["n"] == n
    bot.send("hint")
    hint = bot.next("hint")
    assert hint["n"] == 3 and hint["verdict"] in ("won", "unwinnable", "gave_up")
    bot.send("undo")
    assert bot.next("state")["n"] == 2
    finish(bot)


def test_a_race_is_played_through_a_later_server(
    server: ServerProcess, relay: LaterServer, bots: list[Bot], tmp_path: Path
) -> None:
    """The host goes through the relay, the guest straight to the server: both read the
    same lobby and the same result."""
    host = Bot(tmp_path / "host", "--server", relay.url, "--name", "hostbot",
               "race", "new", "quatorze", "--seed", str(QUATORZE_SEED))  # fmt: skip
    bots.append(host)
    code = host.next("created")["race"]
    guest = Bot(tmp_path / "guest", "--server", server.ws_url, "--name", "guestbot",
                "race", "join", code)  # fmt: skip
    bots.append(guest)
    lobby = host.next("lobby")
    while len(lobby["players"]) < 2:
        lobby = host.next("lobby")
    assert lobby == guest.next("lobby")
    host.send("start")
    assert host.next("start")["race"] == code
    assert host.next("state")["n"] == 0 and guest.next("state")["n"] == 0
    host.send(QUATORZE_WIN[0])
    assert host.next("state")["n"] == 1
    assert guest.next("progress")["moves"] == 1
    host.send("resign")
    guest.send("resign")
    result = host.next("result")
    assert {s["name"] for s in result["standings"]} == {"hostbot", "guestbot"}
    assert result == guest.next("result")
    finish(host)
    finish(guest)


def frame(message: dict[str, Any]) -> bytes:
    return msgspec.msgpack.encode(message)


STATE = {"t": "state", "gid": "p.quatorze.x.me", "kind": "practice", "game": "quatorze",
         "n": 0, "view": {"game": "quatorze"}, "score": 0, "won": False, "over": False,
         "finished": False, "elapsed_ms": 0, "seed": 5}  # fmt: skip


def test_the_message_decoder_is_tolerant_of_later_servers_and_strict_with_broken_ones() -> None:
    decoder = p.MessageDecoder()
    state = decoder.decode(frame({**STATE, "re": 4, **LATER_FIELDS}))
    assert isinstance(state, p.State) and (state.re, state.seed) == (4, 5)
    assert state.view == {"game": "quatorze"}
    # A later kind of game still reads (the client leaves it alone).
    tournament = decoder.decode(frame({**STATE, "kind": "tournament"}))
    assert isinstance(tournament, p.State) and tournament.kind == "tournament"
    assert decoder.decode(frame(UNKNOWN_EVENT)) == p.UnknownMessage("chat")
    assert decoder.decode(frame({**UNKNOWN_EVENT, "re": 9})) == p.UnknownMessage("chat", 9)
    assert decoder.decode(frame({**STATE, "re": 4, "n": "zero"})) == p.BadFrame(
        "bad state: Expected `int`, got `str` - at `$.n`", 4, "state"
    )
    assert decoder.decode(frame({**STATE, "view": [1, 2]})) == p.BadFrame(
        "bad state: a state's `view` must be a map", None, "state"
    )
    welcome = {"t": "welcome", "re": 0, "v": 1, "player": "ab", "name": "me", "token": "x",
               "active": [{**STATE, "view": 3}]}  # fmt: skip
    assert decoder.decode(frame(welcome)) == p.BadFrame(
        "bad welcome: a state's `view` must be a map", 0, "welcome"
    )
    assert decoder.decode(frame([1, 2])).t is None  # no message at all
    assert decoder.decode(frame({"re": 1})) == p.BadFrame("message has no type field `t`", 1)


def test_requests_go_out_as_the_documented_maps_and_the_server_decodes_them() -> None:
    """Optional fields the client leaves unset are absent from the frame, not nil."""
    requests: list[tuple[p.Request, dict[str, Any]]] = [
        (p.Hello(id=0, v=1, name="ann"), {"t": "hello", "id": 0, "v": 1, "name": "ann"}),
        (p.Create(id=3, game="quatorze"), {"t": "create", "id": 3, "game": "quatorze"}),
        (p.Create(id=4, game="doublets", time_limit_s=60, bots=1, bot_strength="hard"), {
            "t": "create", "id": 4, "game": "doublets", "time_limit_s": 60, "bots": 1,
            "bot_strength": "hard"}),
        (p.Move(id=5, gid="r.X.me", n=0, m="c0-c15"), {
            "t": "move", "id": 5, "gid": "r.X.me", "n": 0, "m": "c0-c15"}),
        (p.Leaderboard(id=6, game="hopscotch", limit=11, around_me=True), {
            "t": "leaderboard", "id": 6, "game": "hopscotch", "limit": 11, "around_me": True}),
        (p.Stats(id=7), {"t": "stats", "id": 7}),
    ]  # fmt: skip
    decoder = p.RequestDecoder(p.DEFAULT_LIMITS)
    for request, sent in requests:
        assert msgspec.msgpack.decode(p.encode(request)) == sent
        assert decoder.decode(p.encode(request)) == request
