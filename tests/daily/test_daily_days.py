"""Two days of the daily challenge on real servers, with the servers' clock set to just before
midnight UTC by configuration (SOLITAIRE_CLOCK_OFFSET_S), and a real crossing of midnight."""

from __future__ import annotations

import asyncio
import datetime as dt
import time

import redis.asyncio as aioredis
from support.server_proc import ServerFactory
from support.ws_client import Client

import engine
from server.daily.seeds import daily_seed

GAME = "hopscotch"
# A day far from today, so that the test never depends on the real date.
DAY1 = dt.date(2031, 5, 10)
DAY2 = DAY1 + dt.timedelta(days=1)
MIDNIGHT = dt.datetime(DAY2.year, DAY2.month, DAY2.day, tzinfo=dt.UTC).timestamp()
LEAD_S = 20.0  # the servers start this long before midnight (room for a slow machine)


def bot_move(view: dict) -> str:
    """A simple legal Hopscotch player: foundations first, then deal, then the first reserve."""
    legal = engine.legal_moves_from_view(view)
    for m in legal:
        if "-f" in m:
            return m
    if "deal" in legal:
        return "deal"
    return legal[0]


async def play(client: Client, state: dict, count: int) -> dict:
    """Play `count` moves (fewer if the game ends) on a daily attempt; the last state."""
    for _ in range(count):
        if state["finished"]:
            break
        m = bot_move(state["view"])
        reply = await client.request({"t": "move", "gid": state["gid"], "n": state["n"], "m": m})
        assert reply["t"] == "state", reply
        assert reply["n"] == state["n"] + 1
        state = reply
    return state


def rank_key(e: dict) -> tuple[int, bool, int, int]:
    return (-e["score"], e.get("resigned", False), e["time_ms"], e["moves"])


