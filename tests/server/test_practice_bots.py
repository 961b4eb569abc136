"""Practice games (undo, hints) and bot seats, on real servers, Redis and WebSockets."""

from __future__ import annotations

import time
from typing import Any

import redis as sync_redis
from support.server_proc import ServerFactory
from support.ws_client import Client

import engine
from engine.solve import solve

FAST = {"SOLITAIRE_RATE": "500", "SOLITAIRE_BURST": "500", "SOLITAIRE_BOT_THINK_SCALE": "0.01"}
# A Baker's Game deal that the solver wins (and fc-solve agrees, tests/solve/).
WINNABLE_BAKERS = 2


def stored_moves(redis_url: str, ns: str, code: str, player: str) -> list[str]:
    client = sync_redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return client.lrange(f"{{{ns}:race:{code}}}:game:r.{code}.{player}:moves", 0, -1)
    finally:
        client.close()


def same_position(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("gid", "kind", "game", "n", "view", "score", "won", "over", "finished", "seed")
    return all(a.get(k) == b.get(k) for k in keys)


async def test_practice_undo_restores_each_earlier_state_exactly(servers: ServerFactory) -> None:
    server = servers.start(env=FAST)
    async with Client.connect(server.ws_url) as c:
        await c.hello("ann")
        first = await c.request({"t": "practice", "game": "hopscotch", "seed": 11})
        assert first["t"] == "state" and first["kind"] == "practice" and first["seed"] == 11
        assert first["view"] == engine.new_game("hopscotch", 11).view()
        game = engine.new_game("hopscotch", 11)
        states = [first]
        for _ in range(6):
            move = sorted(game.legal_moves())[-1]
            game.play(move)
            reply = await c.request(
                {"t": "move", "gid": first["gid"], "n": len(states) - 1, "m": move}
            )
            assert reply["t"] == "state" and reply["view"] == game.view()
            states.append(reply)
        # Undo walks back through every earlier state, exactly.
        for earlier in reversed(states[:-1]):
            undone = await c.request({"t": "undo", "gid": first["gid"]})
            assert undone["t"] == "state" and same_position(undone, earlier), (undone, earlier)
        nothing = await c.request({"t": "undo", "gid": first["gid"]})
        assert nothing["t"] == "error" and nothing["code"] == "illegal_move"
        # The store agrees: a fresh `get` and a reconnect list the game at move 0.
        got = await c.request({"t": "get", "gid": first["gid"]})
        assert same_position(got, first)
        token = c.token
    async with Client.connect(server.ws_url) as again:
        welcome = await again.hello("ann", token=token)
        active = [g for g in welcome["active"] if g["gid"] == first["gid"]]
        assert len(active) == 1 and active[0]["kind"] == "practice" and active[0]["n"] == 0


async def test_hints_are_legal_and_followed_they_win(servers: ServerFactory) -> None:
    server = servers.start(env=FAST)
    assert solve("bakers_game", WINNABLE_BAKERS, budget_s=10).verdict == "won"
    async with Client.connect(server.ws_url) as c:
        await c.hello("hinted")
        state = await c.request({"t": "practice", "game": "bakers_game", "seed": WINNABLE_BAKERS})
        gid = state["gid"]
        game = engine.new_game("bakers_game", WINNABLE_BAKERS)
        verdicts = set()
        while not state["finished"]:
            hint = await c.request({"t": "hint", "gid": gid}, timeout=30)
            assert hint["t"] == "hint" and hint["gid"] == gid and hint["n"] == state["n"]
            assert hint["move"] in game.legal_moves(), hint
            verdicts.add(hint["verdict"])
            game.play(hint["move"])
            state = await c.request({"t": "move", "gid": gid, "n": state["n"], "m": hint["move"]})
            assert state["t"] == "state" and state["view"] == game.view()
            assert state["n"] < 300
        assert state["won"] and game.won
        # Under load a 1 s search may give up on a hard spot; it never calls it lost.
        assert "won" in verdicts and "unwinnable" not in verdicts
        done = await c.request({"t": "hint", "gid": gid})
        assert done["t"] == "error" and done["code"] == "illegal_move"


async def test_undo_and_hint_are_refused_in_ranked_games(servers: ServerFactory) -> None:
    server = servers.start(env=FAST)
    async with Client.connect(server.ws_url) as a, Client.connect(server.ws_url) as b:
        await a.hello("racer")
        await b.hello("other")
        created = await a.request({"t": "create", "game": "quatorze", "seed": 5})
        code = created["race"]
        await b.request({"t": "join", "race": code})
        await a.request({"t": "start", "race": code})
        race_state = await a.next("state")
        daily = await a.request({"t": "daily", "game": "quatorze", "confirm": True}, timeout=60)
        assert daily["t"] == "state" and daily["kind"] == "daily"
        for gid in (race_state["gid"], daily["gid"]):
            move = sorted(engine.legal_moves_from_view(
                race_state["view"] if gid == race_state["gid"] else daily["view"]
            ))[0]  # fmt: skip
            played = await a.request({"t": "move", "gid": gid, "n": 0, "m": move})
            assert played["t"] == "state" and played["n"] == 1
            for what in ("undo", "hint"):
                refused = await a.request({"t": what, "gid": gid})
                assert refused["t"] == "error" and refused["code"] == "bad_request"
                assert "ranked" in refused["msg"] and "practice" in refused["msg"]
            got = await a.request({"t": "get", "gid": gid})
            assert got["n"] == 1  # nothing was undone
        # Someone else's practice game is not found, not refused.
        mine = await b.request({"t": "practice", "game": "doublets"})
        for what in ("undo", "hint"):
            other = await a.request({"t": what, "gid": mine["gid"]})
            assert other["t"] == "error" and other["code"] == "not_found"


async def test_bots_race_to_the_end_with_legal_stored_moves(
    servers: ServerFactory, redis_url: str
) -> None:
    server = servers.start(env=FAST)
    async with Client.connect(server.ws_url) as host:
        await host.hello("host")
        too_many = await host.request(
            {"t": "create", "game": "quatorze", "bots": 4, "max_players": 4}
        )
        assert too_many["t"] == "error" and too_many["code"] == "bad_request"
        results = {}
        for game, strength, count in (
            ("quatorze", "easy", 3),
            ("doublets", "medium", 2),
            ("bakers_game", "hard", 2),
        ):
            seed = WINNABLE_BAKERS if game == "bakers_game" else 9
            created = await host.request(
                {"t": "create", "game": game, "seed": seed, "bots": count,
                 "bot_strength": strength, "max_players": count + 1}
            )  # fmt: skip
            assert created["t"] == "created", created
            lobby = await host.next("lobby", race=created["race"])
            bots = [s for s in lobby["players"] if s["player"] != host.player]
            assert len(bots) == count and len(lobby["players"]) == count + 1
            assert all(s["name"].endswith(" (bot)") and s["player"].startswith("bot-")
                       for s in bots)  # fmt: skip
            # A full race: nobody else may join.
            async with Client.connect(server.ws_url) as late:
                await late.hello(f"late-{game}")
                full = await late.request({"t": "join", "race": created["race"]})
                assert full["t"] == "error" and full["code"] == "race_full"
            await host.request({"t": "start", "race": created["race"]})
            await host.request({"t": "resign", "gid": f"r.{created['race']}.{host.player}"})
            result = await host.next("result", timeout=90, race=created["race"])
            results[(game, strength)] = (created["race"], result, bots)
    for (game, strength), (code, result, bots) in results.items():
        standings = {s["player"]: s for s in result["standings"]}
        assert set(standings) == {b["player"] for b in bots} | {host.player}
        for bot in bots:
            moves = stored_moves(redis_url, servers.namespace, code, bot["player"])
            replayed = engine.replay(game, result["seed"], moves)  # every move legal
            row = standings[bot["player"]]
            assert row["score"] == replayed.score and row["won"] == replayed.won
            assert row["moves"] == replayed.moves
            assert not (row["resigned"] and replayed.won)
            if strength == "hard":  # follows the solver's line on a winnable deal
                assert replayed.won, (game, strength, row)
        ranks = [s["rank"] for s in result["standings"]]
        assert ranks == sorted(ranks) and ranks[0] == 1
        # The host resigned at once; a bot that scored anything ranks above it.
        assert all(standings[b["player"]]["rank"] < standings[host.player]["rank"]
                   for b in bots if standings[b["player"]]["score"] > 0)  # fmt: skip
    assert "drives" in server.log_text()


async def test_another_instance_takes_over_the_bots_of_a_killed_one(
    servers: ServerFactory, redis_url: str
) -> None:
    env = {**FAST, "SOLITAIRE_BOT_THINK_SCALE": "0.04", "SOLITAIRE_BOT_LEASE_S": "1.5"}
    a = servers.start(env=env)
    b = servers.start(env=env)
    ns = servers.namespace
    async with Client.connect(b.ws_url) as watcher:
        await watcher.hello("watcher")
        async with Client.connect(a.ws_url) as host:
            await host.hello("host")
            created = await host.request(
                {"t": "create", "game": "hopscotch", "seed": 3, "bots": 2, "bot_strength": "hard"}
            )
            code = created["race"]
            await watcher.request({"t": "join", "race": code})
            await host.request({"t": "start", "race": code})
            host_gid, host_token = f"r.{code}.{host.player}", host.token
            # The bots play a few moves, driven by A (which started the race) ...
            seen: dict[str, int] = {}
            while len(seen) < 2 or min(seen.values()) < 3:
                progress = await watcher.next("progress", timeout=30)
                if progress["player"].startswith("bot-"):
                    seen[progress["player"]] = progress["moves"]
            assert "drives 2 bots" in a.log_text()
            # ... until A dies without a word.
            a.kill()
        killed_at = time.monotonic()
        before = {bot: len(stored_moves(redis_url, ns, code, bot)) for bot in seen}
        # B takes the lease once it expires; the bots carry on from where they were.
        moved = await watcher.take(
            lambda m: (
                m.get("t") == "progress"
                and m["player"] in before
                and m["moves"] > before[m["player"]]
            ),
            timeout=30,
        )
        took = time.monotonic() - killed_at
        assert took < 15, took  # lease 1.5 s, scans every 0.5 s: a bound, not a benchmark
        assert moved["player"].startswith("bot-")
        assert "drives 2 bots" in b.log_text()
        # The host (now on B) and the watcher resign; the bots finish: a full result.
        async with Client.connect(b.ws_url) as host2:
            await host2.hello("host", token=host_token)
            resigned = await host2.request({"t": "resign", "gid": host_gid})
            assert resigned["t"] == "state" and resigned["finished"]
        await watcher.request({"t": "resign", "gid": f"r.{code}.{watcher.player}"})
        result = await watcher.next("result", timeout=90, race=code)
    standings = {s["player"]: s for s in result["standings"]}
    for bot in seen:
        moves = stored_moves(redis_url, ns, code, bot)
        replayed = engine.replay("hopscotch", result["seed"], moves)  # all legal, none twice
        assert standings[bot]["score"] == replayed.score
        assert standings[bot]["moves"] == replayed.moves
