"""Winnable daily deals: each day's deal is found ahead of time and stored once.

For a (game, date), the candidates are the day's HMAC seed (`daily_seed`) and the seeds
after it; the first that the solver proves winnable within the budget is the day's deal,
and its winning line is kept so that, once the day is over, the leaderboard can show it
and its length ("par"). The search runs in the solver pool, never in the event loop.

Every instance serves the same deal: the deal is written once (a script that writes only
if nothing is there yet) and always read back from Redis. A short lock lets one instance
search for a given (game, date) while the others wait for its answer. A background task on
every instance prepares today's and tomorrow's deals, so a player rarely waits; one who asks
first computes it then (still in the pool) or waits for whoever holds the lock.

If no candidate is proven winnable within `daily_max_candidates` (not seen with the
default budgets, see docs/solvers.md), the deal falls back to the HMAC seed itself with
no line and par unknown, and an error is logged: every instance falls back the same way.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from server import solver_pool
from server.config import Config
from server.solver_pool import DAILY, SolverPool
from server.store.locks import Lease
from server.store.stores import Stores

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DailyDeal:
    game: str
    date: str
    seed: int
    line: list[str]  # a winning line from the deal (empty if none was proven)
    proven: bool  # False: the fallback deal, nobody proved it winnable
    candidates: int  # seeds tried to find it (0: not searched, a day from before)

    @property
    def par(self) -> int | None:
        return len(self.line) if self.proven else None

    @classmethod
    def from_redis(cls, game: str, date: str, raw: dict[Any, Any]) -> DailyDeal:
        d = {_s(k): _s(v) for k, v in raw.items()}
        return cls(
            game=game,
            date=date,
            seed=int(d["seed"]),
            line=d.get("line", "").split(),
            proven=d.get("proven") == "1",
            candidates=int(d.get("candidates", 0)),
        )


class DailyDeals:
    def __init__(
        self,
        stores: Stores,
        first_seed: Callable[[str, dt.date], int],
        pool: SolverPool,
        config: Config,
        owner: str,
    ) -> None:
        self.stores = stores
        self.first_seed = first_seed  # the day's HMAC seed: the first candidate
        self.pool = pool
        self.config = config
        self.owner = owner

    async def stored(self, game: str, date: dt.date) -> DailyDeal | None:
        raw = await self.stores.daily.stored_deal(game, date.isoformat())
        return DailyDeal.from_redis(game, date.isoformat(), raw) if raw else None

    async def get(self, game: str, date: dt.date) -> DailyDeal:
        """The day's deal: stored, else searched now (or awaited from whoever searches)."""
        deal = await self.stored(game, date)
        if deal is not None:
            return deal
        # Another instance may be searching: wait for its answer, or for its lock to lapse
        # (it renews the lock while it searches, so a lapse means it died) and search here.
        while True:
            deal = await self.prepare(game, date)
            if deal is not None:
                return deal
            await asyncio.sleep(0.1)

    async def prepare(self, game: str, date: dt.date) -> DailyDeal | None:
        """Search for the day's deal unless it is stored; None if another instance is at it."""
        deal = await self.stored(game, date)
        if deal is not None:
            return deal
        day = date.isoformat()
        lock = self.stores.daily.deal_lock(game, day, self.config.daily_lock_s)
        if not await lock.take():
            return None
        renewer = asyncio.create_task(self._keep_lock(lock))
        try:
            deal = await self.stored(game, date)  # stored between our read and the lock
            if deal is not None:
                return deal
            cfg = self.config
            first = self.first_seed(game, date)
            log.info("daily deal %s %s: searching from seed %d", game, day, first)
            found = await self.pool.run(
                solver_pool.find_daily_deal,
                game,
                first,
                cfg.daily_budget_nodes,
                cfg.daily_budget_s,
                cfg.daily_max_candidates,
                lane=DAILY,
            )
            fields = {
                "seed": str(found["seed"]),
                "line": " ".join(found["line"]),
                "par": str(len(found["line"])) if found["proven"] else "",
                "proven": "1" if found["proven"] else "0",
                "candidates": str(found["candidates"]),
                "seconds": f"{found['seconds']:.3f}",
                "by": self.owner,
                "at_ms": str(int(time.time() * 1000)),
            }
            written = await self.stores.daily.store_deal_once(game, day, fields)
            if not found["proven"]:
                log.error(
                    "daily deal %s %s: NO WINNABLE DEAL in %d candidates from seed %d; "
                    "falling back to seed %d with par unknown",
                    game, day, found["candidates"], first, found["seed"],
                )  # fmt: skip
            else:
                log.info(
                    "daily deal %s %s: seed %d (candidate %d), par %d, %.2f s%s",
                    game, day, found["seed"], found["candidates"], len(found["line"]),
                    found["seconds"], "" if written else " (another instance stored it first)",
                )  # fmt: skip
        finally:
            renewer.cancel()
            await lock.release()
        return await self.stored(game, date)

    async def _keep_lock(self, lock: Lease) -> None:
        while True:
            await asyncio.sleep(self.config.daily_lock_s / 3)
            await lock.renew()

    async def run_ahead(self, games: tuple[str, ...], now_s: Callable[[], float]) -> None:
        """Forever: make sure today's and tomorrow's deals of every game are stored."""
        await asyncio.sleep(self.config.daily_prepare_delay_s)
        while True:
            try:
                today = dt.datetime.fromtimestamp(now_s(), dt.UTC).date()
                for date in (today, today + dt.timedelta(days=1)):
                    for game in games:
                        await self.prepare(game, date)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("daily deals: preparing failed; will retry")
            await asyncio.sleep(self.config.daily_prepare_interval_s)


def _s(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
