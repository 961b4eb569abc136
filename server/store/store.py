"""The Redis store: players, races and games, behind plain async methods.

Key names come from server/store/keys.py; atomic check-and-writes are the Lua
scripts of server/store/scripts.py. Moves and resignations go through the group
commit of server/store/group_commit.py; clients are made by server/store/redis_client.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import secrets
from collections.abc import Sequence
from typing import Any

from redis.exceptions import NoScriptError, RedisError

import protocol as p
from server.config import Config
from server.play.game_machine import GameRecord
from server.play.race_machine import Race
from server.store import scripts
from server.store.group_commit import GroupCommit, MoveOutcome
from server.store.keys import GameKeys, Keys
from server.store.redis_client import StoreUnavailable

log = logging.getLogger(__name__)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


def new_player_id() -> str:
    return secrets.token_hex(8)


class Store:
    """Everything the server keeps in Redis, behind plain async methods."""

    def __init__(self, config: Config, redis: Any, instance: str) -> None:
        self.config = config
        self.redis = redis
        self.keys = Keys(config.namespace)
        self.instance = instance
        self._shas: dict[str, str] = {}
        self._game_keys: dict[str, GameKeys] = {}
        self.commit = GroupCommit(
            redis,
            self._shas,
            instance,
            self.keys.instance_channel_prefix(),
            redis.keyslot if config.redis_cluster else None,
        )

    @property
    def channel_prefix(self) -> str:
        return self.keys.instance_channel_prefix()

    async def open(self) -> None:
        await self.load_scripts()
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

    async def load_scripts(self) -> None:
        for text in (
            scripts.MOVES,
            scripts.CREATE_RACE,
            scripts.JOIN_RACE,
            scripts.START_RACE,
            scripts.CLOSE_RACE,
            scripts.UNINDEX,
            scripts.UNINDEX_CLOSED,
            scripts.INDEX,
        ):
            self._shas[text] = await self.redis.script_load(text)

    async def _eval(self, script: str, keys: Sequence[str], args: Sequence[Any]) -> Any:
        try:
            try:
                return await self.redis.evalsha(self._shas[script], len(keys), *keys, *args)
            except NoScriptError:
                self._shas[script] = await self.redis.script_load(script)
                return await self.redis.evalsha(self._shas[script], len(keys), *keys, *args)
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc

    async def _eval_in_order(
        self, calls: Sequence[tuple[str, Sequence[str], Sequence[Any]]]
    ) -> list[Any]:
        """Script calls in one pipeline (on a single Redis: one connection runs them in
        order); their replies. A call that found its script gone (Redis restarted) runs
        again on its own once the script is loaded."""
        try:
            pipe = self.redis.pipeline(transaction=False)
            for script, keys, args in calls:
                pipe.evalsha(self._shas[script], len(keys), *keys, *args)
            replies = list(await pipe.execute(raise_on_error=False))
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(str(exc)) from exc
        for i, reply in enumerate(replies):
            if isinstance(reply, NoScriptError):
                replies[i] = await self._eval(*calls[i])
            elif isinstance(reply, Exception):
                raise StoreUnavailable(str(reply))
        return replies

    async def ping(self) -> bool:
        try:
            return bool(await self.redis.ping())
        except (RedisError, OSError):
            return False

    # ------------------------------------------------------------ server config

    async def secret(self, proposed: str | None) -> str:
        """The configured secret, else the one kept in the store (made on first start)."""
        if proposed:
            return proposed
        key = self.keys.server_config()
        await self.redis.hsetnx(key, "secret", secrets.token_urlsafe(32))
        return str(await self.redis.hget(key, "secret"))

    # ------------------------------------------------------------ players

    async def create_player(self, name: str, now_ms: int) -> tuple[str, str]:
        """A new player: (player id, token). Only the token's hash is stored."""
        player, token = new_player_id(), new_token()
        pipe = self.redis.pipeline(transaction=False)
        pipe.hset(self.keys.player_meta(player), mapping={"name": name, "created_ms": now_ms})
        pipe.set(self.keys.token(hash_token(token)), player)
        await pipe.execute()
        return player, token

    async def player_for_token(self, token: str) -> str | None:
        return await self.redis.get(self.keys.token(hash_token(token)))

    async def rename_player(self, player: str, name: str) -> None:
        await self.redis.hset(self.keys.player_meta(player), "name", name)

    async def player_name(self, player: str) -> str | None:
        return await self.redis.hget(self.keys.player_meta(player), "name")

    async def player_games(self, player: str) -> list[str]:
        return sorted(await self.redis.smembers(self.keys.player_games(player)))

    async def seat_player(self, player: str, gid: str) -> list[str]:
        """Lists a seat's game among the player's games, before the seat itself is written
        (a crash in between must not hide the seat), and returns the other instances where
        the player is connected: the race's events must reach them too."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.sadd(self.keys.player_games(player), gid)
        pipe.smembers(self.keys.player_interest(player))
        _, instances = await pipe.execute()
        return sorted(set(instances) - {self.instance})

    async def forget_player_games(self, player: str, gids: Sequence[str]) -> None:
        if gids:
            await self.redis.srem(self.keys.player_games(player), *gids)

    async def add_interest(self, sets: Sequence[str]) -> None:
        """Ask for the events of these races (interest sets) to reach this instance."""
        if not sets:
            return
        pipe = self.redis.pipeline(transaction=False)
        for key in sets:
            pipe.sadd(key, self.instance)
        await pipe.execute()

    # ------------------------------------------------------------ games

    def game_keys(self, gid: str) -> GameKeys | None:
        keys = self._game_keys.get(gid)
        if keys is None:
            keys = self.keys.game(gid)
            if keys is not None:
                if len(self._game_keys) >= 100_000:
                    self._game_keys.clear()
                self._game_keys[gid] = keys
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

    async def load_records(self, gids: Sequence[str]) -> list[GameRecord | None]:
        """Game records (without move lists) of several games at once."""
        pipe = self.redis.pipeline(transaction=False)
        self._queue_records(pipe, gids)
        return self._records(gids, await pipe.execute())

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

    async def create_game(self, record: GameRecord) -> bool:
        """Store a new game (a daily attempt); False if it exists already."""
        keys = self.keys.game(record.gid)
        assert keys is not None
        created = await self.redis.hsetnx(keys.meta, "gid", record.gid)
        if created:
            await self.redis.hset(keys.meta, mapping=record.to_redis())
        return bool(created)

    def write_game(
        self,
        record: GameRecord,
        move: str,
        expect_n: int,
        now_ms: int,
        payload: bytes,
    ) -> asyncio.Future[MoveOutcome]:
        """Append `move` (or '' for none) and store `record`, atomically, in a group commit.

        Applied only if the stored move count is `expect_n` (-1: any) and the game
        is neither finished nor out of time; `payload` is relayed to the other
        instances interested in the game once written.
        """
        keys = self.game_keys(record.gid)
        assert keys is not None
        key_list = [keys.meta, keys.moves, keys.interest]
        if record.kind == "race":
            key_list.append(self.keys.race_meta(record.race))
        return self.commit.submit(
            key_list, expect_n, move, now_ms, record.written_fields(), payload
        )

    # ------------------------------------------------------------ races

    async def load_race(self, code: str) -> Race | None:
        return (await self.load_race_records(code, []))[0]

    async def load_race_records(
        self, code: str, gids: Sequence[str]
    ) -> tuple[Race | None, list[GameRecord | None]]:
        """A race and, in the same round trip, the records of games `gids` (its seats'
        games, when the caller knows them)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.hgetall(self.keys.race_meta(code))
        pipe.lrange(self.keys.race_seats(code), 0, -1)
        self._queue_records(pipe, gids)
        meta, seats, *raw = await pipe.execute()
        if not meta or "status" not in meta:
            return None, []
        return Race.from_redis(meta, [_seat(s) for s in seats]), self._records(gids, raw)

    def _race_keys(self, code: str) -> list[str]:
        k = self.keys
        return [k.race_meta(code), k.race_seats(code), k.race_interest(code)]

    async def create_race(
        self, race: Race, host_record: GameRecord, payload: bytes, instances: Sequence[str]
    ) -> bool:
        """Store a new race with its host seated; False if the code is taken. `instances`:
        the others where the host is connected (Store.seat_player)."""
        host_keys = self.keys.game(host_record.gid)
        assert host_keys is not None
        race_fields = flat_fields(race.to_redis())
        args = [
            self.config.lobby_ttl_s,
            _seat_entry(race.seats[0]),
            self.instance,
            self.channel_prefix,
            payload,
            len(race_fields),
            len(instances),
            *race_fields,
            *instances,
            *flat_fields(host_record.to_redis()),
        ]
        return bool(
            await self._eval(
                scripts.CREATE_RACE, [*self._race_keys(race.code), host_keys.meta], args
            )
        )

    async def join_race(
        self, race: Race, record: GameRecord, payload: bytes, instances: Sequence[str]
    ) -> int:
        """Seat a player (`instances`: as for create_race): 1 joined, 0 the race changed
        meanwhile, -1 no such race."""
        keys = self.keys.game(record.gid)
        assert keys is not None
        seat = p.Seat(record.player, record.name)
        args = [
            race.ver,
            _seat_entry(seat),
            self.config.lobby_ttl_s,
            self.instance,
            self.channel_prefix,
            payload,
            len(instances),
            *instances,
            *flat_fields(record.to_redis()),
        ]
        return int(
            await self._eval(scripts.JOIN_RACE, [*self._race_keys(race.code), keys.meta], args)
        )

    async def start_race(
        self,
        race: Race,
        starts_at: int,
        ends_at: int,
        initial: dict[str, str],
        payload: bytes,
        deadline_ms: int,
    ) -> int:
        """Index the race among the running ones, then start it: 1 started, 0 the race
        changed meanwhile, -1 no such race. Indexed first, so that a crash right after
        the start cannot leave the race without a timer (a race indexed but never started
        is dropped from the index by the reaper)."""
        metas = [self.keys.game(gid).meta for gid in race.gids()]  # type: ignore[union-attr]
        keys = [*self._race_keys(race.code), *metas]
        args = [race.ver, starts_at, ends_at, self.instance, self.channel_prefix, payload]
        args += flat_fields(initial)
        if self.config.redis_cluster:
            # The index and the race live on different nodes: one after the other.
            await self.index_running(race.code, deadline_ms)
            return int(await self._eval(scripts.START_RACE, keys, args))
        index = (scripts.INDEX, [self.keys.running_index()], [race.code, deadline_ms])
        replies = await self._eval_in_order([index, (scripts.START_RACE, keys, args)])
        return int(replies[1])

    async def close_race(
        self, race: Race, gver: int, end_ms: int, result: bytes, payload: bytes, deadline_ms: int
    ) -> int:
        """Store the result and mark the race done, then drop it from the running index
        (entered with `deadline_ms`): 1 closed by this call, 0 not running (someone else
        closed it), -1 a seat's game changed since `gver` (read again and retry)."""
        game_keys = [self.keys.game(gid) for gid in race.gids()]
        metas = [k.meta for k in game_keys if k]
        moves = [k.moves for k in game_keys if k]
        args = [
            gver,
            end_ms,
            result,
            self.config.finished_race_ttl_s,
            self.instance,
            self.channel_prefix,
            payload,
        ]
        keys = [*self._race_keys(race.code), *metas, *moves]
        if self.config.redis_cluster:
            status = int(await self._eval(scripts.CLOSE_RACE, keys, args))
            if status == 1:
                await self.unindex(race.code, deadline_ms)
            return status
        unindex = (
            scripts.UNINDEX_CLOSED,
            [self.keys.running_index(), self.keys.race_meta(race.code)],
            [race.code, deadline_ms],
        )
        replies = await self._eval_in_order([(scripts.CLOSE_RACE, keys, args), unindex])
        return int(replies[0])

    # ------------------------------------------------------------ running index

    async def index_running(self, code: str, deadline_ms: int) -> None:
        await self.redis.zadd(self.keys.running_index(), {code: deadline_ms})

    async def running(self, until_ms: float | None = None) -> list[tuple[str, int]]:
        """Running races (code, deadline), those due by `until_ms` only if given."""
        hi = "+inf" if until_ms is None else until_ms
        rows = await self.redis.zrangebyscore(
            self.keys.running_index(), "-inf", hi, withscores=True
        )
        return [(code, int(score)) for code, score in rows]

    async def unindex(self, code: str, score: int) -> None:
        await self._eval(scripts.UNINDEX, [self.keys.running_index()], [code, score])


def flat_fields(mapping: dict[str, str]) -> list[str]:
    """field, value, field, value, ...: a hash's fields as script arguments."""
    out: list[str] = []
    for k, v in mapping.items():
        out += (k, v)
    return out


def _seat_entry(seat: p.Seat) -> str:
    # Names are printable, so they never hold a tab.
    return f"{seat.player}\t{seat.name}"


def _seat(entry: str) -> p.Seat:
    player, _, name = entry.partition("\t")
    return p.Seat(player=player, name=name)
