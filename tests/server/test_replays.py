"""Replays through a real server: races once over, dailies once their day is over, one's own
practice games; each replayed by the engine from the stored moves to the stored result, and
nothing shown (no deal, no seed, no move) while the game may not be shown."""

from __future__ import annotations

import asyncio
import datetime as dt
import html
import json
import random
import re
import urllib.error
import urllib.request
from typing import Any

import pytest
import redis as sync_redis
from helpers import Seat, close_all, seat_race
from support.server_proc import ServerFactory, ServerProcess
from support.ws_client import Client
from test_bad_input import snapshot

import engine

# Quatorze deal 1 is won by these 26 removals (tests/client/client_deals.py checks it).
QUATORZE_WIN = [
    "c0-c15", "c0-c2", "c0-c1", "c3-c23", "c5-c6", "c5-c6", "c10-c11", "c10-c13", "c12-c14",
    "c12-c13", "c13-c14", "c11-c13", "c1-c11", "c1-c4", "c2-c4", "c0-c5", "c0-c2", "c0-c3",
    "c2-c3", "c1-c11", "c1-c2", "c0-c4", "c1-c3", "c0-c5", "c0-c2", "c0-c1",
]  # fmt: skip


def http_get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


async def replay_all(client: Client, **ref: Any) -> dict[str, Any]:
    """Every page of a replay, its moves put together (the first page's other fields)."""
    first = await client.request({"t": "replay", **ref})
    if first["t"] != "replay":
        return first
    moves = list(first["moves"])
    while len(moves) < first["n"]:
        page = await client.request({"t": "replay", **ref, "start": len(moves)})
        assert page["t"] == "replay" and page["start"] == len(moves), page
        assert page["moves"], page  # every page brings moves until the last
        moves += page["moves"]
    first.pop("re")
    return first | {"moves": moves}


def assert_ends_as_stored(replay: dict[str, Any]) -> engine.Game:
    """The engine's replay of the moves from the deal ends as the stored result says."""
    game = engine.replay(replay["game"], replay["seed"], replay["moves"])
    result = replay["result"]
    assert (game.score, game.moves) == (result["score"], result["moves"]), replay["gid"]
    assert (game.won, game.over) == (result["won"], result["over"]), replay["gid"]
    assert result["max_score"] == engine.MAX_SCORE[replay["game"]]
    return game


def some_moves(game: Any, count: int) -> list[str]:
    out = []
    for _ in range(count):
        legal = sorted(game.legal_moves())
        if not legal:
            break
        out.append(legal[len(out) % len(legal)])
        game.play(out[-1])
    return out


async def play_moves(seat: Seat, moves: list[str]) -> None:
    for m in moves:
        reply = await seat.play(m)
        assert reply["t"] == "state", reply


def no_secret_in(text: str, seed: int, moves: list[str]) -> None:
    assert str(seed) not in text, text
    for m in moves:
        assert m not in text, (m, text)


