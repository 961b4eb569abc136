"""A race-playing client for the deploy tests (cluster, rolling restarts).

`Player` is a protocol-v1 client over real WebSockets that does what a good client does when
an instance goes away: on close 1001 (or a refused connection) it reconnects to the next
instance, says `hello` with its token, and resends an unanswered request; a resent move is
recognised by the server as a retransmission. Every move it saw acknowledged (a `state` reply)
is recorded, so a test can compare them with what the store holds.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack
import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

import engine

RECONNECT_TIMEOUT_S = 60.0


class ProtocolError(AssertionError):
    pass


@dataclass
class Player:
    name: str
    urls: list[str]  # instances, tried in turn from `first`
    first: int = 0
    rng: random.Random = field(default_factory=random.Random)
    token: str | None = None
    player: str | None = None
    ws: Any = None
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    acked: dict[str, list[str]] = field(default_factory=dict)  # gid -> acknowledged moves
    ack_times: list[float] = field(default_factory=list)  # time.monotonic() of each ack
    events: list[dict[str, Any]] = field(default_factory=list)
    close_codes: list[int | None] = field(default_factory=list)
    connects: list[str] = field(default_factory=list)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _turn: int = 0

    # -- connection

    async def connect(self) -> None:
        """Connect to the next reachable instance and say hello (with our token after the first)."""
        deadline = time.monotonic() + RECONNECT_TIMEOUT_S
        while True:
            url = self.urls[(self.first + self._turn) % len(self.urls)]
            self._turn += 1
            try:
                ws = await websockets.connect(url, open_timeout=5, max_size=2**20)
            except (OSError, InvalidHandshake, InvalidStatus, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.05)
                continue
            hello: dict[str, Any] = {"t": "hello", "v": 1, "name": self.name, "id": 0}
            if self.token:
                hello["token"] = self.token
            try:
                await ws.send(msgpack.packb(hello))
                welcome = await self._reply(ws, 0)
            except ConnectionClosed as exc:
                self.close_codes.append(exc.rcvd.code if exc.rcvd else None)
                await asyncio.sleep(0.05)
                continue
            if welcome["t"] != "welcome":
                raise ProtocolError(f"hello answered with {welcome}")
            self.token, self.player, self.ws = welcome["token"], welcome["player"], ws
            self.connects.append(url)
            for state in welcome["active"]:
                self.states[state["gid"]] = state
            return

    async def _reply(self, ws: Any, rid: int) -> dict[str, Any]:
        while True:
            msg = msgpack.unpackb(await asyncio.wait_for(ws.recv(), 30))
            if msg.get("re") == rid:
                return msg
            self._event(msg)

    def _event(self, msg: dict[str, Any]) -> None:
        self.events.append(msg)
        if msg["t"] == "state":
            known = self.states.get(msg["gid"])
            if known is None or msg["n"] >= known["n"]:
                self.states[msg["gid"]] = msg

    async def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        """Send and await the reply; across a close, reconnect and send it again."""
        while True:
            if self.ws is None:
                await self.connect()
            rid = next(self._ids)
            try:
                await self.ws.send(msgpack.packb({**msg, "id": rid}))
                reply = await self._reply(self.ws, rid)
            except ConnectionClosed as exc:
                self.close_codes.append(exc.rcvd.code if exc.rcvd else None)
                self.ws = None
                continue
            if reply["t"] == "error" and reply["code"] == "unavailable":
                await asyncio.sleep(0.1)  # the store or the instance is busy: try again
                continue
            if reply["t"] == "state":
                self._event({k: v for k, v in reply.items() if k != "re"})
            return reply

    async def wait_for(self, predicate: Any, timeout: float = 30) -> dict[str, Any]:
        """The first event (already received or next) for which predicate holds."""
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for msg in self.events[seen:]:
                if predicate(msg):
                    return msg
            seen = len(self.events)
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: event not seen; got {self.events[-5:]}")
            if self.ws is None:
                await self.connect()
                continue
            try:
                self._event(msgpack.unpackb(await asyncio.wait_for(self.ws.recv(), 1)))
            except TimeoutError:
                pass
            except ConnectionClosed as exc:
                self.close_codes.append(exc.rcvd.code if exc.rcvd else None)
                self.ws = None

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None

    # -- playing

    async def move(self, gid: str, m: str) -> dict[str, Any]:
        n = self.states[gid]["n"]
        reply = await self.request({"t": "move", "gid": gid, "n": n, "m": m})
        if reply["t"] != "state":
            raise ProtocolError(f"{self.name}: move {m!r} at n={n} answered {reply}")
        # Acknowledged: the server says it has stored the move, whatever happens next.
        self.acked.setdefault(gid, []).append(m)
        self.ack_times.append(time.monotonic())
        assert reply["n"] == n + 1, reply
        return reply

    async def play(
        self,
        gid: str,
        *,
        moves: int,
        pause_s: float,
        hold: asyncio.Event,
        allowed: Callable[[], int] | None = None,
    ) -> None:
        """Up to `moves` random legal moves, no more than `allowed()` at any time; once `hold`
        is set, resign if still playing."""
        made = 0
        while True:
            state = self.states[gid]
            if state["finished"] and hold.is_set():
                return
            cap = moves if allowed is None else min(moves, allowed())
            legal = (
                []
                if state["finished"] or made >= cap
                else engine.legal_moves_from_view(state["view"])
            )
            if legal:
                await self.move(gid, self.rng.choice(sorted(legal)))
                made += 1
                await asyncio.sleep(pause_s)
            elif hold.is_set() and not state["finished"]:
                reply = await self.request({"t": "resign", "gid": gid})
                if reply["t"] != "state" or not reply["finished"]:
                    raise ProtocolError(f"{self.name}: resign answered {reply}")
                return
            else:
                # Waiting, but still reading and talking, as a real client does: a restart of
                # our instance reaches us too, and we answer its close frame at once.
                reply = await self.request({"t": "get", "gid": gid})
                assert reply["t"] == "state", reply
                await asyncio.sleep(0.05)


async def race_code(host: Player, game: str, seed: int) -> str:
    created = await host.request({"t": "create", "game": game, "seed": seed, "max_players": 8})
    assert created["t"] == "created", created
    return created["race"]


async def seat_and_start(host: Player, others: list[Player], code: str) -> dict[str, str]:
    """Join everyone, start, and return each player's gid (from the `state` they are sent)."""
    for p in others:
        lobby = await p.request({"t": "join", "race": code})
        assert lobby["t"] == "lobby", lobby
    started = await host.request({"t": "start", "race": code})
    assert started["t"] == "start", started
    gids = {}
    for p in [host, *others]:
        state = await p.wait_for(lambda m: m["t"] == "state" and m.get("race") == code)
        gids[p.name] = state["gid"]
    return gids


