"""How messages reach the server (server/connection.py): fragments, pipelining, order."""

from __future__ import annotations

import msgspec
from helpers import close_all, seat_race
from support.ws_client import Client


def mp(**fields: object) -> bytes:
    return msgspec.msgpack.encode(fields)


def pieces(data: bytes, count: int) -> list[bytes]:
    size = -(-len(data) // count)
    return [data[i : i + size] for i in range(0, len(data), size)]


async def test_a_fragmented_request_is_one_request(server):
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    ann = seats[0]
    try:
        whole = await ann.client.request({"t": "get", "gid": ann.gid})
        # The same request in five fragments (websockets sends an iterable as fragments).
        await ann.client.ws.send(pieces(mp(t="get", gid=ann.gid, id=77), 5))
        split = await ann.client.take(lambda m: m.get("re") == 77)
        assert split["t"] == "state" and split["view"] == whole["view"]
        assert split["n"] == whole["n"]
    finally:
        await close_all(seats)


async def test_too_many_fragments_close_1009_and_others_carry_on(server):
    _code, seats, _ = await seat_race(server.ws_url, ["victim", "attacker"], "quatorze", 7)
    victim, attacker = seats
    try:
        # 300 fragments of one byte: far under the size limit, over the 256 fragments kept.
        frame = mp(t="get", gid="x", pad="p" * 280)
        await attacker.client.ws.send(pieces(frame, len(frame)))
        assert await attacker.client.wait_closed() == 1009
        assert (await victim.play())["t"] == "state"
    finally:
        await close_all(seats)


async def test_pipelined_moves_are_answered_in_order(server):
    """40 moves sent without waiting (more than the 16 messages read ahead before the
    server stops reading): each is applied once, in order, and answered in order."""
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    ann = seats[0]
    try:
        game = ann.game.copy()
        moves = []
        for _ in range(40):
            legal = sorted(game.legal_moves())
            if not legal:
                break
            game.play(legal[0])
            moves.append(legal[0])
        assert len(moves) >= 20, "the deal should allow a long run of moves"
        for n, m in enumerate(moves):
            await ann.client.send({"t": "move", "gid": ann.gid, "n": n, "m": m, "id": 500 + n})
        replies = [await ann.client.take(lambda r, i=i: r.get("re") == 500 + i) for i in
                   range(len(moves))]  # fmt: skip
        assert [r["n"] for r in replies] == list(range(1, len(moves) + 1))
        assert replies[-1]["view"] == game.view()
        order = [m["re"] for m in ann.client.history if 500 <= (m.get("re") or 0) < 1000]
        assert order == sorted(order) and len(order) == len(moves)
    finally:
        await close_all(seats)


async def test_text_frames_after_hello_are_bad_requests(server):
    c = await Client.connect(server.ws_url)
    try:
        await c.hello("texter")
        await c.send_raw('{"t": "get"}')
        err = await c.next("error")
        assert err["code"] == "bad_request" and "text" in err["msg"]
        assert (await c.request({"t": "get", "gid": "r.AAAAAA.x"}))["code"] == "not_found"
    finally:
        await c.close()
