"""Data stored by the version before records had versions keeps working after an upgrade.

The records below are written by hand in the earlier layout (commit 4f59b53): game hashes
without `ver`, a running race with its `gver`, as that version's scripts left them. A
server of this version must then serve them: list them on hello, take moves and a
resignation on them, and close the race with the right result.
"""

from __future__ import annotations

import asyncio
import re
import time
import urllib.request

import redis.asyncio as aioredis
from support.ws_client import Client

import engine
from server.domain.ids import daily_gid, practice_gid, race_gid
from server.store.keys import Keys

CODE = "UPGR4D"


def old_game_hash(gid: str, kind: str, game: str, seed: int, player: str, name: str,
                  started_ms: int, **extra: str) -> dict[str, str]:  # fmt: skip
    """A game's hash as the earlier version wrote it (every field but `ver`)."""
    dealt = engine.new_game(game, seed)
    fields = {
        "gid": gid, "kind": kind, "game": game, "seed": str(seed), "player": player,
        "name": name, "race": "", "date": "", "started_at_ms": str(started_ms),
        "ends_at_ms": "0", "finished": "0", "finished_at_ms": "0", "finished_at_us": "0",
        "resigned": "0", "timed_out": "0", "score": str(dealt.score),
        "moves": str(dealt.moves), "won": "0", "over": "0",
    }  # fmt: skip
    fields.update(extra)
    return fields


async def test_a_race_and_a_practice_game_stored_before_versions_still_play(
    server, redis_url, redis_namespace
):
    keys = Keys(redis_namespace)
    ann, bob = await Client.connect(server.ws_url), await Client.connect(server.ws_url)
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        a = await ann.hello("ann")
        b = await bob.hello("bob")
        pa, pb = a["player"], b["player"]
        started = int(time.time() * 1000) - 60_000  # an untimed race, a minute old
        # The race as START_RACE of the earlier version left it, both seats dealt, and one
        # move of ann's already stored (its move list, and `gver` bumped by the write).
        game, seed = "quatorze", 7
        first = engine.new_game(game, seed)
        move = sorted(first.legal_moves())[0]
        first.play(move)
        await r.hset(keys.race_meta(CODE), mapping={
            "code": CODE, "game": game, "seed": str(seed), "host": pa, "max_players": "8",
            "time_limit_s": "0", "status": "running", "created_ms": str(started - 1000),
            "starts_at_ms": str(started), "ends_at_ms": "0", "ver": "2", "gver": "1",
        })  # fmt: skip
        await r.rpush(keys.race_seats(CODE), f"{pa}\tann", f"{pb}\tbob")
        for player, name in ((pa, "ann"), (pb, "bob")):
            gid = race_gid(CODE, player)
            fields = old_game_hash(gid, "race", game, seed, player, name, started, race=CODE)
            if player == pa:
                fields.update(score=str(first.score), moves=str(first.moves))
                await r.rpush(keys.game(gid).moves, move)
            await r.hset(keys.game(gid).meta, mapping=fields)
            await r.sadd(keys.player_games(player), gid)
        await r.zadd(keys.running_index(), {CODE: started + 24 * 3600 * 1000})
        # A practice game of ann's, two moves in.
        pgid = practice_gid("bakers_game", "0ld0", pa)
        practice = engine.new_game("bakers_game", 11)
        played = []
        for _ in range(2):
            m = sorted(practice.legal_moves())[0]
            practice.play(m)
            played.append(m)
        await r.hset(keys.game(pgid).meta, mapping=old_game_hash(
            pgid, "practice", "bakers_game", 11, pa, "ann", started,
            score=str(practice.score), moves=str(practice.moves),
        ))  # fmt: skip
        await r.rpush(keys.game(pgid).moves, *played)
        await r.sadd(keys.player_games(pa), pgid)

        # ann comes back: both games are listed, as they stand.
        again = await Client.connect(server.ws_url)
        welcome = await again.hello("ann", token=a["token"])
        active = {s["gid"]: s for s in welcome["active"]}
        assert active[race_gid(CODE, pa)]["n"] == 1
        assert active[pgid]["n"] == 2 and active[pgid]["seed"] == 11
        await ann.close()
        ann = again

        # Moves and an undo on the old records go through, checked against version 0.
        second = sorted(first.legal_moves())[0]
        before_ms = int(time.time() * 1000)
        state = await ann.request({"t": "move", "gid": race_gid(CODE, pa), "n": 1, "m": second})
        assert state["t"] == "state" and state["n"] == 2, state
        # Moves stored before their times were kept read as time 0; the new one has its own.
        times = await r.lrange(keys.game(race_gid(CODE, pa)).times, 0, -1)
        assert times[0] == "0" and len(times) == 2
        assert before_ms <= int(times[1]) <= int(time.time() * 1000)
        undone = await ann.request({"t": "undo", "gid": pgid})
        assert undone["t"] == "state" and undone["n"] == 1, undone
        assert await r.llen(keys.game(pgid).moves) == 1

        # Both resign: the race closes once, with both seats ranked.
        for c, player in ((ann, pa), (bob, pb)):
            final = await c.request({"t": "resign", "gid": race_gid(CODE, player)})
            assert final["t"] == "state" and final["finished"], final
        result = await bob.next("result", race=CODE)
        rows = {s["player"]: s for s in result["standings"]}
        assert set(rows) == {pa, pb}
        first.play(second)
        assert rows[pa]["score"] == first.score and rows[pa]["moves"] == first.moves
        assert await r.hget(keys.race_meta(CODE), "status") == "done"
    finally:
        await ann.close()
        await bob.close()
        await r.aclose()


