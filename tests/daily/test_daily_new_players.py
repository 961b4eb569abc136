"""The day's board marks players made on its day (a player made to look at the deal first
stands out): over WebSockets, in the JSON and on the HTML page of a real server."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
import urllib.request

import redis.asyncio as aioredis
from support.server_proc import ServerFactory
from support.ws_client import Client

from server.store.keys import Keys

GAME = "hopscotch"


def get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read().decode()


def today_utc() -> dt.date:
    """Today's date, waiting out the last seconds of a day (a test must not straddle one)."""
    now = time.time()
    if now % 86_400 > 86_400 - 30:
        time.sleep(86_400 - now % 86_400 + 1)
    return dt.datetime.now(dt.UTC).date()


async def test_the_board_marks_players_made_on_its_day(
    servers: ServerFactory, redis: aioredis.Redis
) -> None:
    server = servers.start()
    day = today_utc().isoformat()
    keys = Keys(servers.namespace)
    players = {}
    for name in ("fresh", "veteran"):
        async with Client.connect(server.ws_url) as c:
            await c.hello(name)
            players[name] = c.player
            if name == "veteran":  # made two days ago
                two_days_ago = int((time.time() - 2 * 86_400) * 1000)
                await redis.hset(keys.player_meta(c.player), "created_ms", two_days_ago)
            state = await c.request({"t": "daily", "game": GAME, "confirm": True})
            await c.request({"t": "resign", "gid": state["gid"]})

    async with Client.connect(server.ws_url) as reader:
        await reader.hello("reader")
        board = await reader.request({"t": "leaderboard", "game": GAME})
    rows = {e["name"]: e for e in board["entries"]}
    assert rows["fresh"]["new"] is True and "new" not in rows["veteran"]
    page = json.loads(get(f"{server.http_url}/leaderboard/{GAME}/{day}.json"))
    assert {e["name"]: e.get("new", False) for e in page["entries"]} == {
        "fresh": True,
        "veteran": False,
    }
    html = get(f"{server.http_url}/leaderboard/{GAME}/{day}")
    rows_html = {m[1]: m[0] for m in re.findall(r"(<tr.*?<td class=name>(\w+).*?</tr>)", html)}
    assert sorted(rows_html) == ["fresh", "veteran"]
    assert 'class="new"' in rows_html["fresh"] and 'class="new"' not in rows_html["veteran"]
