"""The Redis store: players, races and games, behind plain async methods.

Key names come from server/store/keys.py; every write of a record is version-checked
(server/store/scripts.py: MOVES for moves through the group commit of
server/store/group_commit.py, APPLY for the rest). Clients are made by
server/store/redis_client.py. The rules that decide the writes live above, in
server/play/ and server/daily/.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from server.config import Config
from server.domain.changes import MUST_NOT_EXIST, GameChange, RaceChange, Written
from server.domain.ids import race_gid
from server.domain.records import GameRecord, RaceRecord, seat_entry, seat_from_entry
from server.lru import LRU
from server.store import scripts
from server.store.boards import LeaderboardStore
from server.store.errors import STORE_ERRORS, StoreUnavailable, unavailable_on_failure
from server.store.group_commit import GroupCommit
from server.store.keys import GameKeys, Keys
from server.store.locks import Lease
from server.store.queue import QueueStore
from server.store.ratings import HISTORY_KEPT, RatingsStore
from server.store.stats import StatsStore
from server.store.writes import Batch

log = logging.getLogger(__name__)


@dataclass
class LoadedGame:
    """A game as one read saw it: its record, some of its snapshots (move count, text;
    highest first) and its move list's entries from `start` on."""

    record: GameRecord
    snapshots: list[tuple[int, str]]
    start: int
    moves: list[str]


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


# A new player's meta outlives its token by this much (or by the token's whole time to
# live, if shorter), so that no hello finds a token whose meta is gone (create_player).
UNPLAYED_MARGIN_S = 60


def _point_json(point: Any) -> str:
    return msgspec.json.encode(point).decode()


def new_player_id() -> str:
    return secrets.token_hex(8)


class SeatListed(NamedTuple):
    instances: list[str]  # the player's other instances
    meta_ttl_ms: int  # the PTTL of the player's meta (-1: kept, -2: gone)


