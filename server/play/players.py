"""Who is asking: greeting a connection (hello), and the games a player comes back to."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import protocol as p
from server.clock import Clock
from server.domain.kinds import GameKind
from server.domain.records import RaceStatus
from server.play.cache import LiveGames
from server.play.names import Names
from server.play.race_machine import lobby_message
from server.store.stores import Stores

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Who:
    """The player behind a request, and the connection (or bot) it came through: events
    for the player skip that connection, which hears the replies instead."""

    player: str
    name: str
    uid: str


class Players:
    def __init__(self, stores: Stores, cache: LiveGames, clock: Clock, names: Names) -> None:
        self.stores = stores
        self.cache = cache
        self.clock = clock
        self.names = names

    async def hello(self, msg: p.Hello, uid: str) -> tuple[Who, list[p.Message]]:
        """Welcomes a connection: who it is, and the replies (welcome, then the lobbies the
        player waits in). Raises Refused when it may not be welcomed."""
        if msg.v != p.VERSION:
            raise p.Refused(
                p.UNSUPPORTED_VERSION, f"this server speaks protocol version {p.VERSION}"
            )
        stores = self.stores
        if msg.token is not None:
            player = await stores.players.player_for_token(msg.token)
            if player is None:
                raise p.Refused(p.AUTH_FAILED, "unknown token")
            token = msg.token
            await self.names.keep_or_rename(player, msg.name)
        else:
            player, token = await self.names.new_player(msg.name)
        active, lobbies = await self._games(player)
        welcome = p.Welcome(
            re=msg.id, v=p.VERSION, player=player, name=msg.name, token=token, active=active
        )
        log.info(
            "player %s (%s) %s; %d active games",
            player, msg.name, "is back" if msg.token else "is new", len(active),
        )  # fmt: skip
        return Who(player, msg.name, uid), [welcome, *lobbies]

    async def _games(self, player: str) -> tuple[list[p.State], list[p.Lobby]]:
        """The player's unfinished games and waiting lobbies; registers for their events."""
        stores = self.stores
        gids = await stores.players.player_games(player)
        records = await stores.games.load_records(gids) if gids else []
        races: set[str] = set()  # whose events must reach this instance
        stale: list[str] = []
        active: list[str] = []
        lobby_codes: list[str] = []
        finished_seats = []
        for gid, rec in zip(gids, records, strict=True):
            if rec is None:
                stale.append(gid)
            elif rec.kind is GameKind.RACE and not rec.started_at_ms:
                lobby_codes.append(rec.race)
                races.add(rec.race)
            elif not rec.finished:
                active.append(gid)
                if rec.kind is GameKind.RACE:
                    races.add(rec.race)
            elif rec.kind is GameKind.RACE:
                finished_seats.append(rec)
            else:
                stale.append(gid)
        for rec in finished_seats:
            # A finished seat still hears its race's progress and result until the race ends.
            race = await stores.races.load_race(rec.race)
            if race is not None and race.status == RaceStatus.RUNNING:
                races.add(rec.race)
            else:
                stale.append(rec.gid)
        await stores.presence.listen(players=[player], races=sorted(races))
        await stores.players.forget_player_games(player, stale)
        now = self.clock.now_ms()
        states = []
        for gid in active:
            live = await self.cache.get(gid, fresh=True)
            if live is not None:
                states.append(live.state(now))
        lobbies = []
        for code in lobby_codes:
            race = await stores.races.load_race(code)
            if race is not None and race.status == RaceStatus.LOBBY and player in race.players():
                lobbies.append(lobby_message(race))
        return states, lobbies
