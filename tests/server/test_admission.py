"""What anonymous clients may hold and make (server/edge/admission.py, PlayerRepo.create_player):
connections in total and per address, new players per address, players who never play.

Every connection counts from TCP accept to close, HTTP ones too: the server's start-up
health checks may still be counted for a moment when a test begins, so a connection the
test expects to get in is retried while refused (`admitted`); one it expects refused is
refused whatever else is still counted."""

from __future__ import annotations

import asyncio
import re
import socket
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
import redis
from support.server_proc import ServerProcess
from support.ws_client import Client
from websockets.exceptions import InvalidStatus

from server.edge.admission import address_key, parse_address
from server.play.names import fold_name
from server.store.keys import Keys
from server.store.player_repo import hash_token


def metric(server: ServerProcess, name: str, labels: str = "") -> float:
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(server.http_url + "/metrics", timeout=5) as r:
                text = r.read().decode()
            break
        except (ConnectionResetError, urllib.error.URLError):
            if time.monotonic() > deadline:  # closed while this address holds too many
                raise
            time.sleep(0.05)
    pattern = re.escape(name + (f"{{{labels}}}" if labels else "")) + r" (\S+)"
    found = re.search("^" + pattern + "$", text, re.MULTILINE)
    assert found, f"{name}{{{labels}}} not in /metrics"
    return float(found.group(1))


def forwarded(address: str) -> dict[str, Any]:
    return {"additional_headers": {"X-Forwarded-For": address}}


async def refused(url: str, **kwargs: Any) -> InvalidStatus:
    with pytest.raises(InvalidStatus) as caught:
        await Client.connect(url, **kwargs)
    return caught.value


