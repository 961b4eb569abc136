"""Big boards through the real server, the HTTP side (JSON, 404s, metrics), and the HTML page
as a person sees it in a real headless Chromium."""

from __future__ import annotations

import datetime as dt
import json
import random
import time
import urllib.error
import urllib.request
from pathlib import Path

import redis.asyncio as aioredis
from daily_browser import ensure_chromium, rendered_page, screenshot
from support.server_proc import ServerFactory
from support.ws_client import Client

import engine
from server.daily.seeds import daily_seed
from server.store.boards import LeaderboardStore, Result
from server.store.keys import Keys

GAME = "quatorze"
# Names are at most 24 characters: these are as hostile as a name can be.
HOSTILE = ("<script>alert()</script>", "<b>x</b>", 'Zoë "&amp;" 🂡')


def http_get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def not_near_midnight() -> dt.date:
    """Today (UTC), after waiting out the real midnight if it is less than a minute away."""
    now = dt.datetime.now(dt.UTC)
    if now.time() > dt.time(23, 59):
        time.sleep(61 - now.second)
    return dt.datetime.now(dt.UTC).date()


def expected_ranks(results: list[Result]) -> tuple[list[str], dict[str, int]]:
    """Board order and rank of every player, computed independently of the server."""

    def key(r: Result) -> tuple[int, int, int]:
        return (-r.score, r.time_ms, r.moves)

    order = [r.player for _, r in sorted(enumerate(results), key=lambda x: (key(x[1]), x[0]))]
    counts: dict[tuple[int, int, int], int] = {}
    for r in results:
        counts[key(r)] = counts.get(key(r), 0) + 1
    better: dict[tuple[int, int, int], int] = {}
    seen = 0
    for k in sorted(counts):
        better[k] = seen
        seen += counts[k]
    return order, {r.player: better[key(r)] + 1 for r in results}


