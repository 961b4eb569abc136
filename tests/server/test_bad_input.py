"""Bad input never hurts: each gets its error or close code, and nothing changes for anyone."""

from __future__ import annotations

import asyncio
import time

import msgspec
import pytest
import redis
from helpers import close_all, seat_race
from support.ws_client import Client
from websockets.exceptions import ConnectionClosed


def snapshot(redis_url: str, namespace: str) -> dict[str, object]:
    """Every key of the namespace with its whole value (but the daily deals, which every
    server prepares in the background whatever its clients send, and the players' open
    connections, noted as they open and close)."""
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    out: dict[str, object] = {}
    try:
        for key in r.scan_iter(match="{" + namespace + ":*"):
            if key.endswith((":deal", ":deal_lock", ":conns")):
                continue
            kind = r.type(key)
            if kind == "hash":
                out[key] = r.hgetall(key)
            elif kind == "list":
                out[key] = r.lrange(key, 0, -1)
            elif kind == "set":
                out[key] = sorted(r.smembers(key))
            elif kind == "zset":
                out[key] = r.zrange(key, 0, -1, withscores=True)
            else:
                out[key] = r.get(key)
    finally:
        r.close()
    return out


def mp(**fields: object) -> bytes:
    return msgspec.msgpack.encode(fields)


def nested(depth: int) -> bytes:
    """A msgpack map whose `gid` is `depth` arrays deep (built by hand: no recursion)."""
    return b"\x83\xa1t\xa3get\xa2id\x05\xa3gid" + b"\x91" * depth + b"\xc0"


BAD_FRAMES: list[tuple[str, bytes | str, int | None]] = [
    # (what, frame, the `re` the error must carry)
    ("text frame", '{"t": "get"}', None),
    ("msgpack list", msgspec.msgpack.encode(["get", 1]), None),
    ("msgpack int", msgspec.msgpack.encode(7), None),
    ("msgpack nil", msgspec.msgpack.encode(None), None),
    ("not msgpack", b"\xc1\xc1\xc1", None),
    ("truncated", mp(t="get", gid="x" * 40)[:-5], None),
    ("integer keys", msgspec.msgpack.encode({1: "get", 2: 3}), None),
    ("no type", mp(id=3, gid="x"), 3),
    ("type not a string", mp(t=5, id=4), 4),
    ("unknown type", mp(t="teleport", id=5), 5),
    ("id not an int", mp(t="get", gid="x", id="7"), None),
    ("deeply nested", nested(12_000), 5),
    ("huge string", mp(t="get", gid="g" * 15_000, id=8), 8),
    ("n as string", mp(t="move", gid="x", n="0", m="deal", id=9), 9),
    ("n negative", mp(t="move", gid="x", n=-1, m="deal", id=10), 10),
    ("n huge", mp(t="move", gid="x", n=2**63, m="deal", id=11), 11),
    ("m a list", mp(t="move", gid="x", n=0, m=["deal"], id=12), 12),
    ("m too long", mp(t="move", gid="x", n=0, m="d" * 17, id=13), 13),
    ("gid an int", mp(t="get", gid=42, id=14), 14),
    ("gid missing", mp(t="resign", id=15), 15),
    ("unknown game", mp(t="create", game="chess", id=16), 16),
    ("one player", mp(t="create", game="doublets", max_players=1, id=17), 17),
    ("17 players", mp(t="create", game="doublets", max_players=17, id=18), 18),
    ("bool players", mp(t="create", game="doublets", max_players=True, id=19), 19),
    ("limit 29 s", mp(t="create", game="doublets", time_limit_s=29, id=20), 20),
    ("limit 7201 s", mp(t="create", game="doublets", time_limit_s=7201, id=21), 21),
    ("seed 0", mp(t="create", game="doublets", seed=0, id=22), 22),
    ("seed 2^31", mp(t="create", game="doublets", seed=2**31, id=23), 23),
    ("race an int", mp(t="join", race=123456, id=24), 24),
    ("second hello", mp(t="hello", v=1, name="again", id=25), 25),
    ("float id", mp(t="get", gid="x", id=1.5), None),
]  # fmt: skip


