"""Games in Redis: records, move lists, move times and snapshots, read in one round trip
and written version-checked (moves through the group commit, server/store/group_commit.py;
the rest as batches, server/store/batches.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from server.domain.changes import GameChange, Written
from server.domain.records import GameRecord
from server.lru import LRU
from server.store import scripts
from server.store.batches import Repo
from server.store.group_commit import GroupCommit
from server.store.keys import GameKeys, Keys
from server.store.unavailable import STORE_ERRORS, StoreUnavailable, unavailable_on_failure
from server.store.writes import Batch


@dataclass
class LoadedGame:
    """A game as one read saw it: its record, some of its snapshots (move count, text;
    highest first) and its move list's entries from `start` on."""

    record: GameRecord
    snapshots: list[tuple[int, str]]
    start: int
    moves: list[str]


def queue_records(pipe: Any, keys: Keys, gids: Sequence[str]) -> None:
    """Queue on `pipe` the reads of games' records (records_read makes them records)."""
    for gid in gids:
        game = keys.game(gid)
        assert game is not None
        pipe.hgetall(game.meta)
        pipe.llen(game.moves)


def records_read(gids: Sequence[str], raw: Sequence[Any]) -> list[GameRecord | None]:
    """The records of `gids` from the replies of queue_records' reads."""
    out: list[GameRecord | None] = []
    for i in range(len(gids)):
        meta, n = raw[2 * i], raw[2 * i + 1]
        out.append(GameRecord.from_redis(meta, int(n)) if meta else None)
    return out


@unavailable_on_failure
@dataclass(eq=False)
class GameRepo(Repo):
    """Games: one player's record and moves each (a race seat, a daily attempt, practice)."""

    commit: GroupCommit  # the moves' writes

    def __post_init__(self) -> None:
        self._load_game = self.redis.register_script(scripts.LOAD_GAME)
        self._game_keys: LRU[str, GameKeys] = LRU(self.config.game_keys_memo_size)

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
        return await self.batches.apply(batch)

    async def load_records(self, gids: Sequence[str]) -> list[GameRecord | None]:
        """Game records (without move lists) of several games at once."""
        pipe = self.redis.pipeline(transaction=False)
        queue_records(pipe, self.keys, gids)
        return records_read(gids, await pipe.execute())

    async def game_moves(self, gid: str, start: int, stop: int) -> list[str]:
        """Moves `start` to `stop` (excluded) of a game's move list: a replay reads only
        the part it shows, never a long game's whole list for one page."""
        keys = self.game_keys(gid)
        if keys is None or stop <= start:
            return []
        return list(await self.redis.lrange(keys.moves, start, stop - 1))

    def write_move(
        self,
        record: GameRecord,
        move: str,
        expect_ver: int,
        payload: bytes,
        snapshot: str = "",
        at_ms: int = 0,
        peers: Sequence[str] | None = None,
    ) -> asyncio.Future[Written]:
        """Append `move` (or '' for none) and store `record` (at its new version), if the
        stored game is at `expect_ver`, through the group commit: a future of the write's
        Written status. `payload` is relayed to the other instances interested in the game;
        a `snapshot` (of the position after the move) is kept with the move, and so is
        its time `at_ms` (in the game's times list, in the same script call). With `peers`
        (the ids of the other seats' games of its race, for a write that ends its game),
        APPLIED_LAST says that they had all ended too, in the same atomic step."""
        keys = self.game_keys(record.gid)
        assert keys is not None
        # The game's own keys, then its peers' metas.
        write_keys = (
            [keys.meta, keys.moves, keys.interest, keys.times, keys.snaps]
            if snapshot
            else [keys.meta, keys.moves, keys.interest, keys.times]
        )
        checked = -1
        if peers is not None:
            for gid in peers:
                peer = self.game_keys(gid)
                assert peer is not None
                write_keys.append(peer.meta)
            checked = len(peers)
        return self.commit.submit(
            write_keys, expect_ver, move, record.written_fields(), payload, snapshot, at_ms, checked
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
        return await self.batches.apply(batch)

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
