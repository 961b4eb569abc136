"""Closes races: when every seat has finished, or when the deadline has passed.

Any instance may try; the close script lets exactly one of them write the
result and relay it, and refuses if a seat's game changed since it was read.
"""

from __future__ import annotations

import enum
import logging
from typing import TYPE_CHECKING

import msgspec

import protocol as p
from server.play import race_machine as races
from server.store.bus import Event, encode_events
from server.store.keys import race_gid

if TYPE_CHECKING:
    from server.app import App

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    CLOSED = "closed"
    NOT_DUE = "not_due"
    NOT_RUNNING = "not_running"


async def close_if_due(app: App, code: str) -> Outcome:
    store = app.store
    for _ in range(8):
        # Seats no longer change once a race runs: if this process knows them, the race
        # and its games are read in one round trip.
        known = app.known_race_players(code)
        guess = [race_gid(code, player) for player in known or ()]
        race, loaded = await store.load_race_records(code, guess)
        if race is None or race.status != races.RUNNING:
            return Outcome.NOT_RUNNING
        if race.gids() != guess:
            loaded = await store.load_records(race.gids())
        records = [r for r in loaded if r is not None]
        now = app.clock.now_ms()
        deadline = race.deadline_ms(app.config.untimed_race_max_s)
        if not (races.is_complete(records) or now >= deadline):
            return Outcome.NOT_DUE
        end = min(now, deadline)
        result = races.result(race, races.close_records(records, end))
        events = [Event(to=race.players(), frames=[p.encode(result)])]
        status = await store.close_race(
            race, race.gver, end, msgspec.json.encode(result), encode_events(events), deadline
        )
        if status == 1:
            for gid in race.gids():
                app.cache.evict(gid)
            log.info(
                "race %s finished (%s): %s",
                code,
                "all seats done" if races.is_complete(records) else "time limit",
                ", ".join(f"{s.rank}. {s.player} {s.score}" for s in result.standings),
            )
            app.hub.deliver(events)
            return Outcome.CLOSED
        if status == 0:
            return Outcome.NOT_RUNNING
        # A seat's game changed between our read and the script: read again.
    log.warning("race %s: could not close it (kept changing); will retry", code)
    return Outcome.NOT_DUE