async def test_bad_frames_get_bad_request_and_change_nothing(server, redis_url, redis_namespace):
    _code, seats, _ = await seat_race(server.ws_url, ["victim", "attacker"], "quatorze", 7)
    victim, attacker = seats
    try:
        await victim.play()
        await asyncio.sleep(0.2)
        before = snapshot(redis_url, redis_namespace)
        victim_before = await victim.client.request({"t": "get", "gid": victim.gid})
        for what, frame, re in BAD_FRAMES:
            await attacker.client.send_raw(frame)
            err = await attacker.client.take(lambda m: m.get("t") == "error")
            assert err["code"] == "bad_request", (what, err)
            assert err.get("re") == re, (what, err)
            assert err["msg"], what
            assert not attacker.client.closed, what
            # The other player does not notice.
            assert (await victim.client.request({"t": "get", "gid": victim.gid})) | {
                "elapsed_ms": 0,
                "re": 0,
            } == victim_before | {"elapsed_ms": 0, "re": 0}, what
        assert snapshot(redis_url, redis_namespace) == before
        # Both still play.
        assert (await victim.play())["t"] == "state"
        assert (await attacker.play())["t"] == "state"
    finally:
        await close_all(seats)


async def test_other_players_games_are_not_found_and_untouched(server, redis_url, redis_namespace):
    _code, seats, _ = await seat_race(server.ws_url, ["victim", "attacker"], "quatorze", 7)
    victim, attacker = seats
    try:
        await victim.play()
        before = snapshot(redis_url, redis_namespace)
        legal = sorted(victim.game.legal_moves())[0]
        for req in (
            {"t": "move", "gid": victim.gid, "n": 1, "m": legal},
            {"t": "move", "gid": victim.gid, "n": 0, "m": victim.moves[0]},
            {"t": "get", "gid": victim.gid},
            {"t": "resign", "gid": victim.gid},
            {"t": "get", "gid": "r.ZZZZZZ.nobody"},
            {"t": "get", "gid": "no-such-game"},
            {"t": "get", "gid": "r.{x}.y"},
            {"t": "move", "gid": "d.2020-01-01.doublets.x", "n": 0, "m": "deal"},
        ):
            r = await attacker.client.request(req)
            assert r["t"] == "error" and r["code"] == "not_found", (req, r)
            assert "victim" not in r["msg"] and victim.client.player not in r["msg"]
        assert snapshot(redis_url, redis_namespace) == before
        assert not [m for m in victim.client.inbox if m.get("t") == "state"]
        assert (await victim.play())["n"] == 2
    finally:
        await close_all(seats)


async def test_names_count_characters_not_bytes(server):
    c = await Client.connect(server.ws_url)
    try:
        for name in ("é" * 25, "", "tab\there", "bell\x07", "   "):
            r = await c.hello(name)
            assert r["code"] == "bad_request", name
        assert (await c.hello("v" * 1, v=2))["code"] == "unsupported_version"
        w = await c.hello("é" * 24)  # 48 bytes, 24 characters
        assert w["t"] == "welcome" and w["name"] == "é" * 24
    finally:
        await c.close()


def deep_field(depth: int, before: dict[str, object], after: dict[str, object]) -> bytes:
    """A map of `before`'s fields, then `deep` nested `depth` arrays deep, then `after`'s."""
    fields = [(k, msgspec.msgpack.encode(v)) for k, v in before.items()]
    fields.append(("deep", b"\x91" * depth + b"\xc0"))
    fields += [(k, msgspec.msgpack.encode(v)) for k, v in after.items()]
    body = b"".join(msgspec.msgpack.encode(k) + v for k, v in fields)
    return bytes([0x80 | len(fields)]) + body


async def test_a_frame_nested_too_deeply_is_answered_with_its_id_and_why(server):
    """About 1,000 levels, under 16 KiB: deeper than the decoder goes, and said so, with
    the request's id wherever it stands in the map."""
    c = await Client.connect(server.ws_url)
    try:
        await c.hello("digger")
        for frame, re in (
            (deep_field(1_000, {"t": "get", "id": 31, "gid": "x"}, {}), 31),
            (deep_field(1_000, {"t": "get"}, {"id": 32, "gid": "x"}), 32),
            (deep_field(3_000, {}, {"id": 33, "t": "get", "gid": "x"}), 33),
        ):
            assert len(frame) < 16 * 1024
            await c.send_raw(frame)
            err = await c.take(lambda m: m.get("t") == "error")
            assert err["code"] == "bad_request" and err.get("re") == re, err
            assert "nested too deeply" in err["msg"], err
        # A field of the wrong type that also nests deeply: the field is named.
        await c.send_raw(b"\x83\xa1t\xa3get\xa3gid" + b"\x91" * 1_000 + b"\xc0\xa2id\x22")
        err = await c.take(lambda m: m.get("t") == "error")
        assert err.get("re") == 34 and "$.gid" in err["msg"], err
        assert (await c.request({"t": "get", "gid": "r.AAAAAA.x"}))["code"] == "not_found"
    finally:
        await c.close()