async def test_a_game_stored_before_move_times_takes_moves_and_undos(
    server, redis_url, redis_namespace
):
    """Games stored before each move's time was kept: their earlier moves get time 0 when
    the next move is stored, so that the times stay entry for entry with the moves."""
    keys = Keys(redis_namespace)
    ann = await Client.connect(server.ws_url)
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        a = await ann.hello("ann")
        pa = a["player"]
        pgid = practice_gid("bakers_game", "0ld1", pa)
        game = engine.new_game("bakers_game", 11)
        played = []
        for _ in range(3):
            m = sorted(game.legal_moves())[0]
            game.play(m)
            played.append(m)
        await r.hset(keys.game(pgid).meta, mapping=old_game_hash(
            pgid, "practice", "bakers_game", 11, pa, "ann", int(time.time() * 1000) - 5000,
            score=str(game.score), moves=str(game.moves), ver="0",
        ))  # fmt: skip
        await r.rpush(keys.game(pgid).moves, *played)
        await r.sadd(keys.player_games(pa), pgid)
        assert await r.exists(keys.game(pgid).times) == 0
        m = sorted(game.legal_moves())[0]
        state = await ann.request({"t": "move", "gid": pgid, "n": 3, "m": m})
        assert state["t"] == "state" and state["n"] == 4, state
        times = await r.lrange(keys.game(pgid).times, 0, -1)
        assert times[:3] == ["0", "0", "0"] and int(times[3]) > 0
        undone = await ann.request({"t": "undo", "gid": pgid})
        assert undone["t"] == "state" and undone["n"] == 3, undone
        assert await r.lrange(keys.game(pgid).times, 0, -1) == ["0", "0", "0"]
        again = await ann.request({"t": "move", "gid": pgid, "n": 3, "m": m})
        assert again["t"] == "state" and again["n"] == 4, again
        assert len(await r.lrange(keys.game(pgid).times, 0, -1)) == 4
    finally:
        await ann.close()


# The flags the previous version (commit c671f45) wrote for each way a game ends, as its
# game_machine.py and races.py left them: a won game over, a stuck one over, a resignation,
# a race seat closed at its deadline (and a daily at midnight), one still in play.
PREVIOUS_FLAGS = {
    "won": {"finished": "1", "won": "1", "over": "1", "resigned": "0", "timed_out": "0"},
    "stuck": {"finished": "1", "won": "0", "over": "1", "resigned": "0", "timed_out": "0"},
    "resigned": {"finished": "1", "won": "0", "over": "0", "resigned": "1", "timed_out": "0"},
    "timed_out": {"finished": "1", "won": "0", "over": "0", "resigned": "0", "timed_out": "1"},
    "playing": {"finished": "0", "won": "0", "over": "0", "resigned": "0", "timed_out": "0"},
}