@dataclass
class RollingRestart:
    """SIGTERM and restart each server in turn while `players` race, with their moves spread
    over the phases (before the first stop, between stops, after the last), `per_phase` at a
    time, so the race is really under way through every restart whatever the start-up time.

    Pass `allowed` to each player's `play`; `run()` sets `hold` when the last phase has a move.
    """

    players: list[Player]
    servers: list[Any]  # support.server_proc.ServerProcess
    per_phase: int = 3
    hold: asyncio.Event = field(default_factory=asyncio.Event)
    exit_codes: list[int | None] = field(default_factory=list)
    stopped_at: list[float] = field(default_factory=list)

    def allowed(self) -> int:
        return self.per_phase * (len(self.stopped_at) + 1)

    async def _a_move_acknowledged_since(self, t0: float) -> None:
        deadline = time.monotonic() + RECONNECT_TIMEOUT_S
        while not any(t > t0 for p in self.players for t in p.ack_times):
            assert time.monotonic() < deadline, "no move was acknowledged in this phase"
            await asyncio.sleep(0.05)

    async def run(self, before_first_stop: Callable[[], Any] | None = None) -> None:
        await self._a_move_acknowledged_since(float("-inf"))
        if before_first_stop is not None:
            await asyncio.to_thread(before_first_stop)
        for server in self.servers:
            self.stopped_at.append(time.monotonic())
            self.exit_codes.append(await asyncio.to_thread(server.stop))
            await asyncio.to_thread(server.start, 60)
            await self._a_move_acknowledged_since(self.stopped_at[-1])
        self.hold.set()

    def every_phase_had_a_move(self) -> bool:
        acks = sorted(t for p in self.players for t in p.ack_times)
        bounds = [float("-inf"), *self.stopped_at, float("inf")]
        return all(any(lo < t < hi for t in acks) for lo, hi in itertools.pairwise(bounds))