async def test_two_days_of_daily_play(servers: ServerFactory, redis: aioredis.Redis) -> None:
    offset = MIDNIGHT - LEAD_S - time.time()
    env = {"SOLITAIRE_CLOCK_OFFSET_S": str(offset)}
    # Two instances on one store, no secret configured: they must agree on the deal.
    s1 = servers.start(env=env)
    s2 = servers.start(env=env)

    alice = await Client.connect(s1.ws_url)
    bob = await Client.connect(s2.ws_url)
    carol = await Client.connect(s1.ws_url)
    dave = await Client.connect(s2.ws_url)
    try:
        for c, name in ((alice, "alice"), (bob, "bob"), (carol, "carol"), (dave, "dave")):
            assert (await c.hello(name))["t"] == "welcome"

        # --- day 1: alice, bob and carol start; everyone is dealt the same cards.
        states = {}
        for c in (alice, bob, carol):
            before = time.time() + offset
            st = await c.request({"t": "daily", "game": GAME, "confirm": True})
            started = (before, time.time() + offset)  # carol's is the one kept
            assert st["t"] == "state" and st["kind"] == "daily", st
            assert st["date"] == DAY1.isoformat() and st["n"] == 0 and not st["finished"]
            assert "seed" not in st
            states[c.player] = st
        views = [st["view"] for st in states.values()]
        assert views[0] == views[1] == views[2]

        # The seed of a day in progress is nowhere to be seen.
        board = await dave.request({"t": "leaderboard", "game": GAME})
        assert board["t"] == "leaderboard" and board["date"] == DAY1.isoformat()
        assert "seed" not in board and board["total"] == 0

        # alice plays 12 moves and resigns: she is ranked at once.
        a = await play(alice, states[alice.player], 12)
        done = await alice.request({"t": "resign", "gid": a["gid"]})
        assert done["t"] == "state" and done["finished"]
        again = await alice.request({"t": "daily", "game": GAME, "confirm": True})
        assert again["code"] == "already_played"
        # Playing on a finished attempt is refused and changes nothing.
        refused = await alice.request({"t": "move", "gid": a["gid"], "n": done["n"], "m": "deal"})
        assert refused["code"] == "illegal_move"

        # bob plays 3 moves, loses his connection, comes back: his attempt is waiting.
        b = await play(bob, states[bob.player], 3)
        token = bob.token
        await bob.close()
        bob = await Client.connect(s1.ws_url)  # the other instance, even
        welcome = await bob.hello("bob", token=token)
        active = [g for g in welcome["active"] if g["kind"] == "daily"]
        assert [(g["gid"], g["n"]) for g in active] == [(b["gid"], 3)]
        resumed = await bob.request({"t": "daily", "game": GAME, "confirm": True})
        assert resumed["gid"] == b["gid"] and resumed["n"] == 3 and resumed["view"] == b["view"]
        assert resumed["elapsed_ms"] >= b["elapsed_ms"]
        b = await play(bob, resumed, 25)
        done_b = await bob.request({"t": "resign", "gid": b["gid"]})
        assert done_b["finished"]

        # carol plays 5 moves and leaves her attempt open over midnight.
        c_state = await play(carol, states[carol.player], 5)

        board = await dave.request({"t": "leaderboard", "game": GAME})
        assert board["total"] == 2 and "seed" not in board
        assert "me" not in board  # dave has no entry

        # --- midnight passes; carol's attempt is closed as it stood, and she is told.
        server_now = time.time() + offset
        assert server_now < MIDNIGHT, "the set-up took too long to finish before midnight"
        closed = await carol.next("state", timeout=LEAD_S + 15, gid=c_state["gid"])
        assert closed["finished"] and closed["n"] == 5 and closed["score"] == c_state["score"]
        assert time.time() + offset >= MIDNIGHT
        late = await carol.request({"t": "move", "gid": c_state["gid"], "n": 5, "m": "deal"})
        assert late["t"] == "error" and late["code"] == "illegal_move"

        # --- day 2: yesterday's board is final and its seed published.
        y = await dave.request({"t": "leaderboard", "game": GAME, "date": DAY1.isoformat()})
        assert y["total"] == 3
        secret = await redis.hget(f"{{{servers.namespace}:server}}:config", "secret")
        # The day's deal: the first seed from the day's HMAC seed on that the solver proved
        # winnable (server/daily/deals.py), published with its winning line and par.
        deal = await redis.hgetall(f"{{{servers.namespace}:day:{GAME}:{DAY1.isoformat()}}}:deal")
        first = daily_seed(secret.encode(), DAY1, GAME)
        assert y["seed"] == int(deal["seed"]) == first + int(deal["candidates"]) - 1
        assert y["par"] == len(y["line"]) and engine.replay(GAME, y["seed"], y["line"]).won
        # The published seed really is the deal everyone got.
        assert engine.new_game(GAME, y["seed"]).view() == views[0]
        by_player = {e["player"]: e for e in y["entries"]}
        assert set(by_player) == {alice.player, bob.player, carol.player}
        assert by_player[alice.player]["moves"] == 12
        assert by_player[bob.player]["moves"] == 28
        c_entry = by_player[carol.player]
        assert c_entry["moves"] == 5 and c_entry["score"] == c_state["score"]
        # carol's clock ran from her first state until midnight, no further.
        assert (MIDNIGHT - started[1]) * 1000 - 5 <= c_entry["time_ms"]
        assert c_entry["time_ms"] <= (MIDNIGHT - started[0]) * 1000 + 5
        ordered = sorted(y["entries"], key=rank_key)
        assert [e["player"] for e in y["entries"]] == [e["player"] for e in ordered]
        ranks = [e["rank"] for e in y["entries"]]
        assert ranks[0] == 1 and all(
            r == (i + 1 if rank_key(e) != rank_key(y["entries"][i - 1]) else ranks[i - 1])
            for i, (r, e) in enumerate(zip(ranks, y["entries"], strict=True))
            if i
        )
        # The same day's board asked by carol includes her own row.
        mine = await carol.request({"t": "leaderboard", "game": GAME, "date": DAY1.isoformat()})
        assert mine["me"]["player"] == carol.player and mine["me"] == by_player[carol.player]

        # Today's deal is new, its seed hidden again; alice and dave play it.
        t_alice = await alice.request({"t": "daily", "game": GAME, "confirm": True})
        t_dave = await dave.request({"t": "daily", "game": GAME, "confirm": True})
        assert t_alice["date"] == t_dave["date"] == DAY2.isoformat()
        assert t_alice["gid"] != a["gid"] and t_alice["view"] == t_dave["view"]
        await play(alice, t_alice, 4)
        await alice.request({"t": "resign", "gid": t_alice["gid"]})
        await dave.request({"t": "resign", "gid": t_dave["gid"]})
        today = await bob.request({"t": "leaderboard", "game": GAME})
        assert today["date"] == DAY2.isoformat() and today["total"] == 2 and "seed" not in today
        assert "me" not in today

        # Streaks: alice two days running, carol and bob one (yesterday), dave one (today).
        st = (await bob.request({"t": "stats", "player": alice.player}))["games"][GAME]
        assert (st["played"], st["streak"], st["best_streak"]) == (2, 2, 2)
        assert st["last_played"] == DAY2.isoformat()
        mine = await bob.request({"t": "stats"})
        assert mine["player"] == bob.player and mine["name"] == "bob"
        assert (mine["games"][GAME]["played"], mine["games"][GAME]["streak"]) == (1, 1)
        assert mine["games"]["doublets"]["played"] == 0
        assert "last_played" not in mine["games"]["doublets"]
        dv = (await alice.request({"t": "stats", "player": dave.player}))["games"][GAME]
        assert (dv["played"], dv["streak"]) == (1, 1)
        unknown = await alice.request({"t": "stats", "player": "0000000000000000"})
        assert unknown["code"] == "not_found"

        # The all-time board counts both days: alice has played most and scored most.
        at = await dave.request({"t": "leaderboard", "game": GAME, "date": "all", "limit": 10})
        assert at["total"] == 4 and "seed" not in at
        rows = {e["player"]: e for e in at["entries"]}
        assert rows[alice.player]["played"] == 2
        assert (
            rows[alice.player]["score"]
            == by_player[alice.player]["score"]
            + ((await alice.request({"t": "leaderboard", "game": GAME}))["me"]["score"])
        )
        assert at["me"]["player"] == dave.player
        keyed = [(-e["days_won"], -e["score"]) for e in at["entries"]]
        assert keyed == sorted(keyed)
    finally:
        for c in (alice, bob, carol, dave):
            await c.close()