async def admitted(url: str, **kwargs: Any) -> Client:
    """A connection, once the server has room for it (bounded)."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return await Client.connect(url, **kwargs)
        except InvalidStatus as exc:
            if exc.response.status_code not in (429, 503) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.05)


async def test_a_full_server_refuses_handshakes_with_503_and_still_answers_http(servers):
    server = servers.start(env={"SOLITAIRE_MAX_CONNECTIONS": "3"})
    clients = [await admitted(server.ws_url) for _ in range(3)]
    try:
        exc = await refused(server.ws_url)
        assert exc.response.status_code == 503
        assert b"The server is full" in exc.response.body
        assert int(exc.response.headers["Retry-After"]) > 0
        # Health checks and metrics are answered all the same.
        assert server.health() == 200
        assert metric(server, "solitaire_connections_refused_total", 'reason="server_full"') >= 1
        assert (await clients[0].hello("in"))["t"] == "welcome"
        # Once one leaves, a newcomer gets in.
        await clients.pop().close()
        clients.append(await admitted(server.ws_url))
        assert (await clients[-1].hello("newcomer"))["t"] == "welcome"
    finally:
        for c in clients:
            await c.close()


async def test_one_address_gets_its_share_of_connections_and_429_beyond(servers):
    server = servers.start(env={"SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS": "2"})
    clients = [await admitted(server.ws_url) for _ in range(2)]
    try:
        exc = await refused(server.ws_url)
        assert exc.response.status_code == 429
        assert b"Too many connections from your address" in exc.response.body
        assert int(exc.response.headers["Retry-After"]) > 0
        # This server trusts no proxy: a forwarded address changes nothing.
        assert (
            await refused(server.ws_url, **forwarded("203.0.113.9"))
        ).response.status_code == 429
        assert metric(server, "solitaire_connections_refused_total", 'reason="address_full"') >= 2
        assert (await clients[1].hello("still here"))["t"] == "welcome"
    finally:
        for c in clients:
            await c.close()


def test_idle_sockets_count_and_past_twice_the_share_are_closed_unanswered(servers):
    """Connections count from TCP accept, before any request: while an address holds twice
    its share (2 x 2 here), its further connections are closed at once."""
    server = servers.start(env={"SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS": "2"})
    sockets = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(6)]
    answered = closed = 0
    try:
        for s in sockets:  # all six are open at once before any of them says a word
            try:
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                answer = s.recv(100)
            except (ConnectionResetError, BrokenPipeError):
                answer = b""
            if answer.startswith(b"HTTP/1.1 200"):
                answered += 1
            else:
                assert answer == b"", answer
                closed += 1
        assert answered <= 4 and closed >= 2, (answered, closed)
    finally:
        for s in sockets:
            s.close()
    assert metric(server, "solitaire_connections_refused_total", 'reason="address_full"') >= 2


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_share(servers):
    server = servers.start(
        env={
            "SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS": "2",
            "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR": "1",
            "SOLITAIRE_TRUSTED_PROXIES": "127.0.0.0/8, 10.0.0.0/8",
        }
    )
    url = server.ws_url
    # Each proxy appends whom it heard from: the client is the rightmost untrusted entry
    # (what a client wrote in the header itself, on the left, is not believed).
    a = [await Client.connect(url, **forwarded(f"198.51.100.{i}, 203.0.113.1")) for i in (7, 8)]
    b = await Client.connect(url, **forwarded("203.0.113.2, 10.1.2.3"))
    try:
        assert (await refused(url, **forwarded("203.0.113.1"))).response.status_code == 429
        assert (
            await refused(url, **forwarded("203.0.113.1, 10.9.9.9"))
        ).response.status_code == 429
        # New players too are counted per client: one each here.
        assert (await a[0].hello("a"))["t"] == "welcome"
        assert (await a[1].hello("a again"))["code"] == "rate_limited"
        assert (await b.hello("b"))["t"] == "welcome"
    finally:
        for c in [*a, b]:
            await c.close()


async def test_an_address_makes_its_share_of_new_players_then_rate_limited(servers):
    server = servers.start(env={"SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR": "3"})
    clients = [await Client.connect(server.ws_url) for _ in range(5)]
    first, second, third, late, back = clients
    try:
        # A hello refused before any player is made does not count.
        assert (await first.hello("old client", v=2))["code"] == "unsupported_version"
        for i, c in enumerate((first, second, third)):
            assert (await c.hello(f"new {i}"))["t"] == "welcome"
        err = await late.hello("one too many")
        assert err["t"] == "error" and err["code"] == "rate_limited" and err["re"], err
        assert "too many new players from your address this hour" in err["msg"]
        assert metric(server, "solitaire_players_refused_total", 'reason="hour_limit"') == 1
        # A player who comes back with its token is no new player, on a fresh connection
        # or on the refused one.
        assert first.token is not None
        assert (await back.hello("new 0", token=first.token))["player"] == first.player
        assert (await late.hello("new 0", token=first.token))["player"] == first.player
    finally:
        for c in clients:
            await c.close()


async def test_the_new_player_allowance_is_one_for_all_instances_until_the_next_day(servers):
    """Counted in the store: behind a balancer an address gets no share per instance."""
    env = {
        "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR": "2",
        "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_DAY": "3",
    }
    a, b = servers.start(env=env), servers.start(env=env)
    clients = [await Client.connect(s.ws_url) for s in (a, b, a, b)]
    try:
        assert (await clients[0].hello("on a"))["t"] == "welcome"
        assert (await clients[1].hello("on b"))["t"] == "welcome"
        # a itself has made one player only: the allowance is the address's, not a's.
        err = await clients[2].hello("a again")
        assert err["code"] == "rate_limited" and "this hour" in err["msg"], err
        assert metric(a, "solitaire_players_refused_total", 'reason="hour_limit"') == 1
        # A day on (an instance whose clock is ahead, on the same store) the hour's bucket
        # is full again and the day counts afresh (the second would be the day's fourth):
        # two more, the bucket's size, and the hour refuses the third.
        later = servers.start(env={**env, "SOLITAIRE_CLOCK_OFFSET_S": str(86400)})
        more = [await Client.connect(later.ws_url) for _ in range(3)]
        clients += more
        assert (await more[0].hello("tomorrow 1"))["t"] == "welcome"
        assert (await more[1].hello("tomorrow 2"))["t"] == "welcome"
        err = await more[2].hello("tomorrow 3")
        assert err["code"] == "rate_limited" and "this hour" in err["msg"], err
    finally:
        for c in clients:
            await c.close()


def player_keys(keys: Keys, c: Client, name: str) -> list[str]:
    """The keys a hello without a token makes: the player's meta and instances, its token,
    its name's reservation."""
    assert c.player and c.token
    token = keys.token(hash_token(c.token))
    return [keys.player_meta(c.player), keys.player_interest(c.player), token,
            keys.name(fold_name(name))]  # fmt: skip


