"""The replay pages as a person sees them in a real headless Chromium: a past day's
leaderboard links each player's replay, the page steps through the game by its links
(and by keys, its one script allowed by the page's policy), every board the engine's."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import urllib.request
from pathlib import Path

from daily_browser import ensure_chromium, rendered_page
from support.server_proc import ServerFactory
from support.ws_client import Client
from test_daily_boards import http_get

import engine

GAME = "bakers_game"
SUITS = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}


def as_shown(board: str) -> str:
    """The engine's text board as the page spells cards: 10♦ for TD."""
    return re.sub(
        r"\b([A2-9TJQK])([CDHS])\b",
        lambda m: ("10" if m[1] == "T" else m[1]) + SUITS[m[2]],
        board,
    )


def http_get_json(url: str) -> dict:
    status, _, body = http_get(url)
    assert status == 200, (url, status, body)
    return json.loads(body)


def test_a_past_days_board_links_replays_that_step_through_the_game(
    servers: ServerFactory, tmp_path: Path
) -> None:
    chromium = ensure_chromium()
    behind = servers.start(env={"SOLITAIRE_CLOCK_OFFSET_S": str(-86400)})

    async def play() -> tuple[dict, list[str], str]:
        async with Client.connect(behind.ws_url) as c:
            await c.hello("<b>x</b> & co")
            state = await c.request({"t": "daily", "game": GAME, "confirm": True})
            moves = []
            for _ in range(5):
                legal = sorted(engine.legal_moves_from_view(state["view"]))
                if not legal or state["finished"]:  # a deal of this day may end sooner
                    break
                move = legal[0]
                state = await c.request(
                    {"t": "move", "gid": state["gid"], "n": state["n"], "m": move}
                )
                moves.append(move)
            if not state["finished"]:  # a deal may leave no move before: then it is over
                await c.request({"t": "resign", "gid": state["gid"]})
            return state, moves, c.player

    state, moves, player = asyncio.run(play())
    day, gid = state["date"], state["gid"]
    today = servers.start()

    # The past day's board: the name is a link to the replay.
    board = rendered_page(chromium, f"{today.http_url}/leaderboard/{GAME}/{day}")
    # (The player was made that day: the name cell also has its "new" badge, outside the link.)
    assert board.rows[0][1] == "<b>x</b> & co new" and board.bold == 0
    replay_href = dict(board.links)["<b>x</b> & co"]
    assert replay_href == f"/replay/{gid}"
    assert "links to the replay" in board.text

    status, _, body = http_get(f"{today.http_url}/replay/{gid}.json")
    assert status == 200
    seed = json.loads(body)["seed"]
    assert seed == http_get_json(f"{today.http_url}/leaderboard/{GAME}/{day}.json")["seed"]

    # The replay page at the deal, then two steps along its "Next" link.
    url = today.http_url + replay_href
    for n in range(3):
        page = rendered_page(chromium, url)
        assert page.headings == ["Baker's Game · replay"] and page.bold == 0
        assert "<b>x</b> & co's daily challenge of" in page.text
        assert f"Move {n} of {len(moves)}" in page.text
        how = "Resigned" if not state["finished"] else "Won" if state["won"] else "No moves left"
        played = f"{len(moves)} move{'' if len(moves) == 1 else 's'}"
        assert f"{how} · score {state['score']}/52 · {played}" in page.text
        assert "rank 1 of 1" in page.text and f"Deal seed {seed}" in page.text
        position = engine.replay(GAME, seed, moves[:n])
        assert page.pre == [as_shown(engine.render_text(position.view()))]
        assert (f"Move {n}: {moves[n - 1]}" if n else "The deal") in page.text
        # The keys' script ran (it writes its own hint): the page's policy let it, and only it.
        assert page.scripts == 1 and "Keys: ← → step" in page.text
        links = dict(page.links)
        assert links["Next ▶"] == f"/replay/{gid}?n={n + 1}"
        if n:
            assert links["◀ Back"] == f"/replay/{gid}?n={n - 1}"
            assert links["« Start"] == f"/replay/{gid}?n=0"
        assert links["End »"] == f"/replay/{gid}?n={len(moves)}"
        assert links["the day's leaderboard"] == f"/leaderboard/{GAME}/{day}"
        url = today.http_url + links["Next ▶"]

    # The policy names the script by its hash; nothing else may run.
    # (The last position: the day's deal may have ended before five moves.)
    last = len(moves)
    with urllib.request.urlopen(f"{today.http_url}/replay/{gid}?n={last}", timeout=10) as r:
        headers, body = r.headers, r.read().decode()
    script = re.search(r"<script>(.*?)</script>", body, re.S)[1]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    csp = headers["Content-Security-Policy"]
    assert f"script-src 'sha256-{digest}'" in csp and "default-src 'none'" in csp
    assert "unsafe-inline'; base" not in csp.split("script-src")[1]
    assert "Next ▶" in body and 'href="/replay/' in body
    for bad in (f"?n={last + 1}", "?n=-1", "?n=x"):
        assert http_get(f"{today.http_url}/replay/{gid}{bad}")[0] == 400
    assert player in body  # the gid names the player, as the leaderboard's JSON does
