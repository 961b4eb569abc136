"""Every setting and limit of the server, in one dataclass that docs/protocol.md lists.

Each setting has a command-line flag and an environment variable (flag wins);
`Config.from_args` builds the dataclass from both.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from protocol.limits import DEFAULT_LIMITS as _L
from protocol.limits import Limits


@dataclass(frozen=True)
class Config:
    # Where and how to serve.
    host: str = "127.0.0.1"
    port: int = 8765
    # The address players use (http(s)://HOST[:PORT][/PATH]): told in `welcome.url`, so
    # that clients share race links that work from other machines. None: not known.
    public_url: str | None = None
    redis_url: str | None = None  # None: start the embedded valkey-server in data_dir
    redis_cluster: bool = False
    data_dir: Path = Path("./data")
    # The embedded store's appendfsync: "always" (fsync before each reply, so an
    # acknowledged move survives a power loss) or "everysec" (up to a second lost to one).
    store_fsync: str = "always"
    secret: str | None = None  # None: generated on first start, kept in the store
    namespace: str = "sr"
    log_level: str = "INFO"
    log_format: str = "text"
    clock_offset_s: float = 0.0

    # Per-connection limits.
    rate: float = 20.0  # messages per second, sustained
    burst: int = 60
    flood_window_s: float = 5.0  # closed (1008) when over 2 x rate for this long
    hello_timeout_s: float = 10.0
    max_frame_bytes: int = 16 * 1024  # larger frames close the connection with 1009
    max_outbox_bytes: int = 256 * 1024  # a client that reads slower than this is dropped
    max_fragments: int = 256  # pieces one message may come in (more: closed with 1009)
    inbox_high: int = 16  # messages waiting to be handled before reading pauses ...
    inbox_low: int = 4  # ... and how few before it resumes

    # Admission (server/edge/admission.py); 0: no limit. Connections per process:
    max_connections: int = 10_000  # open at once; a WebSocket handshake beyond gets 503
    max_connections_per_address: int = 100  # beyond: 429 at the handshake
    trusted_proxies: tuple[str, ...] = ()  # networks whose X-Forwarded-For names the client
    # Web origins besides the server's own whose pages may open a WebSocket (server/edge/origin.py).
    allowed_origins: tuple[str, ...] = ()
    # New players (hello without a token) per client address, counted in the store for all
    # instances together: an hour (a token bucket, bursts of as many) and a UTC day.
    max_new_players_per_address_per_hour: int = 30
    max_new_players_per_address_per_day: int = 0
    # A player who has started no game this long after being made is forgotten.
    unplayed_player_ttl_s: int = 24 * 3600

    # Protocol field limits (protocol/limits.py has the protocol's defaults).
    name_max_chars: int = _L.name_max_chars
    token_max_chars: int = _L.token_max_chars
    gid_max_chars: int = _L.gid_max_chars
    race_code_max_chars: int = _L.race_code_max_chars
    move_max_chars: int = _L.move_max_chars
    max_moves_per_game: int = _L.max_moves_per_game  # a practice game's cap too
    min_players: int = _L.min_players
    max_players: int = _L.max_players
    default_max_players: int = _L.default_max_players
    min_time_limit_s: int = _L.min_time_limit_s
    max_time_limit_s: int = _L.max_time_limit_s
    leaderboard_max_rows: int = _L.leaderboard_max_rows
    leaderboard_default_rows: int = _L.leaderboard_default_rows

    # Race lifetime.
    race_code_length: int = 12  # 60 random bits: see docs/protocol.md, "Races"
    untimed_race_max_s: int = 24 * 3600  # an untimed race is closed this long after its start
    async_window_s: int = 24 * 3600  # an asynchronous race's window when `create` names none
    challenges_listed: int = 50  # asynchronous races listed by `challenges` at most
    lobby_ttl_s: int = 24 * 3600  # a lobby nobody starts is forgotten after this
    # A player with no connection left this long leaves the lobbies they wait in (a host
    # hands the race on); a client that lost its network reconnects well within it.
    lobby_leave_grace_s: float = 30.0
    finished_race_ttl_s: int = 30 * 24 * 3600  # finished races are kept this long
    reaper_interval_s: float = 1.0  # how often expired races are looked for
    reaper_full_scan_s: float = 30.0  # how often every running race is checked for completion
    # Spectators (server/play/spectators.py, server/edge/watchers.py), counted per process.
    max_spectators_per_race: int = 1000  # connections of this process watching one race
    max_watched_races_per_connection: int = 4

    # Process behaviour.
    # Server processes serving the port, each an instance of its own on the shared store
    # (server/workers.py); 0: one per CPU core the process may use.
    workers: int = 1
    event_loop: str = "uvloop"  # or "asyncio"; uvloop takes about a tenth off a move's CPU
    game_cache_size: int = 20_000  # games kept replayed in memory
    # The garbage collector's schedule (server/collector.py): new containers between two
    # collections of the young generation (Python's default is 700), and seconds between
    # two full collections (never started by Python itself here).
    gc_young_threshold: int = 20_000
    gc_full_every_s: float = 600.0
    # Games (server/play/game_machine.py): a race seat or daily attempt takes at most this
    # many moves (and never more than max_moves_per_game); a snapshot of the position is
    # stored every snapshot_every moves, so that no load or undo replays more than that.
    max_ranked_moves: int = 10_000
    snapshot_every: int = 500
    # A load whose snapshots cannot serve (server/play/cache.py) reads the move list this
    # many entries at a time, and replays more than game_load_loop_replay_max moves in a
    # worker thread rather than in the event loop.
    game_load_chunk_moves: int = 10_000
    game_load_loop_replay_max: int = 2_000
    game_keys_memo_size: int = 100_000  # games whose key names are kept at hand
    race_memo_size: int = 10_000  # races whose seats (and lobbies) are kept at hand
    spectator_memo_size: int = 2_000  # seats' games kept replayed for spectators and pages
    shutdown_grace_s: float = 5.0  # time given to in-flight requests on SIGTERM
    # Keepalive (server/edge/keepalive.py): a ping every ping_interval_s on each connection;
    # one unanswered for ping_timeout_s closes it with 1011.
    ping_interval_s: float = 20.0
    ping_timeout_s: float = 20.0

    # Solvers (server/solver_pool.py): CPU-heavy searches run in a bounded process pool.
    solver_workers: int = 2  # processes; the event loop never runs a search
    solver_queue_max: int = 16  # hints (or bot searches) waiting or running; more: `unavailable`
    solver_owners_remembered: int = 10_000  # players whose hint share and turn are kept
    # Winnable dailies (server/daily/deals.py): candidates from the day's HMAC seed on, each
    # searched up to daily_budget_nodes positions (deterministic, so every instance would pick
    # the same deal; the first one stored wins anyway) or daily_budget_s, whichever comes first.
    daily_budget_nodes: int = 60_000
    daily_budget_s: float = 5.0
    daily_max_candidates: int = 40
    daily_prepare_ahead: bool = True  # this instance prepares today's and tomorrow's deals
    daily_prepare_delay_s: float = 5.0  # first pass after start-up: reconnecting players first
    daily_prepare_interval_s: float = 60.0  # how often today's and tomorrow's deals are checked
    daily_sweep_batch: int = 200  # attempts whose day is over closed per store read
    daily_lock_s: float = 30.0  # lock of the instance searching a day's deal, renewed meanwhile
    # Practice games (server/play/practice.py).
    hint_budget_s: float = 1.0
    # One hint at a time per player, and on average at most hint_share seconds of search a
    # second (after a first hint_burst_s seconds): a player's hints take turns with others'.
    hint_share: float = 0.25
    hint_burst_s: float = 10.0
    practice_ttl_s: int = 7 * 24 * 3600  # an idle practice game is forgotten after this
    # Replays (server/play/replays.py).
    replay_page_moves: int = 2000  # moves in one `replay` reply (a frame of about 15 KB)
    replay_chunk_moves: int = 200  # moves (about a millisecond) a replay page replays at a time
    replay_checkpoint_moves: int = 1000  # a replay page's memo keeps every so many positions
    replay_memo_size: int = 256  # games whose positions the replay pages keep
    # Bots (server/play/bots.py).
    bot_think_scale: float = 1.0  # multiplies every bot's think time (tests use 0.01)
    bot_lease_s: float = 10.0  # an instance drives a race's bots while it renews this lease
    bot_solve_budget_s: float = 2.0  # per search of a medium or hard bot
    bot_stall_moves: int = 150  # a bot resigns after this many moves without a card home
    # Quick races (server/play/quick.py, server/play/matcher.py).
    quick_first_window: int = 100  # widest spread of ratings in a race of new arrivals
    quick_widen_per_s: float = 20.0  # how much wider for every second the oldest waited
    quick_max_players: int = 4  # most seats of a quick race (at least 2)
    quick_countdown_s: float = 5.0  # from `matched` to the race's start
    quick_bot_after_s: float = 30.0  # a player alone this long is offered a bot race
    quick_time_limit_s: int = 600  # every quick race's time limit
    quick_round_s: float = 0.25  # how often the matcher (one instance at a time) runs
    quick_lease_s: float = 5.0  # another instance matches once the matcher stops renewing
    # Diagnostics (server/memory.py): trace allocations and answer GET /debug/memory.
    debug_memory: bool = False

    @property
    def limits(self) -> Limits:
        """The protocol field limits this server runs with (its request decoder's)."""
        return Limits(**{f.name: getattr(self, f.name) for f in fields(Limits)})

    @property
    def web_origins(self) -> tuple[str, ...]:
        """The origins whose pages may open a WebSocket besides the server's own: those
        allowed explicitly, and the public URL's (the page a race link opens is there, even
        where a proxy in front rewrites `Host`)."""
        if self.public_url is None:
            return self.allowed_origins
        parts = urlsplit(self.public_url)
        public = normalise_origin(f"{parts.scheme}://{parts.netloc}")
        return (
            (*self.allowed_origins, public)
            if public not in self.allowed_origins
            else (self.allowed_origins)
        )

    @property
    def flood_limit(self) -> float:
        """Messages in one flood window above which a client is closed with 1008."""
        return 2 * self.rate * self.flood_window_s

    @classmethod
    def from_args(
        cls, argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
    ) -> Config:
        parser = build_parser()
        args = parser.parse_args(argv)
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for name, (flag, var, conv, _help) in SETTINGS.items():
            raw = getattr(args, name)  # argparse has converted it already
            if raw is None and var in env and env[var] != "":
                try:
                    raw = conv(env[var])
                except argparse.ArgumentTypeError as exc:
                    parser.error(f"{var} (or {flag}): {exc}")
                except ValueError:
                    parser.error(f"{var} (or {flag}): invalid {conv.__name__} value: {env[var]!r}")
            if raw is not None:
                values[name] = raw
        if "max_players" in values and "default_max_players" not in values:
            # Lowering the maximum alone lowers the default with it, rather than refusing.
            values["default_max_players"] = min(_L.default_max_players, values["max_players"])
        config = cls(**values)
        problems = config.limits.problems(spell=lambda f: SETTINGS[f][0] if f in SETTINGS else f)
        if problems:
            parser.error("limits that do not fit together: " + "; ".join(problems))
        if config.quick_max_players < 2:
            parser.error("--quick-max-players must be at least 2: a race has two seats or more")
        return config

    def describe(self) -> dict[str, Any]:
        """The settings as plain values, for logs (the secret masked)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        if out["secret"]:
            out["secret"] = "***"
        if out["redis_url"] and "@" in out["redis_url"]:
            out["redis_url"] = "***@" + out["redis_url"].rsplit("@", 1)[1]
        out["data_dir"] = str(out["data_dir"])
        return out


def _bool(raw: str) -> bool:
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off", ""):
        return False
    raise argparse.ArgumentTypeError(f"not a boolean: {raw!r}")


def _level(raw: str) -> str:
    level = raw.upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise argparse.ArgumentTypeError(f"unknown log level: {raw!r}")
    return level


def _fmt(raw: str) -> str:
    if raw not in ("text", "json"):
        raise argparse.ArgumentTypeError(f"log format must be text or json, not {raw!r}")
    return raw


def _fsync(raw: str) -> str:
    if raw not in ("always", "everysec"):
        raise argparse.ArgumentTypeError(f"store fsync must be always or everysec, not {raw!r}")
    return raw


def _event_loop(raw: str) -> str:
    if raw not in ("uvloop", "asyncio"):
        raise argparse.ArgumentTypeError(f"event loop must be uvloop or asyncio, not {raw!r}")
    return raw


def _namespace(raw: str) -> str:
    if not raw or len(raw) > 32 or not all(c.isalnum() or c in "_-" for c in raw):
        raise argparse.ArgumentTypeError("namespace: 1 to 32 letters, digits, '_' or '-'")
    return raw


def _positive(conv: Any) -> Any:
    def check(raw: str) -> Any:
        value = conv(raw)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {raw!r}")
        return value

    check.__name__ = conv.__name__  # argparse says "invalid int value", not "invalid check"
    return check


def _limit(conv: Any) -> Any:
    def check(raw: str) -> Any:
        value = conv(raw)
        if value < 0:
            raise argparse.ArgumentTypeError(f"must be 0 (no limit) or more: {raw!r}")
        return value

    check.__name__ = conv.__name__
    return check


def _networks(raw: str) -> tuple[str, ...]:
    out = []
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        try:
            out.append(str(ipaddress.ip_network(entry, strict=False)))
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an address or network: {entry!r}") from None
    return tuple(out)


def normalise_origin(origin: str) -> str:
    """A web origin as browsers send it in `Origin`: scheme://host[:port], lower case, no
    default port, no path; ValueError if `origin` is not one."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not a web origin (http(s)://host[:port]): {origin!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        raise ValueError(f"an origin has no path, query or user: {origin!r}")
    try:
        port = parts.port
    except ValueError:
        raise ValueError(f"not a web origin (bad port): {origin!r}") from None
    host = parts.hostname
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[parts.scheme]
    return f"{parts.scheme}://{host}" + (f":{port}" if port not in (None, default) else "")


def _origins(raw: str) -> tuple[str, ...]:
    out = []
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        try:
            out.append(normalise_origin(entry))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return tuple(out)


MAX_WORKERS = 256


def _workers(raw: str) -> int:
    value = int(raw)
    if not 0 <= value <= MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"0 (one per core) to {MAX_WORKERS}, not {raw!r}")
    return value


