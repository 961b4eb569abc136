"""`hello {legal: true}`: every state the connection is sent for the player's own games
carries `legal`, the engine's legal moves of the real position (checked here against a game
replayed on the side, not against the view the server derives them from); `[]` once the game
is finished; connections that did not ask see no `legal` anywhere."""

from __future__ import annotations

from support.server_proc import ServerProcess
from support.ws_client import Client

import engine

GAME = "quatorze"
SEED = 424_242


async def test_legal_comes_with_every_state_of_a_connection_that_asks(
    server: ServerProcess,
) -> None:
    web = await Client.connect(server.ws_url)
    plain = await Client.connect(server.ws_url)
    try:
        await web.hello("ann", legal=True)
        code = (await web.request({"t": "create", "game": GAME, "seed": SEED}))["race"]
        # The same player on a second connection without `legal`.
        await plain.hello("ann", token=web.token)
        start = await web.request({"t": "start", "race": code})
        assert start["t"] == "start"
        state = await web.next("state", race=code)
        truth = engine.new_game(GAME, SEED)
        assert sorted(state["legal"]) == sorted(truth.legal_moves()) and state["legal"]
        plain_state = await plain.next("state", race=code)
        assert "legal" not in plain_state

        for n in range(3):
            move = sorted(truth.legal_moves())[-1]
            reply = await web.request({"t": "move", "gid": state["gid"], "n": n, "m": move})
            truth.play(move)
            assert reply["t"] == "state" and reply["n"] == n + 1
            assert sorted(reply["legal"]) == sorted(truth.legal_moves())
            event = await plain.next("state", race=code)  # the other connection's copy
            assert event["n"] == n + 1 and "legal" not in event
        # A move from the plain connection reaches the web one as an event, with legal.
        move = sorted(truth.legal_moves())[0]
        reply = await plain.request({"t": "move", "gid": state["gid"], "n": 3, "m": move})
        truth.play(move)
        assert "legal" not in reply
        event = await web.next("state", race=code)
        assert event["n"] == 4 and sorted(event["legal"]) == sorted(truth.legal_moves())

        # A reconnect: welcome.active's states carry it too, and only where asked.
        again = await Client.connect(server.ws_url)
        try:
            welcome = await again.hello("ann", token=web.token, legal=True)
            (active,) = [s for s in welcome["active"] if s["gid"] == state["gid"]]
            assert sorted(active["legal"]) == sorted(truth.legal_moves())
        finally:
            await again.close()
        assert all("legal" not in s for s in plain.welcome["active"])

        final = await web.request({"t": "resign", "gid": state["gid"]})
        assert final["finished"] and final["legal"] == []
    finally:
        await web.close()
        await plain.close()


async def test_a_practice_game_and_its_undo_carry_legal(server: ServerProcess) -> None:
    async with Client.connect(server.ws_url) as c:
        await c.hello("bea", legal=True)
        state = await c.request({"t": "practice", "game": "bakers_game", "seed": 7})
        truth = engine.new_game("bakers_game", 7)
        assert sorted(state["legal"]) == sorted(truth.legal_moves())
        move = sorted(truth.legal_moves())[0]
        moved = await c.request({"t": "move", "gid": state["gid"], "n": 0, "m": move})
        assert moved["legal"] != state["legal"] or moved["view"] != state["view"]
        undone = await c.request({"t": "undo", "gid": state["gid"]})
        assert undone["n"] == 0 and sorted(undone["legal"]) == sorted(truth.legal_moves())
