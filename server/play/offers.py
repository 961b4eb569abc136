"""The `rematch` offer of a finished race whose rematch exists, for whoever comes to the race
after it was asked for: a seat back from elsewhere (`join`), the race's page."""

from __future__ import annotations

import protocol as p
from server.domain.records import RaceRecord
from server.store.stores import Stores


async def rematch_offer(stores: Stores, done: RaceRecord) -> p.RematchOffer | None:
    """Who asked first (the rematch's host) and the rematch's code; None when there is no
    rematch (or it is gone)."""
    if not done.rematch:
        return None
    rematch = await stores.races.load_race(done.rematch)
    if rematch is None:
        return None
    host = next((s for s in rematch.seats if s.player == rematch.host), None)
    if host is None:
        return None
    return p.RematchOffer(race=done.code, next=rematch.code, player=host.player, name=host.name)
