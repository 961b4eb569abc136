"""This process's Prometheus metrics, served at /metrics (one registry per server, no globals)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.exposition import generate_latest

# Redis round trips take from ~50 µs (loopback) to tens of ms (a loaded remote cluster).
REDIS_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1.0)


class HotCounter:
    """A counter bumped once per move: `value += 1` on a plain int, read at scrape time.
    (prometheus_client's Counter takes a lock on every `inc`, a few µs a move.)"""

    def __init__(self, name: str, documentation: str, registry: CollectorRegistry) -> None:
        self.name = name
        self.documentation = documentation
        self.value = 0
        registry.register(self)

    def describe(self) -> list[CounterMetricFamily]:
        return [CounterMetricFamily(self.name, self.documentation)]

    def collect(self) -> list[CounterMetricFamily]:
        return [CounterMetricFamily(self.name, self.documentation, value=self.value)]


class Metrics:
    """This process's counters, exported at /metrics (one registry per server, no globals).

    The server updates them where things happen: `connections` on open and close,
    `moves_accepted` / `moves_rejected` in the move handler, `races_running` from the race
    reaper, `redis_latency.observe(seconds)` around store round trips.
    """

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.connections = Gauge(
            "solitaire_connections", "WebSocket connections open on this process", registry=r
        )
        self.connections_opened = Counter(
            "solitaire_connections_opened", "WebSocket connections accepted", registry=r
        )
        self.connections_refused = Counter(
            "solitaire_connections_refused",
            "Connections refused, by reason: server_full (HTTP 503), address_full (HTTP 429, "
            "or closed at once past twice the limit)",
            ["reason"],
            registry=r,
        )
        for reason in ("server_full", "address_full"):
            self.connections_refused.labels(reason)  # exported at 0 from the start
        self.moves_accepted = HotCounter(
            "solitaire_moves_accepted", "Moves checked, stored and acknowledged", registry=r
        )
        self.moves_rejected = Counter(
            "solitaire_moves_rejected",
            "Moves refused, by error code (illegal_move, out_of_order, ...)",
            ["code"],
            registry=r,
        )
        self.races_running = Gauge(
            "solitaire_races_running",
            "Races started and not yet finished (whole store)",
            registry=r,
        )
        self.redis_latency = Histogram(
            "solitaire_redis_latency_seconds",
            "Round-trip time of store operations",
            buckets=REDIS_BUCKETS,
            registry=r,
        )
        self.redis_ping = Gauge(
            "solitaire_redis_ping_seconds",
            "Round-trip time of a PING at the last scrape",
            registry=r,
        )
        self.players_created = Counter(
            "solitaire_players_created", "New players (hello without a token) welcomed", registry=r
        )
        self.players_refused = Counter(
            "solitaire_players_refused",
            "Hellos refused, by reason: name_taken; hour_limit, day_limit (a hello without a "
            "token once the client's address made its allowance of new players)",
            ["reason"],
            registry=r,
        )
        for reason in ("name_taken", "hour_limit", "day_limit"):
            self.players_refused.labels(reason)  # exported at 0 from the start
        self.daily_started = Counter(
            "solitaire_daily_attempts_started", "Daily attempts started", ["game"], registry=r
        )
        self.daily_finished = Counter(
            "solitaire_daily_attempts_ranked",
            "Daily attempts entered on a board",
            ["game"],
            registry=r,
        )
        self.leaderboard_requests = Counter(
            "solitaire_leaderboard_requests",
            "Leaderboard queries, by channel (ws, html, json)",
            ["via"],
            registry=r,
        )
        self.http_requests = Counter(
            "solitaire_http_requests", "HTTP requests served, by status", ["status"], registry=r
        )
        # What loading and undoing games costs (server/play/cache.py, practice.py): a
        # snapshot every snapshot_every moves keeps both small whatever a game's length.
        self.game_loads = Counter(
            "solitaire_game_loads", "Games loaded from the store and replayed", registry=r
        )
        self.moves_read = Counter(
            "solitaire_game_moves_read", "Move list entries read to load games", registry=r
        )
        self.moves_replayed = Counter(
            "solitaire_game_moves_replayed",
            "Moves replayed to rebuild positions, by where: loop (the event loop) or thread "
            "(a worker thread, for a replay from far back)",
            ["where"],
            registry=r,
        )
        # Quick races (server/play/quick.py): the matcher's own work, on the instance that
        # runs it.
        self.quick_round_seconds = Histogram(
            "solitaire_quick_round_seconds",
            "Time the matcher takes to decide one round's races (the queue as read)",
            buckets=(0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0),
            registry=r,
        )
        self.quick_races = Counter(
            "solitaire_quick_races", "Quick races formed, by kind: rated, bot", ["kind"], registry=r
        )
        for kind in ("rated", "bot"):
            self.quick_races.labels(kind)
        self.bad_snapshots = Counter(
            "solitaire_game_bad_snapshots",
            "Stored snapshots found unusable and skipped",
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
