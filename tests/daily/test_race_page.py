"""The race page, /race/CODE, as a person sees it in a real headless Chromium, while a race
runs and one of its players has a daily in progress: every seat's board live, nothing its
player cannot see, no seed, no daily's card; unknown races, dailies and races without
spectators refused."""

from __future__ import annotations

import datetime as dt
import re
import urllib.error
import urllib.request
from pathlib import Path

import redis.asyncio as aioredis
from daily_browser import ensure_chromium, rendered_page, screenshot
from support.fairness import SeatHistory, allowed, fair_view
from support.server_proc import ServerFactory
from support.ws_client import Client

import engine
from server.store.keys import Keys

GAME = "quatorze"
SEED = 1_234_567
HOSTILE = "<b>x</b> & <i>"  # a name that must stay text


def http_get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def card_names(text: str) -> set[str]:
    """The cards a text names, as letter codes (AC) or as the pages write them (A♣, 10♥)."""
    codes = set(re.findall(r"\b[A2-9TJQK][CDHS]\b", text))
    symbols = {v: k for k, v in SUITS.items()}
    for rank, suit in re.findall(r"(10|[A2-9JQK])([♣♦♥♠])", text):
        codes.add(("T" if rank == "10" else rank) + symbols[suit])
    return codes


def as_on_the_pages(drawing: str) -> str:
    """The engine's text drawing with its cards written as the web pages write them: 10♥
    for TH (the replay page's style), face-down cards and empty piles as they are."""
    return re.sub(
        r"\b([A2-9TJQK])([CDHS])\b",
        lambda m: ("10" if m.group(1) == "T" else m.group(1)) + SUITS[m.group(2)],
        drawing,
    )


async def test_the_race_page_shows_every_board_live_and_nothing_hidden(
    servers: ServerFactory, redis: aioredis.Redis, tmp_path: Path
) -> None:
    chromium = ensure_chromium()
    server = servers.start()
    ann, bob = await Client.connect(server.ws_url), await Client.connect(server.ws_url)
    try:
        await ann.hello("ann")
        await bob.hello(HOSTILE)
        # ann's daily in progress, beside the race.
        daily = await ann.request({"t": "daily", "game": GAME, "confirm": True}, timeout=60)
        today = dt.datetime.now(dt.UTC).date().isoformat()
        daily_seed = int(await redis.hget(Keys(servers.namespace).day_deal(GAME, today), "seed"))
        move = sorted(engine.replay(GAME, daily_seed, []).legal_moves())[0]
        assert (await ann.request({"t": "move", "gid": daily["gid"], "n": 0, "m": move}))["n"] == 1

        code = (await ann.request({"t": "create", "game": GAME, "seed": SEED}))["race"]
        page = server.http_url + f"/race/{code.lower()}"
        # The lobby: the players, no board yet.
        status, headers, html = http_get(page)
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert 'http-equiv="refresh"' in html and "<pre>" not in html
        await bob.request({"t": "join", "race": code})
        await ann.request({"t": "start", "race": code})
        histories = {c.player: SeatHistory.deal(GAME, SEED) for c in (ann, bob)}
        games = {pl: h.game for pl, h in histories.items()}
        gids = {c.player: (await c.next("state", race=code))["gid"] for c in (ann, bob)}
        for c, count in ((ann, 4), (bob, 1)):
            game = games[c.player]
            for n in range(count):
                m = sorted(game.legal_moves())[0]
                reply = await c.request({"t": "move", "gid": gids[c.player], "n": n, "m": m})
                assert reply["t"] == "state"
                histories[c.player].play(m)

        status, headers, html = http_get(page)
        assert status == 200
        assert headers["Cache-Control"] == "no-store"
        assert "script-src" not in headers["Content-Security-Policy"]
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert '<meta http-equiv="refresh" content="2">' in html
        seen = rendered_page(chromium, page)
        assert seen.scripts == 0 and seen.bold == 0  # the hostile name stayed text
        assert seen.headings == [f"Quatorze · race {code}"]
        assert HOSTILE in seen.text and "Running · 2 players" in seen.text
        # One board per seat in seat order, each the engine's drawing of the seat's own
        # public view less the cards the other seat had not seen (both still play): its
        # face-down stock is a count, none of its cards named.
        cards = allowed(list(histories.values()))
        expected = [
            as_on_the_pages(engine.render_text(fair_view(games[c.player].view(), cards)))
            for c in (ann, bob)
        ]
        assert seen.pre == expected
        assert not re.search(r"\b[A2-9TJQK][CDHS]\b", "".join(seen.pre))  # no letter codes
        assert 'class="c red"' in html  # red suits in red, as on the replay page
        for board, c in zip(seen.pre, (ann, bob), strict=True):
            game = games[c.player]
            hidden = {card for pile in game.HIDDEN for card in game.piles[pile]}
            assert hidden and not card_names(board) & hidden
        assert "score 8 / 52 · moves 4" in seen.text
        for secret in (SEED, daily_seed):
            assert str(secret) not in html
        assert "seed" not in seen.text.lower()
        screenshot(chromium, page, tmp_path / "race.png")

        # Bad addresses: the protocol's answers, nothing shown.
        private = await bob.request({"t": "create", "game": GAME, "spectators": False})
        for path, want in (
            (f"/race/{private['race']}", 403),
            ("/race/ZZZZZZZZZZZZ", 404),
            (f"/race/{daily['gid']}", 404),  # a daily is no race
            (f"/race/{gids[ann.player]}", 404),
            ("/race/", 404),
            (f"/race/{code}/x", 404),
            ("/race/%00", 404),
        ):
            status, _headers, body = http_get(server.http_url + path)
            assert status == want, (path, status, body)
            assert not card_names(body) and "<" not in body, body

        # Over: the standings, the final boards, and the page stops reloading.
        for c in (bob, ann):
            assert (await c.request({"t": "resign", "gid": gids[c.player]}))["finished"]
        await ann.next("result", race=code)
        status, _headers, html = http_get(page)
        assert status == 200 and "refresh" not in html
        seen = rendered_page(chromium, page)
        assert [row[:2] for row in seen.rows] == [["1", "ann"], ["2", HOSTILE]]
        # Over: every board in full, nothing held back any more.
        full = [as_on_the_pages(engine.render_text(games[c.player].view())) for c in (ann, bob)]
        assert seen.pre == full
        assert "Finished" in seen.text and str(SEED) not in html
        # Every seat's replay is linked, by its line in the standings.
        replays = [href for text, href in seen.links if text == "replay"]
        assert replays == [f"/replay/{code}:1", f"/replay/{code}:2"]
        for href in replays:
            assert http_get(server.http_url + href)[0] == 200
        assert "asked for a rematch" not in seen.text
        # Once bob asks for a rematch, the page links it.
        rematch = await bob.request({"t": "rematch", "race": code})
        assert rematch["t"] == "created"
        seen = rendered_page(chromium, page)
        assert (f"race {rematch['race']}", f"/race/{rematch['race']}") in seen.links
        assert f"{HOSTILE} asked for a rematch" in seen.text
    finally:
        await ann.close()
        await bob.close()