def test_games_stored_by_the_previous_version_read_as_one_outcome_and_write_back_the_same():
    """Each end the previous version stored reads as one Outcome, and the record writes the
    very fields it was read from: a game of either version reads the same in the other."""
    from server.domain.outcome import Termination
    from server.domain.records import GameRecord

    want = {
        "won": Termination.WON,
        "stuck": Termination.STUCK,
        "resigned": Termination.RESIGNED,
        "timed_out": Termination.TIMED_OUT,
        "playing": None,
    }
    for how, flags in PREVIOUS_FLAGS.items():
        stored = old_game_hash("r.UPGR4D.ann", "race", "quatorze", 7, "ann", "ann", 1000,
                               race=CODE, ver="3", **flags)  # fmt: skip
        record = GameRecord.from_redis(stored, 4)
        got = record.outcome.termination if record.outcome is not None else None
        assert got == want[how], how
        assert record.finished == (how != "playing") and record.won == (how == "won")
        assert record.to_redis() == stored, how
    # A daily attempt stored without `kind` (never written so, but read as its id says).
    bare = old_game_hash("d.2026-01-02.quatorze.ann", "", "quatorze", 7, "ann", "ann", 1000)
    del bare["kind"]
    assert str(GameRecord.from_redis(bare, 0).kind) == "daily"


async def test_a_running_race_stored_by_the_previous_version_is_watched_fairly(
    server, redis_url, redis_namespace
):
    """A race the previous version started, seats far apart, one resigned: a spectator (and
    a seat watching it, which that version refused) sees no card that the seat still
    playing has not seen, and once it closes, the standings keep the resignation."""
    keys = Keys(redis_namespace)
    code = "UPGR4DWATCH2"
    ann, bob, sam = [await Client.connect(server.ws_url) for _ in range(3)]
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    try:
        pa = (await ann.hello("ann"))["player"]
        pb = (await bob.hello("bob"))["player"]
        await sam.hello("sam")
        started = int(time.time() * 1000) - 60_000
        game, seed = "doublets", 9
        ahead = engine.new_game(game, seed)
        played = []
        for _ in range(12):
            move = "deal" if "deal" in ahead.legal_moves() else sorted(ahead.legal_moves())[0]
            ahead.play(move)
            played.append(move)
        await r.hset(keys.race_meta(code), mapping={
            "code": code, "game": game, "seed": str(seed), "host": pa, "max_players": "8",
            "time_limit_s": "0", "status": "running", "created_ms": str(started - 1000),
            "starts_at_ms": str(started), "ends_at_ms": "0", "ver": "2",
        })  # fmt: skip
        await r.rpush(keys.race_seats(code), f"{pa}\tann", f"{pb}\tbob", "pc\tcy")
        seats = {pa: ("ann", ahead, played, "playing"), pb: ("bob", None, [], "playing"),
                 "pc": ("cy", None, [], "resigned")}  # fmt: skip
        for player, (name, g, moves, how) in seats.items():
            gid = race_gid(code, player)
            dealt = g or engine.new_game(game, seed)
            fields = old_game_hash(gid, "race", game, seed, player, name, started, race=code,
                                   ver=str(1 + len(moves)), score=str(dealt.score),
                                   moves=str(dealt.moves), **PREVIOUS_FLAGS[how])  # fmt: skip
            if how == "resigned":
                fields["finished_at_ms"] = str(started + 5000)
            await r.hset(keys.game(gid).meta, mapping=fields)
            if moves:
                await r.rpush(keys.game(gid).moves, *moves)
            await r.sadd(keys.player_games(player), gid)
        await r.zadd(keys.running_index(), {code: started + 24 * 3600 * 1000})

        # bob, still playing, has seen only the deal: the spectator and ann herself see
        # nothing of ann's board that the deal did not show.
        at_deal = {c for pile in engine.new_game(game, seed).view()["piles"].values()
                   for c in pile}  # fmt: skip
        for watcher in (sam, ann):
            reply = await watcher.request({"t": "watch", "race": code})
            assert reply["t"] == "lobby", reply
            got = {m["player"]: m for m in await watcher.quiet(0.5) if m.get("t") == "seat"}
            board = got[pa]["view"]
            assert {c for pile in board["piles"].values() for c in pile} <= at_deal
            assert sum(board["hidden"].values()) > sum(ahead.view()["hidden"].values())
        for c, player in ((ann, pa), (bob, pb)):
            final = await c.request({"t": "resign", "gid": race_gid(code, player)})
            assert final["t"] == "state" and final["finished"], final
        result = await sam.next("result", race=code)
        rows = {s["player"]: s for s in result["standings"]}
        assert rows["pc"]["resigned"] and rows[pa]["resigned"] and rows[pb]["resigned"]
        assert rows[pa]["score"] == ahead.score
    finally:
        for c in (ann, bob, sam):
            await c.close()
        await r.aclose()


