"""Winnable dailies: every game's deal is proven winnable ahead of time, stored once for all
instances, won by replaying its line through the server, and published with its par."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
import time
import urllib.request
from typing import Any

import redis.asyncio as aioredis
from support.server_proc import ServerFactory
from support.ws_client import Client

import engine
from engine.solve import next_seed, solve
from server.config import DEFAULT
from server.daily.seeds import daily_seed

FAST = {"SOLITAIRE_RATE": "1000", "SOLITAIRE_BURST": "1000"}
DAY_S = 86_400


def deal_key(ns: str, game: str, date: dt.date) -> str:
    return f"{{{ns}:day:{game}:{date.isoformat()}}}:deal"


async def wait_for_deals(
    redis: aioredis.Redis, ns: str, dates: list[dt.date], timeout: float = 150
) -> dict[tuple[str, dt.date], dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while True:
        deals = {
            (game, date): await redis.hgetall(deal_key(ns, game, date))
            for game in engine.GAMES
            for date in dates
        }
        if all(deals.values()):
            return deals
        missing = [k for k, v in deals.items() if not v]
        assert time.monotonic() < deadline, f"deals not prepared in time: {missing}"
        await asyncio.sleep(0.3)


def check_deal(secret: bytes, game: str, date: dt.date, deal: dict[str, Any]) -> list[str]:
    """The stored deal is the first candidate from the day's HMAC seed that the solver
    proves winnable, and its line wins it on the engine."""
    assert deal["proven"] == "1", (game, date, deal)
    seed, tried = int(deal["seed"]), int(deal["candidates"])
    assert 1 <= tried <= DEFAULT.daily_max_candidates
    candidate = daily_seed(secret, date, game)
    skipped = []
    for _ in range(tried - 1):
        skipped.append(candidate)
        candidate = next_seed(candidate)
    assert candidate == seed, (game, date, deal)
    line = deal["line"].split()
    assert int(deal["par"]) == len(line) > 0
    assert engine.replay(game, seed, line).won, (game, date)
    if game == "bakers_game":
        # The node budget makes the search deterministic: the skipped deals are not won
        # within it on this machine either (Baker's Game answers fast, so it is cheap to check).
        for s in skipped:
            verdict = solve(game, s, budget_nodes=DEFAULT.daily_budget_nodes).verdict
            assert verdict != "won", (game, date, s)
    return line


async def test_every_daily_is_proven_winnable_agreed_won_and_published_with_par(
    servers: ServerFactory, redis: aioredis.Redis
) -> None:
    ns = servers.namespace
    # Two instances start together on one store; each prepares today's and tomorrow's deals.
    a = servers.start(env=FAST)
    b = servers.start(env=FAST)
    today = dt.datetime.now(dt.UTC).date()
    if (dt.datetime.now(dt.UTC) + dt.timedelta(minutes=3)).date() != today:
        time.sleep(200)  # too close to midnight for one "today" throughout; wait past it
        today = dt.datetime.now(dt.UTC).date()
    tomorrow = today + dt.timedelta(days=1)
    deals = await wait_for_deals(redis, ns, [today, tomorrow])
    secret = (await redis.hget(f"{{{ns}:server}}:config", "secret")).encode()
    lines = {key: check_deal(secret, *key, deal) for key, deal in deals.items()}
    # Searched once per (game, date), whichever instance got there first.
    logs = a.log_text() + b.log_text()
    for game, date in deals:
        assert len(re.findall(rf"daily deal {game} {date}: searching", logs)) == 1, game

    # Players on either instance get the same deal; replaying its line through the server wins.
    async with Client.connect(a.ws_url) as alice, Client.connect(b.ws_url) as bob:
        await alice.hello("alice")
        await bob.hello("bob")
        for game in engine.GAMES:
            seed = int(deals[(game, today)]["seed"])
            on_a = await alice.request({"t": "daily", "game": game, "confirm": True}, timeout=60)
            on_b = await bob.request({"t": "daily", "game": game, "confirm": True}, timeout=60)
            assert on_a["view"] == on_b["view"] == engine.new_game(game, seed).view()
            state = on_a
            for n, move in enumerate(lines[(game, today)]):
                state = await alice.request({"t": "move", "gid": on_a["gid"], "n": n, "m": move})
                assert state["t"] == "state", (game, n, move, state)
            assert state["won"] and state["finished"], game

    # Once the day is over (an instance whose clock is a day ahead), its board shows the seed,
    # the winning line and par; that instance prepares the day after tomorrow as well.
    later = servers.start(env={**FAST, "SOLITAIRE_CLOCK_OFFSET_S": str(DAY_S)})
    day_after = tomorrow + dt.timedelta(days=1)
    more = await wait_for_deals(redis, ns, [day_after])
    for key, deal in more.items():
        check_deal(secret, *key, deal)
    async with Client.connect(later.ws_url) as carol:
        await carol.hello("carol")
        for game in engine.GAMES:
            deal = deals[(game, today)]
            board = await carol.request(
                {"t": "leaderboard", "game": game, "date": today.isoformat()}
            )
            assert board["seed"] == int(deal["seed"])
            assert board["par"] == int(deal["par"]) and board["line"] == deal["line"].split()
            assert [e["name"] for e in board["entries"]][:1] == ["alice"]
            current = await carol.request({"t": "leaderboard", "game": game})
            assert "par" not in current and "line" not in current and "seed" not in current
            url = f"{later.http_url}/leaderboard/{game}/{today.isoformat()}"
            with urllib.request.urlopen(url + ".json", timeout=10) as r:
                page_json = json.load(r)
            assert page_json["par"] == board["par"] and page_json["line"] == board["line"]
            with urllib.request.urlopen(url, timeout=10) as r:
                html = r.read().decode()
            assert f"Par {board['par']}" in html and " ".join(board["line"]) in html


async def test_no_winnable_candidate_falls_back_to_the_hmac_seed_loudly(
    servers: ServerFactory, redis: aioredis.Redis
) -> None:
    # A fixed secret, and a day whose first Baker's Game candidate is proven unwinnable.
    secret = "fallback-test-secret"
    today = dt.datetime.now(dt.UTC).date()
    offset_days = next(
        d for d in range(2, 60)
        if solve("bakers_game", daily_seed(secret.encode(), today + dt.timedelta(days=d),
                                           "bakers_game"), budget_s=5).verdict == "unwinnable"
    )  # fmt: skip
    day = today + dt.timedelta(days=offset_days)
    server = servers.start(
        env={"SOLITAIRE_CLOCK_OFFSET_S": str(offset_days * DAY_S)},
        args=["--secret", secret, "--daily-max-candidates", "1"],
    )
    deadline = time.monotonic() + 60
    while not (deal := await redis.hgetall(deal_key(servers.namespace, "bakers_game", day))):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.2)
    assert deal["proven"] == "0" and deal["par"] == "" and deal["line"] == ""
    assert int(deal["seed"]) == daily_seed(secret.encode(), day, "bakers_game")
    assert "NO WINNABLE DEAL" in server.log_text()
    async with Client.connect(server.ws_url) as p:
        await p.hello("p")
        state = await p.request({"t": "daily", "game": "bakers_game", "confirm": True}, timeout=30)
        assert state["view"] == engine.new_game("bakers_game", int(deal["seed"])).view()