async def test_ranks_and_around_me_on_a_board_of_thousands(
    servers: ServerFactory, redis: aioredis.Redis
) -> None:
    server = servers.start()
    clients = [await Client.connect(server.ws_url) for _ in range(4)]
    try:
        for i, c in enumerate(clients):
            await c.hello(f"asker{i}")
        today = not_near_midnight().isoformat()
        rng = random.Random(5)
        # Few distinct values, so that long runs of exact ties sit everywhere on the board.
        results = [
            Result(f"fill{i:05d}", f"filler {i}", rng.randint(0, 6), rng.choice((5000, 9000)),
                   rng.randint(10, 12), False)
            for i in range(6000)
        ]  # fmt: skip
        # The askers' entries go at chosen places: top, deep in a tie, far down, last.
        for c, (score, t, moves) in zip(
            clients, ((52, 1000, 40), (3, 5000, 11), (0, 9000, 10), (0, 10**9, 9999)), strict=True
        ):
            mine = Result(c.player, c.welcome["name"], score, moves, t, score == 52)
            results.insert(rng.randint(0, len(results)), mine)
        store = LeaderboardStore(redis, Keys(servers.namespace))
        await store.record_day_many(GAME, today, results)
        order, rank = expected_ranks(results)

        top = await clients[1].request({"t": "leaderboard", "game": GAME, "limit": 100})
        assert top["total"] == len(results) and top["date"] == today
        assert [e["player"] for e in top["entries"]] == order[:100]
        assert [e["rank"] for e in top["entries"]] == [rank[p] for p in order[:100]]
        assert top["me"]["rank"] == rank[clients[1].player]

        for c in clients:
            pos = order.index(c.player)
            for limit in (10, 11):
                got = await c.request(
                    {"t": "leaderboard", "game": GAME, "limit": limit, "around_me": True}
                )
                start = min(max(0, pos - (limit - 1) // 2), len(order) - limit)
                assert [e["player"] for e in got["entries"]] == order[start : start + limit]
                assert [e["rank"] for e in got["entries"]] == [
                    rank[p] for p in order[start : start + limit]
                ]
                assert got["me"]["player"] == c.player and got["me"]["rank"] == rank[c.player]
        assert rank[clients[0].player] == 1
        assert rank[clients[3].player] == len(results)  # alone at the very bottom

        # An entry on today's board means the attempt is used up.
        again = await clients[0].request({"t": "daily", "game": GAME, "confirm": True})
        assert again["code"] == "already_played"

        # Bad requests are refused with the right codes.
        for bad, code in (
            ({"game": "chess"}, "bad_request"),
            ({"game": GAME, "date": "29-11-2026"}, "bad_request"),
            ({"game": GAME, "limit": 0}, "bad_request"),
            ({"game": GAME, "limit": 101}, "bad_request"),
            ({"game": GAME, "around_me": "yes"}, "bad_request"),
            ({"game": GAME, "date": "2999-01-01"}, "not_found"),
        ):
            err = await clients[0].request({"t": "leaderboard", **bad})
            assert err["t"] == "error" and err["code"] == code, (bad, err)

        # The JSON of the board has the same fields as the message (no `me`: no asker there).
        status, ctype, body = http_get(
            f"{server.http_url}/leaderboard/{GAME}/{today}.json?limit=20"
        )
        assert status == 200 and ctype.startswith("application/json")
        data = json.loads(body)
        assert (
            data["total"] == len(results) and [e["player"] for e in data["entries"]] == order[:20]
        )
        assert data["entries"] == top["entries"][:20]
        assert "seed" not in data and "me" not in data
    finally:
        for c in clients:
            await c.close()


async def test_leaderboard_page_in_a_real_browser(
    servers: ServerFactory, redis: aioredis.Redis, tmp_path: Path
) -> None:
    chromium = ensure_chromium()
    server = servers.start(env={"SOLITAIRE_SECRET": "page-test-secret"})
    today = not_near_midnight()
    yesterday = today - dt.timedelta(days=1)

    # Today: hostile names arrive the real way (hello, daily, resign).
    players = []
    for name in HOSTILE:
        c = await Client.connect(server.ws_url)
        await c.hello(name)
        st = await c.request({"t": "daily", "game": GAME, "confirm": True})
        if not st["finished"]:
            await c.request({"t": "resign", "gid": st["gid"]})
        players.append(c)
    for c in players:
        await c.close()
    # Yesterday: a finished board, written straight to the store.
    store = LeaderboardStore(redis, Keys(servers.namespace))
    rows = [("ada", 52, 61_000, 70), ("<b>x</b>", 40, 90_500, 80), ("bea", 40, 90_500, 80),
            ("<script>alert(1)</script>", 12, 3_723_400, 300)]  # fmt: skip
    for i, (name, score, t, moves) in enumerate(rows):
        await store.record_day(
            GAME, yesterday.isoformat(), Result(f"y{i}", name, score, moves, t, score == 52)
        )

    url = f"{server.http_url}/leaderboard/{GAME}/{yesterday.isoformat()}"
    page = rendered_page(chromium, url)
    assert page.scripts == 0 and page.bold == 0
    assert page.headings == ["Quatorze · daily challenge"]
    assert page.rows == [
        ["1", "ada", "52", "70", "1:01.0", "✓"],
        ["2", "<b>x</b>", "40", "80", "1:30.5", ""],
        ["2", "bea", "40", "80", "1:30.5", ""],
        ["4", "<script>alert(1)</script>", "12", "300", "1:02:03.4", ""],
    ]
    links = dict(page.links)
    before = yesterday - dt.timedelta(days=1)
    assert links[f"← {before.isoformat()}"] == f"/leaderboard/{GAME}/{before.isoformat()}"
    assert links[f"{today.isoformat()} →"] == f"/leaderboard/{GAME}/{today.isoformat()}"
    assert links["All time"] == f"/leaderboard/{GAME}/all"
    for other, title in (("doublets", "Doublets"), ("bakers_game", "Baker's Game"),
                         ("hopscotch", "Hopscotch")):  # fmt: skip
        assert links[title] == f"/leaderboard/{other}/{yesterday.isoformat()}"
    seed = daily_seed(b"page-test-secret", yesterday, GAME)
    assert f"deal seed {seed}" in page.text  # the day is over: its seed is published

    # Today's page: the hostile names are shown as text, nothing runs, no seed, no next day.
    today_url = f"{server.http_url}/leaderboard/{GAME}/{today.isoformat()}"
    page = rendered_page(chromium, today_url)
    assert page.scripts == 0 and page.bold == 0
    # ... each marked new: every one of these players was made today.
    assert sorted(r[1] for r in page.rows) == sorted(f"{name} new" for name in HOSTILE)
    assert "a player made on this day" in page.text  # the legend
    ranks = [int(r[0]) for r in page.rows]
    assert ranks[0] == 1 and ranks == sorted(ranks)
    assert "deal seed" not in page.text and "published when the day is over" in page.text
    assert not any(text.endswith("→") for text, _ in page.links)
    shot = screenshot(chromium, today_url, tmp_path / "today.png")
    assert shot.stat().st_size > 5000

    # Walking the links as a person would: the previous day's link leads to yesterday.
    prev = dict(page.links)[f"← {yesterday.isoformat()}"]
    assert rendered_page(chromium, server.http_url + prev).rows[0][1] == "ada"

    # The all-time page lists today's players (yesterday's were written to the day board only).
    page = rendered_page(chromium, f"{server.http_url}/leaderboard/{GAME}/all")
    assert sorted(r[1] for r in page.rows) == sorted(HOSTILE) and page.scripts == 0

    # Unknown games and bad dates are 404 with a short reason; so is a day not begun.
    for path in (f"/leaderboard/chess/{today}", f"/leaderboard/{GAME}/2026-02-30",
                 f"/leaderboard/{GAME}/yesterday", f"/leaderboard/{GAME}/9999-01-01",
                 f"/leaderboard/{GAME}/{today}/x", "/nothing-here"):  # fmt: skip
        status, ctype, body = http_get(server.http_url + path)
        assert status == 404 and ctype.startswith("text/plain"), (path, status)
        assert 0 < len(body) < 200
    status, _, body = http_get(f"{server.http_url}/leaderboard/{GAME}/{today}.json?limit=x")
    assert status == 400 and "limit" in body
    # The bare paths lead to today's board (urllib follows the redirect).
    with urllib.request.urlopen(f"{server.http_url}/leaderboard/{GAME}", timeout=10) as r:
        assert r.url.endswith(f"/leaderboard/{GAME}/{today.isoformat()}") and r.status == 200
    with urllib.request.urlopen(f"{server.http_url}/leaderboard", timeout=10) as r:
        assert r.url.endswith(f"/leaderboard/doublets/{today.isoformat()}")


async def test_metrics_count_what_happened(servers: ServerFactory) -> None:
    server = servers.start()
    async with Client.connect(server.ws_url) as c:
        await c.hello("counter")
        st = await c.request({"t": "daily", "game": "hopscotch", "confirm": True})
        ok = await c.request({"t": "move", "gid": st["gid"], "n": 0, "m": "deal"})
        assert ok["t"] == "state"
        # A well-formed move that is illegal on today's deal (which the solver picked).
        legal = engine.legal_moves_from_view(ok["view"])
        illegal = next(f"w-f{i}" for i in range(4) if f"w-f{i}" not in legal)
        bad = await c.request({"t": "move", "gid": st["gid"], "n": 1, "m": illegal})
        assert bad["code"] == "illegal_move"
        stale = await c.request({"t": "move", "gid": st["gid"], "n": 7, "m": "deal"})
        assert stale["code"] == "out_of_order"
        await c.request({"t": "leaderboard", "game": "hopscotch"})
        status, ctype, body = http_get(server.http_url + "/metrics")
    assert status == 200 and ctype.startswith("text/plain")
    values = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    assert values["solitaire_connections"] == 1
    assert values["solitaire_moves_accepted_total"] == 1
    assert values['solitaire_moves_rejected_total{code="illegal_move"}'] == 1
    assert values['solitaire_moves_rejected_total{code="out_of_order"}'] == 1
    assert values['solitaire_daily_attempts_started_total{game="hopscotch"}'] == 1
    assert values['solitaire_leaderboard_requests_total{via="ws"}'] == 1
    assert "solitaire_races_running" in values
    assert values["solitaire_redis_latency_seconds_count"] >= 1
    assert 0 < values["solitaire_redis_ping_seconds"] < 5