def old_day_packed(score: int, time_ms: int, moves: int) -> int:
    """A day board's sorted-set score as the version before the resigned tie-break packed it
    (score, then time, then moves; lower is better)."""
    return (63 - score) << 47 | time_ms << 16 | moves


async def test_a_day_board_stored_before_the_resigned_tie_break_ranks_by_it(
    server, redis_url, redis_namespace
):
    """Three attempts of a past day, stored as the previous version left them: ann resigned
    at once, bob played on to the end with the same score, cat scored more. After the upgrade
    bob ranks before ann, though ann took less time; and a new result enters in order."""
    keys = Keys(redis_namespace)
    game, date, seed = "quatorze", "2026-03-01", 5
    r = aioredis.Redis.from_url(redis_url, decode_responses=True)
    viewer = await Client.connect(server.ws_url)
    try:
        await viewer.hello("viewer")
        rows = [  # player, name, score, moves, time_ms, resigned
            ("a0a0a0a0a0a0a0a0", "ann", 4, 2, 5_000, True),
            ("b0b0b0b0b0b0b0b0", "bob", 4, 9, 900_000, False),
            ("c0c0c0c0c0c0c0c0", "cat", 10, 12, 1_000_000, False),
        ]
        started = 1_772_323_200_000  # 2026-03-01T00:00Z
        for seq, (player, name, score, moves, time_ms, resigned) in enumerate(rows, 1):
            prefix = f"{seq:010d}"
            entry = f'{{"name":"{name}","score":{score},"moves":{moves},"time_ms":{time_ms},'
            entry += '"won":false}'
            await r.hset(keys.day_entries(game, date), player, prefix + entry)
            await r.zadd(keys.day_board(game, date),
                         {f"{prefix}:{player}": old_day_packed(score, time_ms, moves)})  # fmt: skip
            gid = daily_gid(date, game, player)
            fields = old_game_hash(gid, "daily", game, seed, player, name, started, date=date,
                                   finished="1", finished_at_ms=str(started + time_ms),
                                   resigned="1" if resigned else "0", score=str(score),
                                   moves=str(moves), over="1")  # fmt: skip
            await r.hset(keys.game(gid).meta, mapping=fields)
        board = await viewer.request({"t": "leaderboard", "game": game, "date": date})
        assert board["t"] == "leaderboard", board
        got = [(e["rank"], e["name"], e.get("resigned", False)) for e in board["entries"]]
        assert got == [(1, "cat", False), (2, "bob", False), (3, "ann", True)]
        # The same again (the upgrade is done once), and on the board's web page, which
        # says which attempt was resigned.
        again = await viewer.request({"t": "leaderboard", "game": game, "date": date})
        assert again["entries"] == board["entries"]
        page = f"{server.http_url}/leaderboard/{game}/{date}"
        html = await asyncio.to_thread(lambda: urllib.request.urlopen(page, timeout=10).read())
        rows = re.findall(r"<tr[^>]*><td class=rank>(\d+)</td>.*?</tr>", html.decode(), re.S)
        assert rows == ["1", "2", "3"]
        assert html.decode().count(">resigned</span>") == 1
        assert await r.get(keys.day_layout(game, date)) == "2"
    finally:
        await viewer.close()
        await r.aclose()