@pytest.mark.parametrize("game", engine.GAMES)
async def test_a_finished_race_replays_to_its_result_and_a_running_one_shows_nothing(
    server: ServerProcess, redis_url: str, redis_namespace: str, game: str
) -> None:
    seed = 1 if game == "quatorze" else 11
    code, seats, _ = await seat_race(server.ws_url, ["alice", "bob", "carol"], game, seed)
    alice, bob, carol = seats
    viewer = await Client.connect(server.ws_url)
    try:
        await viewer.hello("viewer")
        if game == "quatorze":
            await play_moves(alice, QUATORZE_WIN)  # alice wins: her game is over
        else:
            await play_moves(alice, some_moves(engine.new_game(game, seed), 9))
            if not alice.game.over:
                assert (await alice.client.request({"t": "resign", "gid": alice.gid}))["finished"]
        await play_moves(bob, some_moves(engine.new_game(game, seed), 4))
        assert not bob.game.over

        # The race runs (carol has not finished): every way of asking is refused, for a
        # seat that is over as for one still playing, and nothing changes.
        before = snapshot(redis_url, redis_namespace)
        for who in (viewer, alice.client, bob.client):
            for ref in ({"gid": alice.gid}, {"gid": bob.gid}, {"race": code, "seat": 1},
                        {"race": code.lower(), "seat": 3}):  # fmt: skip
                err = await who.request({"t": "replay", **ref})
                assert err["t"] == "error" and err["code"] == "not_over", (ref, err)
                no_secret_in(err["msg"], seed, alice.moves)
        for path in (f"/replay/{alice.gid}", f"/replay/{alice.gid}.json", f"/replay/{code}:1"):
            status, _, body = http_get(server.http_url + path)
            assert status == 403 and "not over" in body, (path, status, body)
            no_secret_in(body, seed, alice.moves)
        assert snapshot(redis_url, redis_namespace) == before
        assert (await carol.play())["t"] == "state"  # the players carry on as before

        for seat in (carol, bob):
            assert (await seat.client.request({"t": "resign", "gid": seat.gid}))["finished"]
        result = await alice.client.next("result")

        # Over: every seat, by gid and by its line in the standings, to anyone.
        for line, standing in enumerate(result["standings"], 1):
            seat = next(s for s in seats if s.client.player == standing["player"])
            by_gid = await replay_all(viewer, gid=seat.gid)
            by_line = await replay_all(viewer, race=code, seat=line)
            assert by_gid == by_line
            assert by_gid["moves"] == seat.moves  # exactly what the player sent
            assert (by_gid["kind"], by_gid["game"], by_gid["seed"]) == ("race", game, seed)
            assert (by_gid["race"], by_gid["player"]) == (code, seat.client.player)
            assert by_gid["standings"] == result["standings"]
            final = assert_ends_as_stored(by_gid)
            assert final == seat.game  # the very position the player's moves led to
            r = by_gid["result"]
            assert (r["score"], r["moves"], r["won"]) == (
                standing["score"], standing["moves"], standing["won"]
            )  # fmt: skip
            assert (r["rank"], r["of"], r["time_ms"]) == (standing["rank"], 3, standing["time_ms"])
            assert r["resigned"] == standing["resigned"]
            # The web has the same data as JSON.
            status, headers, body = http_get(f"{server.http_url}/replay/{seat.gid}.json")
            assert status == 200 and headers["Content-Type"] == "application/json"
            assert json.loads(body) == by_gid
        if game == "quatorze":
            won = await replay_all(viewer, race=code, seat=1)
            assert won["result"]["won"] and won["result"]["score"] == 52
    finally:
        await viewer.close()
        await close_all(seats)


