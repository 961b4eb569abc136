"""Players in Redis: their meta and token, their reserved names, the games and
asynchronous races listed as theirs, and how many new players each client address made.

Which player is kept, and for how long a new one lives, is decided above (server/play/);
this module only reads and writes what it is told.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Sequence
from typing import NamedTuple

from server.store import scripts
from server.store.batches import Repo
from server.store.unavailable import STORE_ERRORS, StoreUnavailable, unavailable_on_failure

log = logging.getLogger(__name__)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def new_token() -> str:
    return secrets.token_urlsafe(32)  # 256 bits


# A new player's meta outlives its token by this much (or by the token's whole time to
# live, if shorter), so that no hello finds a token whose meta is gone (create_player).
UNPLAYED_MARGIN_S = 60


def new_player_id() -> str:
    return secrets.token_hex(8)


class SeatListed(NamedTuple):
    instances: list[str]  # the player's other instances
    meta_ttl_ms: int  # the PTTL of the player's meta (-1: kept, -2: gone)


@unavailable_on_failure
class PlayerRepo(Repo):
    """Players, their names and what is listed as theirs."""

    def __post_init__(self) -> None:
        self._swap_name = self.redis.register_script(scripts.SWAP_NAME)
        self._new_player = self.redis.register_script(scripts.NEW_PLAYER)

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

    async def seat_player(self, player: str, gid: str, *, unqueue: bool = False) -> SeatListed:
        """Lists a seat's game among the player's games, before the seat itself is written
        (a crash in between must not hide the seat): the other instances where the player
        is connected (the race's events must reach them too), and the player's meta's PTTL
        (for keep_player). With `unqueue`, the player's quick-race queue entry goes too, in
        the same round trip (a round trip costs the server more CPU than the commands)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.sadd(self.keys.player_games(player), gid)
        pipe.smembers(self.keys.player_interest(player))
        pipe.pttl(self.keys.player_meta(player))
        if unqueue:
            pipe.hdel(self.keys.queue_entries(), player)
        _, instances, meta_ttl_ms, *_ = await pipe.execute()
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