@unavailable_on_failure
class Store:
    """Everything the server keeps in Redis about players, races and games."""

    def __init__(self, config: Config, redis: Any, instance: str) -> None:
        self.config = config
        self.redis = redis
        self.keys = Keys(config.namespace)
        self.instance = instance
        self._apply = redis.register_script(scripts.APPLY)
        self._unindex = redis.register_script(scripts.UNINDEX)
        self._swap_name = redis.register_script(scripts.SWAP_NAME)
        self._new_player = redis.register_script(scripts.NEW_PLAYER)
        self._load_game = redis.register_script(scripts.LOAD_GAME)
        self._game_keys: LRU[str, GameKeys] = LRU(config.game_keys_memo_size)
        self.boards = LeaderboardStore(
            redis, self.keys, config.leaderboard_default_rows, config.leaderboard_max_rows
        )
        self.stats = StatsStore(redis, self.keys)
        self.queue = QueueStore(redis, self.keys, instance)
        self.ratings = RatingsStore(redis, self.keys)
        self.commit = GroupCommit(
            redis,
            redis.register_script(scripts.MOVES),
            instance,
            self.keys.instance_channel_prefix(),
            redis.keyslot if config.redis_cluster else None,
        )

    @property
    def channel_prefix(self) -> str:
        return self.keys.instance_channel_prefix()

    async def open(self) -> None:
        self.commit.start()

    async def close(self) -> None:
        await self.commit.close()
        if self.commit.batches:
            log.info(
                "group commit: %d writes in %d pipelines (%.1f a pipeline)",
                self.commit.writes, self.commit.batches, self.commit.writes / self.commit.batches,
            )  # fmt: skip
        with contextlib.suppress(Exception):
            await self.redis.aclose()

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except STORE_ERRORS:
            return False

    # ------------------------------------------------------------ batches

    async def apply(self, batch: Batch) -> Written:
        """Run one version-checked batch (the APPLY script)."""
        try:
            status, _guard = await self._apply(
                keys=batch.keys, args=batch.args(self.instance, self.channel_prefix)
            )
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc
        return Written(int(status))

    async def apply_in_order(self, batches: Sequence[Batch]) -> list[Written]:
        """Batches in one pipeline (on a single Redis one connection runs them in order);
        on a Redis Cluster, whose batches may live on different nodes, one after the other."""
        if self.config.redis_cluster:
            return [await self.apply(b) for b in batches]
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for b in batches:
                    await self._apply(
                        keys=b.keys, args=b.args(self.instance, self.channel_prefix), client=pipe
                    )
                replies = await pipe.execute()
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc
        return [Written(int(reply[0])) for reply in replies]

    # ------------------------------------------------------------ server config

    async def secret_or_new(self, proposed: str | None) -> str:
        """The configured secret, else the one kept in the store, made and kept on the
        first start (of any instance: every instance then reads the same)."""
        if proposed:
            return proposed
        key = self.keys.server_config()
        await self.redis.hsetnx(key, "secret", secrets.token_urlsafe(32))
        return str(await self.redis.hget(key, "secret"))

    # ------------------------------------------------------------ players

    async def create_player(self, name: str, now_ms: int, folded: str = "") -> tuple[str, str]:
        """A new player: (player id, token). Only the token's hash is stored. Its name is
        reserved by server/play/names.py (`folded` is the name's reserved form, kept so that
        keep_player keeps the reservation too).

        Its keys expire after unplayed_player_ttl_s unless it starts a game before
        (keep_player), so that players made and never used do not pile up. The token goes
        first (up to a minute earlier): a hello never finds a token whose player is gone."""
        player, token = new_player_id(), new_token()
        token_hash = hash_token(token)
        ttl, later = self.config.unplayed_player_ttl_s, self.unplayed_meta_ttl_s
        meta, interest = self.keys.player_meta(player), self.keys.player_interest(player)
        pipe = self.redis.pipeline(transaction=False)
        fields: dict[str, str | int] = {"name": name, "created_ms": now_ms, "token_sha": token_hash}
        if folded:
            fields["folded"] = folded
        pipe.hset(meta, mapping=fields)
        pipe.expire(meta, later)
        # The instances where the player is connected: hello adds this one again (SADD keeps
        # the time to live).
        pipe.sadd(interest, self.instance)
        pipe.expire(interest, later)
        pipe.set(self.keys.token(token_hash), player, ex=ttl)
        await pipe.execute()
        return player, token

    @property
    def unplayed_meta_ttl_s(self) -> int:
        """How long a new player's meta (and its name's reservation) lives unless kept."""
        ttl = self.config.unplayed_player_ttl_s
        return ttl + min(UNPLAYED_MARGIN_S, ttl)

    async def keep_player(self, player: str, meta_ttl_ms: int | None = None) -> None:
        """The player started a game: if its keys still expire (create_player), they no
        longer do. `meta_ttl_ms` is the meta's PTTL if the caller read it already.
        The token is kept before the meta: a failure in between is mended by the next
        game (the meta still expires) and never leaves a kept player without a token."""
        meta = self.keys.player_meta(player)
        if meta_ttl_ms is None:
            meta_ttl_ms = await self.redis.pttl(meta)
        if meta_ttl_ms < 0:  # kept already (-1), or gone (-2)
            return
        token_hash, folded = await self.redis.hmget(meta, ["token_sha", "folded"])
        if not token_hash:  # a bot: it lives as long as its race
            return
        await self.redis.persist(self.keys.token(token_hash))
        if folded:  # its name, if it holds it still (claimed again, for good)
            await self.swap_name(folded, player, player)
        pipe = self.redis.pipeline(transaction=False)
        pipe.persist(self.keys.player_interest(player))
        pipe.persist(meta)
        await pipe.execute()
        log.debug("player %s started a first game: kept", player)

    async def create_bot(self, player: str, name: str, strength: str, now_ms: int) -> None:
        """A bot player (server/play/bots.py): it lives as long as a finished race."""
        key = self.keys.player_meta(player)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(key, mapping={"name": name, "created_ms": now_ms, "bot": strength})
        pipe.expire(key, self.config.finished_race_ttl_s)
        await pipe.execute()

    async def player_for_token(self, token: str) -> str | None:
        player: str | None = await self.redis.get(self.keys.token(hash_token(token)))
        return player

    async def rename_player(self, player: str, name: str, folded: str) -> None:
        mapping = {"name": name, "folded": folded}
        await self.redis.hset(self.keys.player_meta(player), mapping=mapping)

    async def player_name(self, player: str) -> str | None:
        name: str | None = await self.redis.hget(self.keys.player_meta(player), "name")
        return name

    async def player_name_and_ttl(self, player: str) -> tuple[str | None, int]:
        """The player's name and its meta's PTTL (-1: kept for good; see create_player)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hget(self.keys.player_meta(player), "name")
        pipe.pttl(self.keys.player_meta(player))
        name, ttl_ms = await pipe.execute()
        return name, int(ttl_ms)

    async def player_created_ms(self, player: str) -> int | None:
        created = await self.redis.hget(self.keys.player_meta(player), "created_ms")
        return int(created) if created is not None else None

    async def delete_player(self, player: str, token: str) -> None:
        """Undo create_player (a new player who may not keep the name they asked for)."""
        pipe = self.redis.pipeline(transaction=False)  # two slots on a Redis Cluster
        pipe.delete(self.keys.token(hash_token(token)))
        pipe.delete(self.keys.player_meta(player), self.keys.player_interest(player))
        await pipe.execute()

    # ------------------------------------------------------------ names

    async def swap_name(self, folded: str, holder: str, player: str, ttl_ms: int = 0) -> str:
        """Give the name to `player` if `holder` ('' for nobody) or nobody holds it now: ''
        when done, else who holds it. The reservation expires after `ttl_ms` (0: never),
        as an unplayed player does. With `player` '', `holder` gives the name up (to one
        of its sharers, if any). The SWAP_NAME script."""
        keys = [self.keys.name(folded), self.keys.name_sharers(folded)]
        try:
            return str(await self._swap_name(keys=keys, args=[holder, player, ttl_ms]))
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def share_name(self, folded: str, player: str) -> None:
        """`player` keeps a name that another holds (both had it before names were reserved):
        the name passes to them if its holder gives it up."""
        await self.redis.sadd(self.keys.name_sharers(folded), player)

    async def take_new_player(
        self,
        address: str,
        per_hour: int,
        per_day: int,
        now_ms: int,
        day: str,
        ttl_ms: int,
        step: int = 1,
    ) -> str:
        """Count a player made from client `address` against its allowance of `per_hour`
        and `per_day` (0: none) for every instance, the day being `day` and the count kept
        `ttl_ms`: '' if it may, else the limit that refuses ('hour' or 'day'). A step of -1
        gives one back. The NEW_PLAYER script."""
        args = [now_ms, per_hour, per_day, day, step, ttl_ms]
        try:
            return str(await self._new_player(keys=[self.keys.new_players(address)], args=args))
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def player_games(self, player: str) -> list[str]:
        return sorted(await self.redis.smembers(self.keys.player_games(player)))

    async def seat_player(self, player: str, gid: str) -> SeatListed:
        """Lists a seat's game among the player's games, before the seat itself is written
        (a crash in between must not hide the seat): the other instances where the player
        is connected (the race's events must reach them too), and the player's meta's PTTL
        (for keep_player)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.sadd(self.keys.player_games(player), gid)
        pipe.smembers(self.keys.player_interest(player))
        pipe.pttl(self.keys.player_meta(player))
        _, instances, meta_ttl_ms = await pipe.execute()
        return SeatListed(sorted(set(instances) - {self.instance}), int(meta_ttl_ms))

    async def add_challenge(self, player: str, code: str, created_ms: int, ttl_s: int) -> None:
        """List an asynchronous race among the player's (kept `ttl_s`, the longest a race
        listed is open and then kept), keeping the newest `keep` of them."""
        key = self.keys.player_challenges(player)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(key, {code: created_ms})
        pipe.zremrangebyrank(key, 0, -self.config.challenges_listed - 1)
        pipe.expire(key, ttl_s)
        await pipe.execute()

    async def player_challenges(self, player: str) -> list[str]:
        """The player's asynchronous races, newest first."""
        return list(await self.redis.zrevrange(self.keys.player_challenges(player), 0, -1))

    async def forget_player_games(self, player: str, gids: Sequence[str]) -> None:
        if gids:
            await self.redis.srem(self.keys.player_games(player), *gids)

    async def listen(self, *, players: Sequence[str] = (), races: Sequence[str] = ()) -> None:
        """Ask for the events of these players' own games and of these races to reach this
        instance (each joins this instance to their interest set)."""
        sets = [self.keys.player_interest(pl) for pl in players]
        sets += [self.keys.race_interest(code) for code in races]
        if not sets:
            return
        pipe = self.redis.pipeline(transaction=False)
        for key in sets:
            pipe.sadd(key, self.instance)
        await pipe.execute()

    @property
    def instance_channel(self) -> str:
        """The bus channel on which this instance hears its events."""
        return self.keys.instance_channel(self.instance)

    async def player_instances(self, player: str) -> list[str]:
        """The instances where the player has a connection."""
        return sorted(await self.redis.smembers(self.keys.player_interest(player)))

    async def players_instances(self, players: Sequence[str]) -> list[str]:
        """The other instances where any of `players` has a connection."""
        if not players:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for player in players:
            pipe.smembers(self.keys.player_interest(player))
        found: set[str] = set().union(*await pipe.execute())
        return sorted(found - {self.instance})

    # ------------------------------------------------------------ connections

    async def add_connection(self, player: str, connection: str, ttl_s: int) -> None:
        """Note an open connection of the player's on this instance (kept `ttl_s` after the
        player's last one opened, so that entries a dead instance left behind go too)."""
        key = self.keys.player_connections(player)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(key, connection, self.instance)
        pipe.expire(key, ttl_s)
        await pipe.execute()

    async def remove_connections(self, player: str, connections: Sequence[str]) -> None:
        if connections:
            await self.redis.hdel(self.keys.player_connections(player), *connections)

    async def connections(self, player: str) -> dict[str, str]:
        """The player's open connections on any instance: connection id -> instance."""
        return dict(await self.redis.hgetall(self.keys.player_connections(player)))

    async def heartbeat(self, ttl_s: float) -> None:
        """This instance is running (for `ttl_s` more seconds unless said again)."""
        await self.redis.set(self.keys.instance_live(self.instance), "1", px=int(ttl_s * 1000))

    async def live_instances(self, instances: Sequence[str]) -> set[str]:
        """Those of `instances` that are running (this one always is)."""
        others = sorted(set(instances) - {self.instance})
        if not others:
            return {self.instance}
        found = await self.redis.mget([self.keys.instance_live(i) for i in others])
        return {self.instance} | {i for i, v in zip(others, found, strict=True) if v is not None}

    async def publish(self, instances: Sequence[str], payload: bytes) -> None:
        """Relay events to these instances (best effort, as pub/sub is)."""
        for inst in instances:
            await self.redis.publish(self.keys.instance_channel(inst), payload)

    # ------------------------------------------------------------ games

    def game_keys(self, gid: str) -> GameKeys | None:
        keys = self._game_keys.get(gid)
        if keys is None:
            keys = self.keys.game(gid)
            if keys is not None:
                self._game_keys.put(gid, keys)
        return keys

    async def load_game(self, gid: str) -> tuple[GameRecord, list[str]] | None:
        keys = self.keys.game(gid)
        if keys is None:
            return None
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(keys.meta)
        pipe.lrange(keys.moves, 0, -1)
        meta, moves = await pipe.execute()
        if not meta:
            return None
        return GameRecord.from_redis(meta, len(moves)), list(moves)

    async def load_record(self, gid: str) -> GameRecord | None:
        """A game's record (with its move count), without its moves."""
        return (await self.load_records([gid]))[0] if self.game_keys(gid) else None

    async def load_position(
        self, gid: str, *, last: int, snapshots: int = 3, below: float = float("inf")
    ) -> LoadedGame | None:
        """A game as one instant saw it: its record, its `snapshots` highest snapshots
        scored below `below` (highest first) and the `last` (>= 1) entries of its move list."""
        return await self._load(gid, below, snapshots, -max(last, 1), -1)

    async def load_moves(self, gid: str, start: int, stop: int) -> LoadedGame | None:
        """A game's record and the entries `start` to `stop` (inclusive) of its move list,
        read together."""
        return await self._load(gid, 0, 0, start, stop)

    async def load_snapshots(self, gid: str, below: float, count: int) -> list[tuple[int, str]]:
        """A game's `count` highest snapshots scored below `below`, highest first."""
        keys = self.game_keys(gid)
        assert keys is not None
        high = f"({below}" if below != float("inf") else "+inf"
        rows = await self.redis.zrevrangebyscore(
            keys.snaps, high, "-inf", start=0, num=count, withscores=True
        )
        return [(int(score), text) for text, score in rows]

    async def _load(
        self, gid: str, below: float, count: int, start: int, stop: int
    ) -> LoadedGame | None:
        keys = self.game_keys(gid)
        if keys is None:
            return None
        high = f"({below}" if below != float("inf") else "+inf"
        try:
            meta, n, snaps, moves = await self._load_game(
                keys=[keys.meta, keys.moves, keys.snaps], args=[high, count, start, stop]
            )
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc
        if not meta:
            return None
        record = GameRecord.from_redis(dict(zip(meta[::2], meta[1::2], strict=True)), int(n))
        first = start if start >= 0 else max(0, record.n + start)
        pairs = [(int(float(snaps[i + 1])), snaps[i]) for i in range(0, len(snaps), 2)]
        return LoadedGame(record, pairs, first, list(moves))

    async def move_at(self, gid: str, n: int) -> str | None:
        """Entry `n` of a game's move list (None if there is none)."""
        keys = self.game_keys(gid)
        assert keys is not None
        move: str | None = await self.redis.lindex(keys.moves, n)
        return move

    async def add_snapshots(self, gid: str, ver: int, snaps: Sequence[tuple[int, str]]) -> Written:
        """Store snapshots made from the moves of the game at version `ver`, each in place
        of any stored with its score; only if the game is still at that version."""
        keys = self.game_keys(gid)
        assert keys is not None
        batch = Batch()
        batch.expect(keys.meta, ver)
        for n, text in snaps:
            batch.command("ZREMRANGEBYSCORE", keys.snaps, n, n)
            batch.command("ZADD", keys.snaps, n, text)
        return await self.apply(batch)

    async def load_records(self, gids: Sequence[str]) -> list[GameRecord | None]:
        """Game records (without move lists) of several games at once."""
        pipe = self.redis.pipeline(transaction=False)
        self._queue_records(pipe, gids)
        return self._records(gids, await pipe.execute())

    async def game_moves(self, gid: str, start: int, stop: int) -> list[str]:
        """Moves `start` to `stop` (excluded) of a game's move list: a replay reads only
        the part it shows, never a long game's whole list for one page."""
        keys = self.game_keys(gid)
        if keys is None or stop <= start:
            return []
        return list(await self.redis.lrange(keys.moves, start, stop - 1))

    def _queue_records(self, pipe: Any, gids: Sequence[str]) -> None:
        for gid in gids:
            keys = self.keys.game(gid)
            assert keys is not None
            pipe.hgetall(keys.meta)
            pipe.llen(keys.moves)

    @staticmethod
    def _records(gids: Sequence[str], raw: Sequence[Any]) -> list[GameRecord | None]:
        out: list[GameRecord | None] = []
        for i in range(len(gids)):
            meta, n = raw[2 * i], raw[2 * i + 1]
            out.append(GameRecord.from_redis(meta, int(n)) if meta else None)
        return out

    def write_move(
        self,
        record: GameRecord,
        move: str,
        expect_ver: int,
        payload: bytes,
        snapshot: str = "",
        at_ms: int = 0,
    ) -> asyncio.Future[Written]:
        """Append `move` (or '' for none) and store `record` (at its new version), if the
        stored game is at `expect_ver`, through the group commit: a future of the write's
        Written status. `payload` is relayed to the other instances interested in the game;
        a `snapshot` (of the position after the move) is kept with the move, and so is
        its time `at_ms` (in the game's times list, in the same script call)."""
        keys = self.game_keys(record.gid)
        assert keys is not None
        return self.commit.submit(
            [keys.meta, keys.moves, keys.interest, keys.times, keys.snaps]
            if snapshot
            else [keys.meta, keys.moves, keys.interest, keys.times],
            expect_ver,
            move,
            record.written_fields(),
            payload,
            snapshot,
            at_ms,
        )

    async def move_times(self, gids: Sequence[str], start: int = 0) -> list[list[int]]:
        """The stored times (ms) of each game's moves from entry `start` on, in one round
        trip (games stored before move times were kept: 0 for those moves, or none)."""
        pipe = self.redis.pipeline(transaction=False)
        for gid in gids:
            keys = self.game_keys(gid)
            assert keys is not None
            pipe.lrange(keys.times, start, -1)
        return [[int(t) for t in rows] for rows in await pipe.execute()]

    async def write_game(
        self,
        change: GameChange,
        *,
        undo: bool = False,
        index_games: bool = False,
        ttl_s: int = 0,
        payload: bytes = b"",
    ) -> Written:
        """Store a game of a player (a daily attempt or a practice game): `undo` also drops
        its last move (and the snapshots past the new end), `index_games` lists it among the
        player's games, `ttl_s` > 0 makes it (and its move list and snapshots) expire;
        `payload` goes to the player's other instances."""
        record = change.record
        keys = self.game_keys(record.gid)
        assert keys is not None
        batch = Batch()
        batch.expect(keys.meta, change.expect_ver)
        batch.hset(keys.meta, record.to_redis() if change.all_fields else record.changing_fields())
        if undo:
            batch.command("RPOP", keys.moves)
            batch.command("RPOP", keys.times)
            batch.command("ZREMRANGEBYSCORE", keys.snaps, f"({record.n}", "+inf")
        if index_games:
            batch.command("SADD", self.keys.player_games(record.player), record.gid)
        if ttl_s:
            batch.command("EXPIRE", keys.meta, ttl_s)
            if record.n:  # an empty move list is no key at all
                batch.command("EXPIRE", keys.moves, ttl_s)
                batch.command("EXPIRE", keys.snaps, ttl_s)
                batch.command("EXPIRE", keys.times, ttl_s)
        batch.relay_to(keys.interest, payload)
        return await self.apply(batch)

    async def expire_games(self, gids: Sequence[str], ttl_s: int) -> None:
        """Give games (records, move lists and snapshots) a time to live."""
        pipe = self.redis.pipeline(transaction=False)
        for gid in gids:
            keys = self.game_keys(gid)
            if keys is not None:
                pipe.expire(keys.meta, ttl_s)
                pipe.expire(keys.moves, ttl_s)
                pipe.expire(keys.snaps, ttl_s)
                pipe.expire(keys.times, ttl_s)
        await pipe.execute()

    # ------------------------------------------------------------ daily attempts index

    async def index_open_attempt(self, gid: str, ends_at_ms: int) -> None:
        await self.redis.zadd(self.keys.open_attempts(), {gid: ends_at_ms})

    async def unindex_open_attempt(self, gid: str) -> None:
        await self.redis.zrem(self.keys.open_attempts(), gid)

    async def open_attempts_due(self, now_ms: int, count: int) -> list[str]:
        """Daily attempts not yet ranked whose day ended by `now_ms` (at most `count`)."""
        return list(
            await self.redis.zrangebyscore(
                self.keys.open_attempts(), "-inf", now_ms, start=0, num=count
            )
        )

    # ------------------------------------------------------------ races

    async def load_race(self, code: str) -> RaceRecord | None:
        return (await self.load_race_records(code, []))[0]

    async def load_race_records(
        self, code: str, gids: Sequence[str]
    ) -> tuple[RaceRecord | None, list[GameRecord | None]]:
        """A race and, in the same round trip, the records of games `gids` (its seats'
        games, when the caller knows them)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(self.keys.race_meta(code))
        pipe.lrange(self.keys.race_seats(code), 0, -1)
        self._queue_records(pipe, gids)
        meta, seats, *raw = await pipe.execute()
        if not meta or "status" not in meta:
            return None, []
        race = RaceRecord.from_redis(meta, [seat_from_entry(s) for s in seats])
        return race, self._records(gids, raw)

    def race_batch(self, change: RaceChange) -> Batch:
        """The batch that makes a race change: the race's version checked, and every seat
        game written checked at its own version, all under the race's hash tag."""
        k, code = self.keys, change.race.code
        meta, seats, interest = k.race_meta(code), k.race_seats(code), k.race_interest(code)
        batch = Batch()
        batch.expect(meta, change.expect_ver)
        for game in change.games:
            keys = self.keys.game(game.record.gid)
            assert keys is not None
            batch.expect(keys.meta, game.expect_ver)
        batch.hset(meta, change.race.to_redis())
        if change.new_seats:
            batch.command("RPUSH", seats, *[seat_entry(s) for s in change.new_seats])
        for seat in change.gone_seats:
            batch.command("LREM", seats, 0, seat_entry(seat))
            gone = self.keys.game(race_gid(code, seat.player))
            assert gone is not None
            batch.command("DEL", gone.meta)
            batch.command("DEL", gone.moves)
            batch.command("DEL", gone.snaps)
            batch.command("DEL", gone.times)
        if change.instances:
            batch.command("SADD", interest, *change.instances)
        for game in change.games:
            keys = self.keys.game(game.record.gid)
            assert keys is not None
            record = game.record
            batch.hset(
                keys.meta, record.to_redis() if game.all_fields else record.changing_fields()
            )
        # Every key of the race lives as long as the race: a lobby or a finished race
        # expires, a running one does not.
        for key in [meta, seats, interest, *self._seat_game_keys(change.race)]:
            if change.ttl_s:
                batch.command("EXPIRE", key, change.ttl_s)
            else:
                batch.command("PERSIST", key)
        if not self.config.redis_cluster:
            self._rate(batch, change)
        batch.relay_to(interest, change.payload)
        return batch

    def _rate(self, batch: Batch, change: RaceChange) -> None:
        """A rated close's new ratings, each checked at the version the close read: a
        rating changed since (another race of the player closed) makes the close stale."""
        for c in change.ratings:
            r = c.rating
            key = self.keys.rating(r.game, r.player)
            history = self.keys.rating_history(r.game, r.player)
            batch.expect(key, c.expect_ver)
            batch.hset(key, r.to_redis())
            batch.command("ZADD", self.keys.rating_board(r.game), c.shown, r.player)
            batch.command("RPUSH", history, _point_json(c.point))
            batch.command("LTRIM", history, -HISTORY_KEPT, -1)

    def _seat_game_keys(self, race: RaceRecord) -> list[str]:
        out: list[str] = []
        for s in race.seats:
            keys = self.keys.game(race_gid(race.code, s.player))
            assert keys is not None
            out += (keys.meta, keys.moves, keys.snaps, keys.times)
        return out

    async def write_race(self, change: RaceChange) -> Written:
        return await self.apply(self.race_batch(change))

    async def start_race(self, change: RaceChange, deadline_ms: int) -> Written:
        """Index the race among the running ones, then start it. Indexed first, so that a
        crash right after the start cannot leave the race without a timer (a race indexed
        but never started is dropped from the index by the reaper)."""
        index = Batch()
        index.command("ZADD", self.keys.running_index(), deadline_ms, change.race.code)
        return (await self.apply_in_order([index, self.race_batch(change)]))[1]

    async def close_race(self, change: RaceChange, deadline_ms: int) -> Written:
        """Close the race, then drop it from the running index (where it was entered with
        `deadline_ms`) if the close went through (the race is at its closed version)."""
        code = change.race.code
        if self.config.redis_cluster:
            # The index and the race hash to different slots: one after the other. So do a
            # rated race's ratings (one slot per game): written right after the close, so
            # on a cluster a crash in between can lose a race's rating update.
            status = await self.write_race(change)
            if status is Written.APPLIED:
                if change.ratings:
                    ratings = Batch()
                    self._rate(ratings, change)
                    if await self.apply(ratings) is not Written.APPLIED:
                        log.warning("race %s: its ratings changed meanwhile; not rated", code)
                await self.unindex(code, deadline_ms)
            return status
        unindex = Batch()
        unindex.expect(self.keys.race_meta(code), change.race.ver)
        unindex.command("ZREM", self.keys.running_index(), code)
        return (await self.apply_in_order([self.race_batch(change), unindex]))[0]

    # ------------------------------------------------------------ running index

    async def running(self, until_ms: float | None = None) -> list[tuple[str, int]]:
        """Running races (code, deadline), those due by `until_ms` only if given."""
        hi = "+inf" if until_ms is None else until_ms
        rows = await self.redis.zrangebyscore(
            self.keys.running_index(), "-inf", hi, withscores=True
        )
        return [(code, int(score)) for code, score in rows]

    async def unindex(self, code: str, score: int) -> None:
        """Drop a race from the running index, unless it was entered again since."""
        try:
            await self._unindex(keys=[self.keys.running_index()], args=[code, score])
        except STORE_ERRORS as exc:
            raise StoreUnavailable(str(exc)) from exc

    # ------------------------------------------------------------ bots

    async def add_race_bot(self, code: str, player: str, strength: str) -> None:
        key = self.keys.race_bots(code)
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(key, player, strength)
        pipe.expire(key, self.config.lobby_ttl_s)
        await pipe.execute()

    async def race_bots(self, code: str) -> dict[str, str]:
        """A race's bot seats: player -> strength (empty if it has none)."""
        return dict(await self.redis.hgetall(self.keys.race_bots(code)))

    async def index_bot_race(self, code: str, ttl_s: int) -> bool:
        """List a started race among those whose bots are to be driven; False if it has
        no bot seats."""
        key = self.keys.race_bots(code)
        if not await self.redis.expire(key, ttl_s):
            return False
        await self.redis.sadd(self.keys.bot_index(), code)
        return True

    async def bot_races(self) -> list[str]:
        return sorted(await self.redis.smembers(self.keys.bot_index()))

    async def unindex_bot_race(self, code: str) -> None:
        await self.redis.srem(self.keys.bot_index(), code)

    # ------------------------------------------------------------ daily deals

    async def stored_deal(self, game: str, day: str) -> dict[str, str]:
        """The day's deal as stored (server/daily/deals.py), or {} if none is yet."""
        return dict(await self.redis.hgetall(self.keys.day_deal(game, day)))

    async def store_deal_once(self, game: str, day: str, fields: dict[str, str]) -> bool:
        """Store the day's deal unless one is stored already; False if one was."""
        batch = Batch()
        key = self.keys.day_deal(game, day)
        batch.expect(key, MUST_NOT_EXIST)
        batch.hset(key, fields)
        return await self.apply(batch) is Written.APPLIED

    def deal_lock(self, game: str, day: str, seconds: float) -> Lease:
        """The lock of the instance searching for a day's deal."""
        return Lease(self.redis, self.keys.day_deal_lock(game, day), seconds, self.instance)

    def sweep_lock(self, seconds: float) -> Lease:
        """The lock of the instance closing the daily attempts whose day is over."""
        return Lease(self.redis, self.keys.sweep_lock(), seconds, self.instance)

    def bot_lease(self, code: str, seconds: float) -> Lease:
        """The lease of the instance that drives a race's bots."""
        return Lease(self.redis, self.keys.race_bot_lease(code), seconds, self.instance)
