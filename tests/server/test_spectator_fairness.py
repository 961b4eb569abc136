"""Spectators learn nothing a seat has not seen, in all four games, over real WebSockets.

A race of three seats kept far apart (ann far ahead, bob a little way, cy not at all), a
spectator, and ann herself watching her own race from a second connection. After every
move, each `seat` board that either receives is checked, at that moment, against the
tests' own account of the games' histories (tests/support/fairness.py): a card face up
only once every seat still playing has seen it, every other one counted face down in its
pile. So ann's watching connection never receives a card she had not seen. The race page
shows no other card; once the race is over, boards are shown in full. Baker's Game hides
nothing, so its boards are the seats' full views throughout.
"""

from __future__ import annotations

import random
import urllib.request
from typing import Any

import pytest
from helpers import close_all, seat_race
from support.fairness import SeatHistory, allowed, card_names, fair_view, shown
from support.server_proc import ServerProcess
from support.ws_client import Client

import engine
from server.edge.pages.replay_page import board_html

SEED = 4242


def page(server: ServerProcess, code: str) -> str:
    with urllib.request.urlopen(f"{server.http_url}/race/{code}", timeout=10) as reply:
        return reply.read().decode()


async def board_at(client: Client, player: str, n: int) -> dict[str, Any]:
    """The seat board of `player` after `n` moves (waiting for it), taken from the inbox."""
    return await client.take(
        lambda m: m.get("t") == "seat" and m["player"] == player and m["n"] == n
    )


def pick(game: Any, rng: random.Random) -> str:
    """A legal move, dealing more often than not: the stock is where the seats part."""
    moves = sorted(game.legal_moves())
    if "deal" in moves and rng.random() < 0.7:
        return "deal"
    return rng.choice(moves)


@pytest.mark.parametrize("game_id", engine.GAMES)
async def test_spectators_and_a_seat_watching_its_race_see_only_what_every_seat_has_seen(
    server: ServerProcess, game_id: str
) -> None:
    rng = random.Random(game_id)
    code, seats, _ = await seat_race(server.ws_url, ["ann", "bob", "cy"], game_id, SEED)
    ann, bob, cy = seats
    history = {s.client.player: SeatHistory.deal(game_id, SEED) for s in seats}
    sam = await Client.connect(server.ws_url)
    ann2 = await Client.connect(server.ws_url)
    watchers = (sam, ann2)
    hidden_seen = 0
    try:
        await sam.hello("sam")
        await ann2.hello("ann", token=ann.client.token)
        for w in watchers:
            first = await w.request({"t": "watch", "race": code})
            assert first["t"] == "lobby", first
            await w.next("start", race=code)
            for s in seats:
                board = await board_at(w, s.client.player, 0)
                assert board["view"] == fair_view(history[s.client.player].game.view(),
                                                  allowed(list(history.values())))  # fmt: skip

        async def move(seat: Any) -> None:
            nonlocal hidden_seen
            h = history[seat.client.player]
            if not h.playing:
                return
            m = pick(h.game, rng)
            reply = await seat.client.request(
                {"t": "move", "gid": seat.gid, "n": len(h.moves), "m": m}
            )
            assert reply["t"] == "state", reply
            h.play(m)
            cards = allowed(list(history.values()))
            want = fair_view(h.game.view(), cards)
            for w in watchers:
                board = await board_at(w, seat.client.player, len(h.moves))
                # Exactly the seat's view less what a seat still playing has not seen.
                assert board["view"] == want, (game_id, w.player, h.moves)
                if cards is not None:
                    assert shown(board["view"]) <= cards
                assert shown(board["view"]) <= history[ann.client.player].seen or not (
                    history[ann.client.player].playing
                ), "ann's own watch showed her a card she had not seen"
                hidden_seen += sum(board["view"]["hidden"].values()) - sum(
                    h.game.view()["hidden"].values()
                )

        for _ in range(3):
            for _ in range(8):
                await move(ann)
            await move(bob)
            # The page shows no card that a seat still playing has not seen.
            cards = allowed(list(history.values()))
            shown_on_page = card_names(page(server, code))
            assert shown_on_page, "the page names no card: the check below would be empty"
            if cards is not None:
                assert shown_on_page <= cards
        if game_id == "bakers_game":
            assert hidden_seen == 0, "Baker's Game hides nothing: boards are shown in full"
        else:
            assert hidden_seen > 0, "the seats never parted: the test shows nothing"

        # bob stops: his game no longer holds anything back.
        assert (await bob.client.request({"t": "resign", "gid": bob.gid}))["finished"]
        history[bob.client.player].playing = False
        for _ in range(4):
            await move(ann)
        for s in (cy, ann):
            if history[s.client.player].playing:
                reply = await s.client.request({"t": "resign", "gid": s.gid})
                assert reply["finished"], reply
        for w in watchers:
            await w.next("result", race=code)
        # Over: every board in full, on a new watch and on the page.
        again = await sam.request({"t": "watch", "race": code})
        assert again["t"] == "lobby"
        done = {m["player"]: m for m in await sam.quiet(0.3) if m.get("t") == "seat"}
        for s in seats:
            assert done[s.client.player]["view"] == history[s.client.player].game.view()
        text = page(server, code)
        for h in history.values():
            assert board_html(engine.render_text(h.game.view())) in text
    finally:
        await close_all([*seats])
        for w in watchers:
            await w.close()