async def test_bad_replay_requests_get_clear_errors_and_change_nothing(
    server: ServerProcess, redis_url: str, redis_namespace: str
) -> None:
    code, seats, _ = await seat_race(server.ws_url, ["victim", "attacker"], "bakers_game", 3)
    victim, attacker = seats
    try:
        await victim.play()
        practice = await victim.client.request({"t": "practice", "game": "doublets", "seed": 5})
        await victim.client.request({"t": "resign", "gid": practice["gid"]})
        today = dt.datetime.now(dt.UTC).date()
        daily = f"d.{today - dt.timedelta(days=3)}.quatorze.{victim.client.player}"
        before = snapshot(redis_url, redis_namespace)
        for ref, code_wanted in (
            ({"gid": practice["gid"]}, "not_found"),  # another player's practice game
            ({"gid": "r.ZZZZZZ.nobody"}, "not_found"),
            ({"gid": f"r.{code}.nobody"}, "not_over"),  # the race's business first
            ({"gid": "no-such-game"}, "not_found"),
            ({"gid": "r.{x}.y"}, "not_found"),
            ({"gid": "d.yesterday.quatorze.x"}, "not_found"),
            ({"gid": daily}, "not_found"),  # a day over, but no attempt of it is kept
            ({"race": "d.2026-01-01", "seat": 1}, "not_found"),  # a daily named as a race
            ({"race": "2026-01-01", "seat": 1}, "not_found"),
            ({"race": "ZZZZZZ", "seat": 1}, "not_found"),
            ({"race": code, "seat": 2}, "not_over"),
        ):
            err = await attacker.client.request({"t": "replay", **ref})
            assert err["t"] == "error" and err["code"] == code_wanted, (ref, err)
            assert victim.client.player not in err["msg"] and "victim" not in err["msg"]
        for bad in (
            {},
            {"gid": practice["gid"], "race": code, "seat": 1},
            {"race": code},
            {"seat": 1},
            {"gid": practice["gid"], "seat": 1},
            {"race": code, "seat": 0},
            {"race": code, "seat": 17},
            {"race": code, "seat": "1"},
            {"race": daily, "seat": 1},  # a daily's gid is longer than a race code may be
            {"gid": "", "start": 0},
            {"gid": practice["gid"], "start": -1},
            {"gid": "x" * 97},
        ):
            err = await attacker.client.request({"t": "replay", **bad})
            assert err["t"] == "error" and err["code"] == "bad_request", (bad, err)
        for path in (f"/replay/{practice['gid']}", "/replay/ZZZZZZ:1", f"/replay/{code}:x",
                     f"/replay/{code}:0", "/replay/", "/replay/r.ZZZZZZ.nobody.json"):  # fmt: skip
            status, _, body = http_get(server.http_url + path)
            assert status == 404 and 0 < len(body) < 200, (path, status, body)
        assert snapshot(redis_url, redis_namespace) == before
        assert (await victim.play())["t"] == "state"
    finally:
        await close_all(seats)


async def test_ones_own_practice_game_replays_once_finished(server: ServerProcess) -> None:
    async with Client.connect(server.ws_url) as me, Client.connect(server.ws_url) as other:
        await me.hello("me")
        await other.hello("other")
        state = await me.request({"t": "practice", "game": "hopscotch", "seed": 4})
        gid, game = state["gid"], engine.new_game("hopscotch", 4)
        moves = some_moves(game, 12)
        for n, m in enumerate(moves):
            assert (await me.request({"t": "move", "gid": gid, "n": n, "m": m}))["t"] == "state"
        assert (await me.request({"t": "replay", "gid": gid}))["code"] == "not_over"
        await me.request({"t": "undo", "gid": gid})
        game = engine.replay("hopscotch", 4, moves[:-1])
        assert (await me.request({"t": "resign", "gid": gid}))["finished"]
        replay = await replay_all(me, gid=gid)
        assert replay["moves"] == moves[:-1] and replay["kind"] == "practice"
        assert assert_ends_as_stored(replay) == game
        assert replay["result"]["resigned"] and "rank" not in replay["result"]
        # Nobody else, and nobody on the web, learns of it.
        assert (await other.request({"t": "replay", "gid": gid}))["code"] == "not_found"
        assert http_get(f"{server.http_url}/replay/{gid}")[0] == 404


async def test_long_games_come_in_pages(servers: ServerFactory) -> None:
    server = servers.start(env={"SOLITAIRE_REPLAY_PAGE_MOVES": "4"})
    async with Client.connect(server.ws_url) as me:
        await me.hello("me")
        state = await me.request({"t": "practice", "game": "doublets", "seed": 9})
        game = engine.new_game("doublets", 9)
        moves = some_moves(game, 10)
        for n, m in enumerate(moves):
            await me.request({"t": "move", "gid": state["gid"], "n": n, "m": m})
        await me.request({"t": "resign", "gid": state["gid"]})
        pages = [await me.request({"t": "replay", "gid": state["gid"], "start": s})
                 for s in (0, 4, 8, len(moves))]  # fmt: skip
        assert [pg["moves"] for pg in pages] == [moves[0:4], moves[4:8], moves[8:], []]
        assert {pg["n"] for pg in pages} == {len(moves)}
        past = await me.request({"t": "replay", "gid": state["gid"], "start": len(moves) + 1})
        assert past["code"] == "bad_request"
        assert assert_ends_as_stored(await replay_all(me, gid=state["gid"])) == game