async def test_one_attempt_even_when_asked_twice_at_once(servers: ServerFactory) -> None:
    s1, s2 = servers.start(), servers.start()
    first = await Client.connect(s1.ws_url)
    try:
        await first.hello("twin")
        second = await Client.connect(s2.ws_url)
        await second.hello("twin", token=first.token)
        # The same player on two instances asks for today's attempt at the same moment.
        a, b = await asyncio.gather(
            first.request({"t": "daily", "game": "doublets", "confirm": True}),
            second.request({"t": "daily", "game": "doublets", "confirm": True}),
        )
        assert a["t"] == b["t"] == "state" and a["gid"] == b["gid"] and a["view"] == b["view"]
        assert a["score"] == 1  # Doublets starts with its base card on the foundation
        # Both connections play the one attempt: a move on one is seen by the other.
        legal = engine.legal_moves_from_view(a["view"])
        moved = await first.request({"t": "move", "gid": a["gid"], "n": 0, "m": legal[0]})
        assert moved["t"] == "state" and moved["n"] == 1
        seen = await second.next("state", gid=a["gid"])
        assert seen["n"] == 1
        done = await second.request({"t": "resign", "gid": a["gid"]})
        assert done["finished"]
        for c in (first, second):
            played = await c.request({"t": "daily", "game": "doublets", "confirm": True})
            assert played["code"] == "already_played"
        # Another game's daily is a separate attempt.
        other = await first.request({"t": "daily", "game": "bakers_game", "confirm": True})
        assert other["t"] == "state" and other["game"] == "bakers_game"
        board = await second.request({"t": "leaderboard", "game": "doublets"})
        assert board["total"] == 1 and board["me"]["moves"] == 1
        await second.close()
        # After a reconnect, only the unfinished attempt is listed as active.
        again = await Client.connect(s2.ws_url)
        welcome = await again.hello("twin", token=first.token)
        assert [g["gid"] for g in welcome["active"]] == [other["gid"]]
        await again.close()
    finally:
        await first.close()
