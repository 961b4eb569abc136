"""Who is connected, on any instance, and what a player's going does to their lobbies.

Every welcomed connection is noted in the store under its player and removed when it
closes. When a player's last connection closes, the lobbies they wait in wait for them
`lobby_leave_grace_s` (a client that lost its network reconnects within it, maybe to
another instance); if they are still gone then, they leave those lobbies
(Races.leave: a leaving host hands the race to the next seated human). Started races
keep every seat: a player comes back to their game with `join`.

Each instance says it is alive in the store every `reaper_interval_s`; a connection noted
by an instance that has stopped saying so (it died without closing it) is not counted.
"""

from __future__ import annotations

import asyncio
import logging

from server.config import Config
from server.domain.ids import parse_gid
from server.domain.kinds import GameKind
from server.play.players import Who
from server.play.quick import Quick
from server.play.races import Races
from server.store.stores import Stores
from server.store.unavailable import StoreUnavailable

log = logging.getLogger(__name__)


class Presence:
    def __init__(self, stores: Stores, races: Races, quick: Quick, config: Config) -> None:
        self.stores = stores
        self.races = races
        self.quick = quick
        self.config = config

    def heartbeat_ttl_s(self) -> float:
        # A few missed beats (a slow store, a long pause) must not make a live instance's
        # connections look gone.
        return max(10.0, 5 * self.config.reaper_interval_s)

    async def beat(self) -> None:
        await self.stores.presence.heartbeat(self.heartbeat_ttl_s())

    async def arrived(self, who: Who) -> None:
        await self.stores.presence.add_connection(who.player, who.uid, self.config.lobby_ttl_s)

    async def departed(self, who: Who, shutting_down: bool) -> None:
        """`who`'s connection has closed. While this server shuts down, nobody leaves a
        lobby: its players reconnect once it (or another instance) is back."""
        try:
            await self.stores.presence.remove_connections(who.player, [who.uid])
            if shutting_down or await self.is_connected(who.player):
                return
            codes = await self._lobbies(who.player)
            queued = await self.quick.is_queued(who.player)
            if not codes and not queued:
                return
            grace = self.config.lobby_leave_grace_s
            waits = ", ".join([*codes, *(["the quick-race queue"] if queued else [])])
            log.info(
                "player %s has no connection left; %s wait %g s for them",
                who.player, waits, grace,
            )  # fmt: skip
            await asyncio.sleep(grace)
            if await self.is_connected(who.player):
                log.info("player %s is back: they stay in %s", who.player, waits)
                return
            if queued:
                await self.quick.leave(who.player)
            for code in codes:
                await self.races.leave(code, who.player)
        except StoreUnavailable as exc:
            log.warning("player %s: store unavailable after a disconnect: %s", who.player, exc)

    async def is_connected(self, player: str) -> bool:
        """Whether the player has a connection open on a running instance."""
        connections = await self.stores.presence.connections(player)
        if not connections:
            return False
        live = await self.stores.presence.live_instances(list(connections.values()))
        dead = [c for c, instance in connections.items() if instance not in live]
        await self.stores.presence.remove_connections(player, dead)
        return len(dead) < len(connections)

    async def _lobbies(self, player: str) -> list[str]:
        """The races the player is seated in that have not started."""
        gids = [g for g in await self.stores.players.player_games(player) if _race_seat(g)]
        records = await self.stores.games.load_records(gids) if gids else []
        return sorted(
            {
                r.race
                for r in records
                if r is not None and r.kind is GameKind.RACE and not r.started_at_ms
            }
        )


def _race_seat(gid: str) -> bool:
    parsed = parse_gid(gid)
    return parsed is not None and parsed.kind is GameKind.RACE