async def play_daily(client: Client, game: str, count: int) -> tuple[dict[str, Any], list[str]]:
    state = await client.request({"t": "daily", "game": game, "confirm": True})
    assert state["t"] == "state", state
    moves: list[str] = []
    for _ in range(count):
        legal = sorted(engine.legal_moves_from_view(state["view"]))
        if not legal or state["finished"]:
            break
        move = legal[len(moves) % len(legal)]
        state = await client.request({"t": "move", "gid": state["gid"], "n": state["n"], "m": move})
        assert state["t"] == "state", state
        moves.append(move)
    return state, moves


async def test_a_daily_is_shown_once_its_day_is_over_and_never_during_it(
    servers: ServerFactory, redis_url: str, redis_namespace: str
) -> None:
    # A server a day behind plays "today" as the real yesterday; for a server on today's
    # clock that day is over.
    behind = servers.start(env={"SOLITAIRE_CLOCK_OFFSET_S": str(-86400)})
    alice = await Client.connect(behind.ws_url)
    bob = await Client.connect(behind.ws_url)
    try:
        await alice.hello("alice")
        await bob.hello("bob")
        a_state, a_moves = await play_daily(alice, "bakers_game", 6)
        await alice.request({"t": "resign", "gid": a_state["gid"]})
        b_state, b_moves = await play_daily(bob, "bakers_game", 3)  # still playing
        # During the day: neither the player nor anyone else, finished or not, existing or
        # not, by message or on the web.
        before = snapshot(redis_url, redis_namespace)
        nobody = a_state["gid"].rsplit(".", 1)[0] + ".0123456789abcdef"
        refusals = set()
        for who in (alice, bob):
            for gid in (a_state["gid"], b_state["gid"], nobody):
                err = await who.request({"t": "replay", "gid": gid})
                assert err["code"] == "not_over", err
                refusals.add(err["msg"])
        assert len(refusals) == 1  # the same words whether the attempt exists or not
        for gid in (a_state["gid"], nobody):
            for path in (f"/replay/{gid}", f"/replay/{gid}.json"):
                status, _, body = http_get(behind.http_url + path)
                assert status == 403 and body.strip() == next(iter(refusals)), (path, body)
        board = f"{behind.http_url}/leaderboard/bakers_game/{a_state['date']}"
        assert "/replay/" not in http_get(board)[2]
        assert snapshot(redis_url, redis_namespace) == before
        assert (await bob.request({"t": "get", "gid": b_state["gid"]}))["n"] == len(b_moves)

        # The next day (a server on today's clock): both are shown, bob's closed as it stood
        # at midnight (by that server's sweep, or as the sweep will close it).
        today = servers.start()
        async with Client.connect(today.ws_url) as viewer:
            await viewer.hello("viewer")
            for state, moves, who in ((a_state, a_moves, alice), (b_state, b_moves, bob)):
                replay = await replay_all(viewer, gid=state["gid"])
                assert replay["moves"] == moves and replay["date"] == state["date"]
                assert replay["player"] == who.player and replay["kind"] == "daily"
                assert_ends_as_stored(replay)
                status, _, body = http_get(f"{today.http_url}/replay/{state['gid']}.json")
                assert status == 200 and json.loads(body)["moves"] == moves
            deal = await viewer.request(
                {"t": "leaderboard", "game": "bakers_game", "date": a_state["date"]}
            )
            assert replay["seed"] == deal["seed"]
            for _ in range(50):  # the sweep ranks bob's attempt within a second or so
                deal = await viewer.request(
                    {"t": "leaderboard", "game": "bakers_game", "date": a_state["date"]}
                )
                if deal["total"] == 2:
                    break
                await asyncio.sleep(0.2)
            ranks = {e["player"]: (e["rank"], e["score"], e["time_ms"]) for e in deal["entries"]}
            for state, who in ((a_state, alice), (b_state, bob)):
                r = (await viewer.request({"t": "replay", "gid": state["gid"]}))["result"]
                assert (r["rank"], r["score"], r["time_ms"]) == ranks[who.player]
                assert r["of"] == 2
            assert r["timed_out"] and not r["resigned"]  # bob's, closed at midnight
    finally:
        await alice.close()
        await bob.close()


