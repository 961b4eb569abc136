"""Players' names: one person per name.

A name is reserved in the store under its folded form (`fold_name`: case, Unicode width
forms and spacing ignored, so "Bob", "BOB" and " bob " are one name), set atomically at
its first use and held until its player renames. Bots take no names from people: their
names end with " (bot)", are never reserved, and no person's may end so.

Players who had the same name before names were reserved keep it: the first of them to
say hello reserves it, the others go on under it as its sharers (nobody else can take it,
each of their board rows is still their own, by player id, and if the holder renames the
name passes to a sharer). A player may always keep their own name, changing only its case
or spacing. A player who never plays is forgotten (PlayerRepo.create_player), and so is the
reservation of its name.
"""

from __future__ import annotations

import logging
import unicodedata

import protocol as p
from server.clock import Clock
from server.metrics import Metrics
from server.play.bot_seats import BOT_SUFFIX
from server.store.stores import Stores

log = logging.getLogger(__name__)


def fold_name(name: str) -> str:
    """The form under which names are unique."""
    return " ".join(unicodedata.normalize("NFKC", name).casefold().split())


class Names:
    def __init__(self, stores: Stores, clock: Clock, metrics: Metrics) -> None:
        self.stores = stores
        self.clock = clock
        self.metrics = metrics

    async def new_player(self, name: str) -> tuple[str, str]:
        """Make a player named `name`: (player id, token). Refused (name_taken) if the name
        is someone's. (Each address's allowance of new players is server/edge/admission.py's.)"""
        self._check_not_bot(name)
        stores = self.stores
        folded = fold_name(name)
        # The player is stored (with its name) before the name is claimed, so a name's
        # holder is always a stored player that has that name: see _claim. The claim lasts
        # as long as the player does unless it plays (PlayerRepo.keep_player).
        player, token = await stores.players.create_player(name, self.clock.now_ms(), folded)
        if await self._claim(folded, player, stores.players.unplayed_meta_ttl_s * 1000) is not None:
            await stores.players.delete_player(player, token)
            raise self._taken(name)
        self.metrics.players_created.inc()
        return player, token

    async def keep_or_rename(self, player: str, name: str) -> None:
        """A returning player says hello under `name`: their own name, or a new one that
        must be free (name_taken if not; the player keeps the old one then)."""
        stores = self.stores
        current, meta_ttl_ms = await stores.players.player_name_and_ttl(player)
        ttl_ms = max(meta_ttl_ms, 0)  # a player who has not played yet expires, its name too
        folded = fold_name(name)
        old = fold_name(current) if current is not None else None
        if folded == old:
            holder = await self._claim(folded, player, ttl_ms)
            if holder is not None:
                await stores.players.share_name(folded, player)
                log.info("player %s keeps the name %r, also held by %s", player, name, holder)
            if name != current:
                await stores.players.rename_player(player, name, folded)
            return
        self._check_not_bot(name)
        # The new name first, then the claim (a holder always has its name stored).
        await stores.players.rename_player(player, name, folded)
        if await self._claim(folded, player, ttl_ms) is not None:
            if current is not None and old is not None:
                await stores.players.rename_player(player, current, old)
            raise self._taken(name)
        if old is not None:
            await stores.players.swap_name(old, player, "")
        log.info("player %s renamed from %r to %r", player, current, name)

    async def _claim(self, folded: str, player: str, ttl_ms: int) -> str | None:
        """Reserve the name for `player` (for `ttl_ms`, 0: for good): None if it is theirs
        now, else its holder. A holder that no longer has the name (or no longer exists: a
        player who never played and expired, or a crash between a player's rename and the
        release of its old name) loses it."""
        stores = self.stores
        holder = await stores.players.swap_name(folded, "", player, ttl_ms)
        for _ in range(3):
            if not holder:
                return None
            held_as = await stores.players.player_name(holder)
            if held_as is not None and fold_name(held_as) == folded:
                return holder
            log.info("name %r taken back from player %s (now %r)", folded, holder, held_as)
            holder = await stores.players.swap_name(folded, holder, player, ttl_ms)
        return holder or None

    def _check_not_bot(self, name: str) -> None:
        suffix = fold_name(BOT_SUFFIX)
        if fold_name(name).endswith(suffix):
            self.metrics.players_refused.labels("name_taken").inc()
            raise p.Refused(
                p.NAME_TAKEN, f"names ending in {suffix!r} are the server's bots'; choose another"
            )

    def _taken(self, name: str) -> p.Refused:
        self.metrics.players_refused.labels("name_taken").inc()
        return p.Refused(
            p.NAME_TAKEN, f"the name {name!r} is taken (names ignore case); choose another"
        )