async def test_a_text_frame_that_is_not_utf8_closes_1007(server):
    """RFC 6455 8.1; a text frame that is UTF-8 still gets bad_request (the test above)."""
    c = await Client.connect(server.ws_url)
    other = await Client.connect(server.ws_url)
    try:
        await c.hello("sloppy")
        await other.hello("other")
        await c.ws.send(b'{"t": "get", "gid": "\xff\xfe"}', text=True)
        assert await c.wait_closed() == 1007
        assert not [m for m in c.history if m.get("t") == "error"]
        assert (await other.request({"t": "get", "gid": "r.AAAAAA.x"}))["code"] == "not_found"
    finally:
        await c.close()
        await other.close()


async def test_oversized_frame_closes_1009_and_others_carry_on(server):
    _code, seats, _ = await seat_race(server.ws_url, ["victim", "attacker"], "quatorze", 7)
    victim, attacker = seats
    try:
        big = mp(t="get", gid="x", pad="p" * 17_000)
        await attacker.client.send_raw(big)
        assert await attacker.client.wait_closed() == 1009
        assert (await victim.play())["t"] == "state"
    finally:
        await close_all(seats)


@pytest.mark.parametrize(
    "first",
    [
        mp(t="create", game="doublets", id=1),
        mp(t="teleport"),
        b"\xc1",
        "hello",
    ],
    ids=["create", "unknown", "garbage", "text"],
)
async def test_anything_but_hello_first_closes_1008(server, first):
    c = await Client.connect(server.ws_url)
    await c.send_raw(first)
    assert await c.wait_closed() == 1008
    assert not [m for m in c.history if m.get("t") == "welcome"]


async def test_silent_client_is_timed_out_with_1008(servers):
    server = servers.start(env={"SOLITAIRE_HELLO_TIMEOUT_S": "1"})
    silent = await Client.connect(server.ws_url)
    talker = await Client.connect(server.ws_url)
    try:
        await talker.hello("talker")
        assert await silent.wait_closed(timeout=5) == 1008
        assert (await talker.request({"t": "get", "gid": "r.AAAAAA.x"}))["code"] == "not_found"
        assert not talker.closed
    finally:
        await silent.close()
        await talker.close()


async def test_flood_is_rate_limited_then_closed_1008(server, redis_url, redis_namespace):
    """Default limits: 20/s sustained, bursts of 60; over 2 x 20/s for 5 s closes."""
    _code, seats, _ = await seat_race(server.ws_url, ["victim", "flooder"], "quatorze", 7)
    victim, flooder = seats
    try:
        before = snapshot(redis_url, redis_namespace)
        frame = mp(t="get", gid=flooder.gid, id=1)
        sent = 0
        began = time.monotonic()
        while not flooder.client.closed and sent < 1000:
            try:
                await flooder.client.send_raw(frame)
            except ConnectionClosed:
                break
            sent += 1
            if sent % 50 == 0:
                await asyncio.sleep(0.01)
                # The victim is served in the middle of the flood.
                assert (await victim.client.request({"t": "get", "gid": victim.gid}))[
                    "t"
                ] == "state"
        assert await flooder.client.wait_closed() == 1008
        elapsed = time.monotonic() - began
        replies = [m for m in flooder.client.history if m.get("re") == 1]
        limited = [m for m in replies if m.get("code") == "rate_limited"]
        served = [m for m in replies if m.get("t") == "state"]
        # The burst (less the hello and join it spent), plus what trickled in meanwhile.
        assert 55 <= len(served) <= 60 + 20 * (elapsed + 0.5)
        assert limited and all(m["t"] == "error" for m in limited)
        assert len(replies) <= 2 * 20 * 5 + 1  # closed once over twice the rate for 5 s
        assert snapshot(redis_url, redis_namespace) == before
        assert (await victim.play())["t"] == "state"
    finally:
        await close_all(seats)
