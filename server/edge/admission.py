"""Who may connect and who may make a new player: limits per client address and in total.

Every TCP connection counts from the moment it is accepted until it is closed, HTTP or
WebSocket, greeted or not, so that idle connections are bounded too. A WebSocket
handshake is refused politely while this process holds more than `max_connections`
(503), or when the client's address already holds `max_connections_per_address` accepted
WebSocket connections (429): only those count against the address's share, so that
neither the handshakes being refused nor its other sockets (page loads, idle ones) turn
away a connection that fits. An address holding twice its share of sockets of any kind
gets further connections closed at once, unanswered. These counts are the process's own:
a connection holds resources of the process it is on.

A `hello` without a token makes a player: each address may make
`max_new_players_per_address_per_hour` an hour (a token bucket of that size, refilled at
that rate) and `max_new_players_per_address_per_day` a UTC day. That allowance is counted
in the store, for all instances together: players are the store's, and an address must
not get one allowance per instance behind a balancer, or a fresh one at each restart.

An address is an IPv4 address or an IPv6 /64 network (what one subscriber usually gets).
Behind a proxy every client would share the proxy's address: connections from a
`trusted_proxies` address are counted under the client that its X-Forwarded-For names
(the rightmost entry that is not itself a trusted proxy), from their handshake on.
"""

from __future__ import annotations

import datetime as dt
import http
import ipaddress
import logging
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import protocol as p
from server.clock import Clock
from server.config import Config
from server.metrics import Metrics
from server.store.stores import Stores

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

RETRY_AFTER_S = 30


@dataclass(frozen=True, slots=True)
class Refusal:
    """A WebSocket handshake refused: the HTTP status and the body that says why."""

    status: http.HTTPStatus
    text: str
    retry_after_s: int = RETRY_AFTER_S


def parse_address(text: str) -> IPAddress | None:
    """An address as a peer name or an X-Forwarded-For entry gives it ("1.2.3.4",
    "1.2.3.4:5678", "2001:db8::1", "[2001:db8::1]:5678"), or None."""
    text = text.strip()
    if text.startswith("["):
        text = text[1 : text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def address_key(address: IPAddress) -> str:
    """The name limits count under: the IPv4 address, or the IPv6 address's /64."""
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


def parse_networks(entries: Iterable[str]) -> tuple[IPNetwork, ...]:
    """Addresses and networks ("10.0.0.5", "172.16.0.0/12", "fd00::/8"); raises ValueError
    naming the first that is neither."""
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(entry.strip(), strict=False))
        except ValueError:
            raise ValueError(f"not an address or network: {entry.strip()!r}") from None
    return tuple(networks)


