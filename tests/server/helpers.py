"""Small helpers for the server tests: seating a race, playing legal moves."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

from support.ws_client import Client
from websockets.exceptions import ConnectionClosed

import engine


@dataclass
class Seat:
    client: Client
    gid: str = ""
    game: Any = None  # our own engine replay of what we sent and the server accepted
    moves: list[str] = field(default_factory=list)

    async def play(self, move: str | None = None) -> dict[str, Any]:
        """Send one legal move (the first legal one unless given); return the reply."""
        m = move if move is not None else sorted(self.game.legal_moves())[0]
        reply = await self.client.request(
            {"t": "move", "gid": self.gid, "n": len(self.moves), "m": m}
        )
        if reply["t"] == "state":
            self.game.play(m)
            self.moves.append(m)
        return reply


async def seat_race(
    url: str | list[str],
    names: list[str],
    game: str = "quatorze",
    seed: int = 7,
    **create: Any,
) -> tuple[str, list[Seat], list[dict[str, Any]]]:
    """Connect one client per name (round-robin over `url`s), create a race, seat all, start.

    Returns (race code, seats, the state each seat received after `start`).
    """
    urls = [url] if isinstance(url, str) else url
    clients = []
    for i, name in enumerate(names):
        c = await Client.connect(urls[i % len(urls)])
        assert (await c.hello(name))["t"] == "welcome"
        clients.append(c)
    host = clients[0]
    created = await host.request({"t": "create", "game": game, "seed": seed, **create})
    assert created["t"] == "created", created
    code = created["race"]
    for c in clients[1:]:
        lobby = await c.request({"t": "join", "race": code})
        assert lobby["t"] == "lobby", lobby
    # Everyone has seen the full lobby before the start (the last joiner in its reply).
    for c in clients[:-1]:
        await c.take(lambda m: m.get("t") == "lobby" and len(m["players"]) == len(names))
    start = await host.request({"t": "start", "race": code})
    assert start["t"] == "start", start
    seats, states = [], []
    for c in clients:
        if c is not host:
            await c.next("start", race=code)
        st = await c.next("state", race=code)
        states.append(st)
        seats.append(Seat(c, st["gid"], engine.new_game(game, seed)))
    return code, seats, states


async def close_all(seats: list[Seat]) -> None:
    for s in seats:
        await s.client.close()


async def play_until_cut(client: Client, gid: str, game: str, seed: int, log: dict) -> None:
    """Play legal moves as fast as replies come; record what was sent and what acknowledged."""
    g = engine.new_game(game, seed)
    with contextlib.suppress(ConnectionClosed, ConnectionError, TimeoutError, OSError):
        while g.legal_moves():
            m = sorted(g.legal_moves())[0]
            log["in_flight"] = m
            reply = await client.request({"t": "move", "gid": gid, "n": len(log["acked"]), "m": m})
            if reply.get("code") == "unavailable":  # the server is shutting down
                return
            assert reply["t"] == "state", reply
            g.play(m)
            log["acked"].append(m)
            log["in_flight"] = None