async def test_players_who_never_start_a_game_expire(servers, redis_url, redis_namespace):
    server = servers.start(env={"SOLITAIRE_UNPLAYED_PLAYER_TTL_S": "1"})
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    keys = Keys(redis_namespace)
    clients = [await Client.connect(server.ws_url) for _ in range(3)]
    idle, racer, practiser = clients
    try:
        for c, name in ((idle, "idle"), (racer, "racer"), (practiser, "practiser")):
            assert (await c.hello(name))["t"] == "welcome"
        tokens = {c: c.token for c in clients}
        named = {idle: "idle", racer: "racer", practiser: "practiser"}
        stored = {c: player_keys(keys, c, named[c]) for c in clients}
        for key in stored[idle]:
            assert r.ttl(key) > 0, key
        assert (await racer.request({"t": "create", "game": "doublets"}))["t"] == "created"
        practice = await practiser.request({"t": "practice", "game": "doublets", "seed": 3})
        assert practice["t"] == "state"
        # A first game keeps the player for good.
        for key in stored[racer] + stored[practiser]:
            assert r.ttl(key) == -1, key
        deadline = time.monotonic() + 20
        while any(r.exists(k) for k in stored[idle]) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert not any(r.exists(k) for k in stored[idle])
        # The forgotten player's token is unknown now; the others' still work.
        again = [await Client.connect(server.ws_url) for _ in range(3)]
        clients += again
        assert (await again[0].hello("idle", token=tokens[idle]))["code"] == "auth_failed"
        # Its name is free again; the others' are still theirs.
        assert (await again[0].hello("idle"))["t"] == "welcome"
        async with Client.connect(server.ws_url) as other:
            assert (await other.hello("Racer"))["code"] == "name_taken"
        assert (await again[1].hello("racer", token=tokens[racer]))["player"] == racer.player
        back = await again[2].hello("practiser", token=tokens[practiser])
        assert back["player"] == practiser.player
    finally:
        for c in clients:
            await c.close()
        r.close()


def test_addresses_are_counted_as_ipv4_or_ipv6_slash_64():
    """One IPv6 subscriber usually holds a whole /64: counting single addresses would let it
    take 2^64 shares."""

    def key(text: str) -> str | None:
        address = parse_address(text)
        return address_key(address) if address is not None else None

    assert key("2001:db8:1:2::1") == key("[2001:db8:1:2:ff::9]:443") == "2001:db8:1:2::/64"
    assert key("2001:db8:1:3::1") == "2001:db8:1:3::/64"
    assert key("::ffff:192.0.2.4") == key("192.0.2.4:5678") == "192.0.2.4"
    assert key("unknown") is None and key("") is None


async def burst(url: str, n: int) -> tuple[list[Client], list[BaseException]]:
    """`n` WebSocket connections opened at once: those let in, and the refusals."""
    outcomes = await asyncio.gather(
        *(Client.connect(url) for _ in range(n)), return_exceptions=True
    )
    clients = [o for o in outcomes if isinstance(o, Client)]
    return clients, [o for o in outcomes if isinstance(o, BaseException)]


async def test_a_hundred_simultaneous_connections_from_one_address_all_get_in(servers):
    """With the default share of 100, a client that opens 100 connections at once gets all
    100, even while the same address holds sockets that are not WebSocket connections (a
    browser's page loads, a NAT's other users' idle sockets): only accepted connections
    count against the share."""
    server = servers.start(env={"SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS": "100"})
    server.health()
    idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10) for _ in range(30)]
    clients: list[Client] = []
    try:
        clients, refusals = await burst(server.ws_url, 100)
        assert not refusals, f"{len(refusals)} of 100 refused, first: {refusals[0]!r}"
        assert (await clients[-1].hello("hundredth"))["t"] == "welcome"
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        for s in idle:
            s.close()


async def test_past_the_share_only_the_excess_is_refused(servers):
    """130 at once with a share of 100: the 30 refused never count, so exactly 100 get in
    (a refused handshake counted while it was open used to turn others away too)."""
    server = servers.start(env={"SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS": "100"})
    server.health()
    clients: list[Client] = []
    try:
        clients, refusals = await burst(server.ws_url, 130)
        statuses = sorted(
            {getattr(r, "response", None) and r.response.status_code for r in refusals}
        )
        assert (len(clients), len(refusals), statuses) == (100, 30, [429])
    finally:
        await asyncio.gather(*(c.close() for c in clients))