class Admission:
    """The counts of one process: connections in total and per address. The event loop's
    thread only."""

    def __init__(self, config: Config, metrics: Metrics) -> None:
        self.max_connections = config.max_connections
        self.max_per_address = config.max_connections_per_address
        self.trusted = parse_networks(config.trusted_proxies)
        self.metrics = metrics
        self.total = 0
        self.per_address: dict[str, int] = {}  # sockets open, of any kind
        self.accepted: dict[str, int] = {}  # WebSocket connections let in
        self._counted: dict[Hashable, str | None] = {}  # connection -> address it counts under
        self._accepted: dict[Hashable, str] = {}

    # ------------------------------------------------------------ connections

    def opened(self, conn: Hashable, peer: str) -> tuple[str, bool]:
        """A connection was accepted from `peer`: its address, and whether it may stay
        (False: its address holds twice its share already; close it unanswered)."""
        address = parse_address(peer)
        self.total += 1
        if address is None or self._is_trusted(address):
            self._counted[conn] = None  # counted under its client's address at the handshake
            return (address_key(address) if address else peer), True
        key = address_key(address)
        count = self._count(conn, key)
        if self.max_per_address and count > 2 * self.max_per_address:
            self.metrics.connections_refused.labels("address_full").inc()
            return key, False
        return key, True

    def admit(
        self, conn: Hashable, address: str, forwarded: list[str]
    ) -> tuple[str, Refusal | None]:
        """A WebSocket handshake of a connection counted as `address`, with the request's
        X-Forwarded-For values: the client's address, and the refusal if it may not open."""
        if self._counted.get(conn, "") is None:
            address = self._client_of_proxy(address, forwarded)
            self._count(conn, address)
        if self.max_connections and self.total > self.max_connections:
            self.metrics.connections_refused.labels("server_full").inc()
            log.warning("connection from %s refused: %d connections open (max %d)",
                        address, self.total, self.max_connections)  # fmt: skip
            return address, Refusal(
                http.HTTPStatus.SERVICE_UNAVAILABLE, "The server is full; try again later.\n"
            )
        if self.max_per_address and self.accepted.get(address, 0) >= self.max_per_address:
            self.metrics.connections_refused.labels("address_full").inc()
            log.info("connection from %s refused: more than %d from that address",
                     address, self.max_per_address)  # fmt: skip
            return address, Refusal(
                http.HTTPStatus.TOO_MANY_REQUESTS,
                f"Too many connections from your address (at most {self.max_per_address}); "
                "close some and try again.\n",
            )
        self._accepted[conn] = address
        _add(self.accepted, address, 1)
        return address, None

    def closed(self, conn: Hashable) -> None:
        """A connection counted by `opened` is closed."""
        accepted = self._accepted.pop(conn, None)
        if accepted is not None:
            _add(self.accepted, accepted, -1)
        if conn not in self._counted:
            return
        address = self._counted.pop(conn)
        self.total -= 1
        if address is not None:
            _add(self.per_address, address, -1)

    def _count(self, conn: Hashable, address: str) -> int:
        self._counted[conn] = address
        count = self.per_address.get(address, 0) + 1
        self.per_address[address] = count
        return count

    def _is_trusted(self, address: IPAddress) -> bool:
        return any(address in network for network in self.trusted)

    def _client_of_proxy(self, proxy: str, forwarded: list[str]) -> str:
        """The rightmost X-Forwarded-For entry that is not a trusted proxy (each proxy
        appends the address it got the request from); the proxy's own if there is none."""
        entries = [e for value in forwarded for e in value.split(",")]
        for entry in reversed(entries):
            address = parse_address(entry)
            if address is None:
                break
            if not self._is_trusted(address):
                return address_key(address)
        return proxy


def _add(counts: dict[str, int], key: str, n: int) -> None:
    """counts[key] += n, without keeping keys at zero (addresses come and go)."""
    left = counts.get(key, 0) + n
    if left:
        counts[key] = left
    else:
        del counts[key]


class NewPlayers:
    """Each client address's allowance of new players, an hour and a UTC day, counted in
    the store for all instances together."""

    def __init__(self, config: Config, stores: Stores, clock: Clock, metrics: Metrics) -> None:
        self.per_hour = config.max_new_players_per_address_per_hour
        self.per_day = config.max_new_players_per_address_per_day
        self.stores = stores
        self.clock = clock
        self.metrics = metrics

    async def take(self, address: str) -> None:
        """Count one more player made by `address` (as Admission names it); Refused
        (rate_limited) if it has made its allowance."""
        if not (self.per_hour or self.per_day):
            return
        limit = await self._count(address, 1)
        if not limit:
            return
        self.metrics.players_refused.labels(f"{limit}_limit").inc()
        if limit == "hour":
            log.info("new player refused: %s made %d this hour", address, self.per_hour)
            raise p.Refused(
                p.RATE_LIMITED,
                "too many new players from your address this hour; play as one you have, "
                "or try again later",
            )
        log.info("new player refused: %s made %d today", address, self.per_day)
        raise p.Refused(
            p.RATE_LIMITED,
            f"too many new players from your address today (at most {self.per_day}); play "
            "as one you have, or try again tomorrow (UTC)",
        )

    async def give_back(self, address: str) -> None:
        """A player counted by `take` was not made after all (its hello was refused)."""
        if self.per_hour or self.per_day:
            await self._count(address, -1)

    async def _count(self, address: str, step: int) -> str:
        """Count `step` players made from `address` today (UTC) and this hour."""
        now_ms = self.clock.now_ms()
        now = dt.datetime.fromtimestamp(now_ms / 1000, dt.UTC)
        # Kept while it says anything: a full bucket again (an hour), the day's end.
        end_of_day = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
        ttl_ms = max(3_600_000, int((end_of_day - now).total_seconds() * 1000)) + 60_000
        return await self.stores.players.take_new_player(
            address, self.per_hour, self.per_day, now_ms, now.date().isoformat(), ttl_ms, step
        )