_workers.__name__ = "int"  # argparse says "invalid int value", not "invalid _workers"


def _public_url(raw: str) -> str:
    """An http(s) or ws(s) URL with a host, as the http(s) base of the server's pages (a
    ws(s) URL's /ws path dropped): race links are this plus /r/CODE."""
    parts = urlsplit(raw.strip())
    scheme = {"http": "http", "https": "https", "ws": "http", "wss": "https"}.get(parts.scheme)
    if scheme is None or not parts.hostname:
        raise argparse.ArgumentTypeError(
            f"not an http(s) or ws(s) URL with a host: {raw!r} (e.g. https://play.example.org)"
        )
    if parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(f"a public URL has no query or fragment: {raw!r}")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port in {raw!r}") from None
    path = parts.path.rstrip("/").removesuffix("/ws").rstrip("/")
    return f"{scheme}://{parts.netloc}{path}"


_public_url.__name__ = "URL"


def _port(raw: str) -> int:
    value = int(raw)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"not a port: {raw!r}")
    return value


# name -> (flag, environment variable, converter, help)
SETTINGS: dict[str, tuple[str, str, Any, str]] = {
    "host": ("--host", "SOLITAIRE_HOST", str, "address to listen on (default 127.0.0.1)"),
    "port": ("--port", "SOLITAIRE_PORT", _port,
             "port for WebSocket (path /ws) and HTTP (default 8765; 0 picks a free one)"),
    "public_url": ("--public-url", "SOLITAIRE_PUBLIC_URL", _public_url,
                   "the address players use, http(s) or ws(s), e.g. https://play.example.org "
                   "behind a TLS proxy: clients share race links made from it "
                   "(https://play.example.org/r/CODE); default: none, clients use the address "
                   "they connected to"),
    "redis_url": ("--redis-url", "REDIS_URL", str,
                  "Redis to use, e.g. redis://127.0.0.1:6379/0 (default: start the embedded "
                  "valkey-server, keeping its data in the data dir)"),
    "redis_cluster": ("--redis-cluster", "SOLITAIRE_REDIS_CLUSTER", _bool,
                      "1 if the Redis URL names a node of a Redis Cluster (default 0)"),
    "data_dir": ("--data-dir", "SOLITAIRE_DATA_DIR", Path,
                 "directory for the embedded Redis's data (default ./data)"),
    "store_fsync": ("--store-fsync", "SOLITAIRE_STORE_FSYNC", _fsync,
                    "the embedded Redis's fsync of its append-only file: always (before each "
                    "reply: acknowledged moves survive a power loss) or everysec (a power loss "
                    "can take the last second of them); unused with a Redis URL "
                    "(default always)"),
    "secret": ("--secret", "SOLITAIRE_SECRET", str,
               "server secret for daily seeds (default: generated once, kept in the store)"),
    "namespace": ("--namespace", "SOLITAIRE_NAMESPACE", _namespace,
                  "prefix of every Redis key (default sr)"),
    "log_level": ("--log-level", "SOLITAIRE_LOG_LEVEL", _level,
                  "DEBUG, INFO, WARNING or ERROR (default INFO)"),
    "log_format": ("--log-format", "SOLITAIRE_LOG_FORMAT", _fmt,
                   "text or json, one object a line (default text)"),
    "clock_offset_s": ("--clock-offset-s", "SOLITAIRE_CLOCK_OFFSET_S", float,
                       "seconds added to the wall clock, for tests (default 0)"),
    "rate": ("--rate", "SOLITAIRE_RATE", _positive(float),
             "messages per second a connection may send, sustained (default 20)"),
    "burst": ("--burst", "SOLITAIRE_BURST", _positive(int),
              "messages a connection may send in a burst (default 60)"),
    "hello_timeout_s": ("--hello-timeout-s", "SOLITAIRE_HELLO_TIMEOUT_S", _positive(float),
                        "seconds a new connection has to send hello (default 10)"),
    "max_connections": ("--max-connections", "SOLITAIRE_MAX_CONNECTIONS", _limit(int),
                        "connections this process holds at once; a WebSocket handshake beyond "
                        "gets HTTP 503 (default 10000; 0: no limit)"),
    "max_connections_per_address": ("--max-connections-per-address",
                                    "SOLITAIRE_MAX_CONNECTIONS_PER_ADDRESS", _limit(int),
                                    "WebSocket connections one client address (IPv4, or IPv6 "
                                    "/64) holds at once; a handshake beyond gets HTTP 429, "
                                    "and beyond twice as many sockets they are closed "
                                    "unanswered "
                                    "(default 100; 0: no limit)"),
    "max_new_players_per_address_per_hour": (
        "--max-new-players-per-address-per-hour", "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_HOUR",
        _limit(int),
        "players one client address may make (hello without a token) per hour, in bursts of as "
        "many, counted for all instances together; beyond: rate_limited (default 30; 0: no "
        "limit)"),
    "max_new_players_per_address_per_day": (
        "--max-new-players-per-address-per-day", "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_DAY",
        _limit(int),
        "players one client address may make per UTC day, counted for all instances together; "
        "beyond: rate_limited (default 0: no limit)"),
    "trusted_proxies": ("--trusted-proxies", "SOLITAIRE_TRUSTED_PROXIES", _networks,
                        "comma-separated addresses or networks of proxies in front of the "
                        "server; their X-Forwarded-For names the client whose limits apply "
                        "(default none)"),
    "allowed_origins": ("--allowed-origins", "SOLITAIRE_ALLOWED_ORIGINS", _origins,
                        "comma-separated web origins (https://play.example.org) besides the "
                        "server's own whose pages may open a WebSocket to it, e.g. behind a "
                        "proxy that rewrites Host; a browser handshake from any other Origin "
                        "gets HTTP 403 (default none)"),
    "unplayed_player_ttl_s": ("--unplayed-player-ttl-s", "SOLITAIRE_UNPLAYED_PLAYER_TTL_S",
                              _positive(int),
                              "seconds after which a player who never started a game is "
                              "forgotten (default 86400)"),
    "name_max_chars": ("--name-max-chars", "SOLITAIRE_NAME_MAX_CHARS", _positive(int),
                       "most characters in a player's name (default 24)"),
    "max_moves_per_game": ("--max-moves-per-game", "SOLITAIRE_MAX_MOVES_PER_GAME",
                           _positive(int),
                           "most moves of one game: a move's n is 0 to this (default 100000)"),
    "max_ranked_moves": ("--max-ranked-moves", "SOLITAIRE_MAX_RANKED_MOVES", _positive(int),
                         "most moves of a race seat or daily attempt (at most "
                         "--max-moves-per-game, the cap of a practice game; default 10000)"),
    "max_players": ("--max-players", "SOLITAIRE_MAX_PLAYERS", _positive(int),
                    "most seats of a race, bots included (default 16)"),
    "default_max_players": ("--default-max-players", "SOLITAIRE_DEFAULT_MAX_PLAYERS",
                            _positive(int),
                            "seats of a race created without max_players (default 8, or "
                            "--max-players if that is less)"),
    "min_time_limit_s": ("--min-time-limit-s", "SOLITAIRE_MIN_TIME_LIMIT_S", _positive(int),
                         "shortest time limit of a race, in seconds (default 30)"),
    "max_time_limit_s": ("--max-time-limit-s", "SOLITAIRE_MAX_TIME_LIMIT_S", _positive(int),
                         "longest time limit of a race, in seconds (default 7200)"),
    "lobby_leave_grace_s": ("--lobby-leave-grace-s", "SOLITAIRE_LOBBY_LEAVE_GRACE_S",
                            _positive(float),
                            "seconds a lobby waits for a player whose last connection closed "
                            "before they leave it; a leaving host hands the race to the next "
                            "player (default 30)"),
    "max_spectators_per_race": ("--max-spectators-per-race", "SOLITAIRE_MAX_SPECTATORS_PER_RACE",
                                _positive(int),
                                "connections of this process that may watch one race at once; "
                                "beyond: race_full (default 1000)"),
    "workers": ("--workers", "SOLITAIRE_WORKERS", _workers,
                "server processes sharing the port and the store, each an instance of its "
                "own; 0: one per CPU core (default 1)"),
    "event_loop": ("--event-loop", "SOLITAIRE_EVENT_LOOP", _event_loop,
                   "uvloop, or asyncio: the standard library's loop (default uvloop)"),
    "solver_workers": ("--solver-workers", "SOLITAIRE_SOLVER_WORKERS", _positive(int),
                       "processes that run solver searches (dailies, hints, bots; default 2)"),
    "daily_max_candidates": ("--daily-max-candidates", "SOLITAIRE_DAILY_MAX_CANDIDATES",
                             _positive(int),
                             "deals tried for a winnable daily before falling back (default 40)"),
    "daily_prepare_ahead": ("--daily-prepare-ahead", "SOLITAIRE_DAILY_PREPARE_AHEAD", _bool,
                            "1: search today's and tomorrow's daily deals in the background; "
                            "0: only when a player asks (default 1)"),
    "hint_budget_s": ("--hint-budget-s", "SOLITAIRE_HINT_BUDGET_S", _positive(float),
                      "seconds of search for one practice hint (default 1)"),
    "hint_share": ("--hint-share", "SOLITAIRE_HINT_SHARE", _positive(float),
                   "seconds of search a second one player's hints may use on average "
                   "(default 0.25)"),
    "hint_burst_s": ("--hint-burst-s", "SOLITAIRE_HINT_BURST_S", _positive(float),
                     "seconds of search one player's hints may use before hint-share "
                     "applies (default 10)"),
    "replay_page_moves": ("--replay-page-moves", "SOLITAIRE_REPLAY_PAGE_MOVES", _positive(int),
                          "most moves in one replay reply; longer games come in pages "
                          "(default 2000)"),
    "bot_think_scale": ("--bot-think-scale", "SOLITAIRE_BOT_THINK_SCALE", _positive(float),
                        "factor on every bot's think time; 0.01 for tests (default 1)"),
    "bot_lease_s": ("--bot-lease-s", "SOLITAIRE_BOT_LEASE_S", _positive(float),
                    "seconds before another instance takes over a dead instance's bots "
                    "(default 10)"),
    "quick_first_window": ("--quick-first-window", "SOLITAIRE_QUICK_FIRST_WINDOW",
                           _positive(int),
                           "widest spread of ratings in a quick race of players who have just "
                           "queued (default 100)"),
    "quick_widen_per_s": ("--quick-widen-per-s", "SOLITAIRE_QUICK_WIDEN_PER_S",
                          _positive(float),
                          "rating points the spread may widen for each second its longest "
                          "waiter has waited (default 20)"),
    "quick_max_players": ("--quick-max-players", "SOLITAIRE_QUICK_MAX_PLAYERS", _positive(int),
                          "most seats of a quick race, at least 2 (default 4)"),
    "quick_countdown_s": ("--quick-countdown-s", "SOLITAIRE_QUICK_COUNTDOWN_S",
                          _positive(float),
                          "seconds from a quick race's forming to its start (default 5)"),
    "quick_bot_after_s": ("--quick-bot-after-s", "SOLITAIRE_QUICK_BOT_AFTER_S",
                          _positive(float),
                          "seconds a player waits alone before being offered an unrated race "
                          "against a bot (default 30)"),
    "quick_time_limit_s": ("--quick-time-limit-s", "SOLITAIRE_QUICK_TIME_LIMIT_S",
                           _positive(int), "time limit of every quick race (default 600)"),
    "quick_round_s": ("--quick-round-s", "SOLITAIRE_QUICK_ROUND_S", _positive(float),
                      "seconds between two rounds of the matcher (default 0.25)"),
    "quick_lease_s": ("--quick-lease-s", "SOLITAIRE_QUICK_LEASE_S", _positive(float),
                      "seconds before another instance takes over the matching of a dead "
                      "one (default 5)"),
    "ping_interval_s": ("--ping-interval-s", "SOLITAIRE_PING_INTERVAL_S", _positive(float),
                        "seconds between two keepalive pings of a connection (default 20)"),
    "ping_timeout_s": ("--ping-timeout-s", "SOLITAIRE_PING_TIMEOUT_S", _positive(float),
                       "seconds a keepalive ping may go unanswered before its connection is "
                       "closed with 1011 (default 20)"),
    "debug_memory": ("--debug-memory", "SOLITAIRE_DEBUG_MEMORY", _bool,
                     "1: trace memory allocations (tracemalloc; slower, more memory) and "
                     "answer GET /debug/memory with a JSON report of the caches, objects and "
                     "allocations; for benches, never on a public server (default 0)"),
}  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solitaire-server",
        description=(
            "The solitaire-race server: WebSocket protocol v1 at ws://HOST:PORT/ws, "
            "HTTP health check at /healthz on the same port. Games, races and players "
            "live in Redis. Every flag can also be set by the environment variable "
            "named in its help; the flag wins."
        ),
    )
    for name, (flag, var, conv, help_text) in SETTINGS.items():
        parser.add_argument(
            flag, dest=name, type=conv, default=None, metavar=var, help=f"{help_text} [{var}]"
        )
    return parser


DEFAULT = Config()
__all__ = ["DEFAULT", "SETTINGS", "Config", "build_parser"]