def long_line(count: int) -> list[str]:
    """Legal moves of Baker's Game deal 2: a short walk (found with the engine) to a card in
    a free cell beside an empty column, then that card back and forth between them."""
    for attempt in range(1000):
        rng, game, moves = random.Random(attempt), engine.new_game("bakers_game", 2), []
        for _ in range(200):
            piles, legal = game.piles, sorted(game.legal_moves())
            empty = [c for c in piles if c.startswith("t") and not piles[c]]
            cells = [c for c in piles if c.startswith("r") and piles[c]]
            if empty and cells and f"{cells[0]}-{empty[0]}" in legal:
                there, back = f"{cells[0]}-{empty[0]}", f"{empty[0]}-{cells[0]}"
                while len(moves) < count:
                    moves.append(there)
                    there, back = back, there
                return moves
            if not legal:
                break
            moves.append(rng.choice(legal))
            game.play(moves[-1])
    raise AssertionError("no long line")


def page_board(html_text: str) -> str:
    pre = re.search(r'<pre class="board">(.*?)</pre>', html_text, re.S)
    assert pre, html_text
    return html.unescape(re.sub(r"<[^>]+>", "", pre[1]))


def as_shown(board: str) -> str:
    suits = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
    return re.sub(r"\b([A2-9TJQK])([CDHS])\b",
                  lambda m: ("10" if m[1] == "T" else m[1]) + suits[m[2]], board)  # fmt: skip


async def test_a_long_games_pages_show_the_engines_positions(servers: ServerFactory) -> None:
    # Moves as fast as the replies come: over the default rate limit.
    server = servers.start(env={"SOLITAIRE_RATE": "100000", "SOLITAIRE_BURST": "100000"})
    moves = long_line(2345)
    async with Client.connect(server.ws_url) as c:
        await c.hello("long")
        code = (await c.request({"t": "create", "game": "bakers_game", "seed": 2}))["race"]
        await c.request({"t": "start", "race": code})
        gid = f"r.{code}.{c.player}"
        for n, m in enumerate(moves):
            assert (await c.request({"t": "move", "gid": gid, "n": n, "m": m}))["t"] == "state"
        await c.request({"t": "resign", "gid": gid})
        # The server stored a snapshot of the position every 500 moves to load the game
        # quickly; a replay must never show one. Each is made to hold the deal's position
        # (still well-formed), so that a page built from a snapshot would show the wrong board.
        snaps = f"{{{servers.namespace}:race:{code}}}:game:{gid}:snaps"
        store = sync_redis.Redis.from_url(servers.redis_url, decode_responses=True)
        try:
            stored = store.zrange(snaps, 0, -1, withscores=True)
            assert [int(n) for _, n in stored] == [500, 1000, 1500, 2000]
            deal = engine.new_game("bakers_game", 2).piles
            for text, n in stored:
                snapshot = json.loads(text)
                assert snapshot["piles"] != deal
                store.zrem(snaps, text)
                store.zadd(snaps, {json.dumps(snapshot | {"piles": deal}): n})
        finally:
            store.close()
        replay = await replay_all(c, gid=gid)
    assert replay["moves"] == moves
    assert_ends_as_stored(replay)
    # Positions on either side of the pages' memo (every 1000 moves), in an order that
    # finds the memo built, and the first and last.
    for n in (1500, 999, 1000, 1001, 0, 2345, 2000, 1):
        status, _, body = http_get(f"{server.http_url}/replay/{gid}?n={n}")
        assert status == 200, (n, body)
        position = engine.replay("bakers_game", 2, moves[:n])
        assert page_board(body) == as_shown(engine.render_text(position.view())), n
        assert f"Move {n} of {len(moves)}" in body
        if n:
            assert f"Move {n}: <code>{moves[n - 1]}</code>" in body
