"""The server process: wires store, bus, sessions, HTTP and timers; clean shutdown."""

from __future__ import annotations

import asyncio
import itertools
import logging
import secrets
import signal
from collections.abc import Awaitable, Coroutine
from typing import Any

import engine
import protocol as p
from server import collector
from server.clock import Clock
from server.config import Config
from server.daily.deals import DailyDeals
from server.daily.seeds import DaySeeds
from server.daily.service import DailyRequests, DailyService
from server.edge.admission import Admission, NewPlayers
from server.edge.connection import InboxConnection, Limits, Listen, serve_connections
from server.edge.dispatch import build_handlers
from server.edge.http import HttpRoutes
from server.edge.hub import Hub
from server.edge.reach import reach_lines
from server.edge.session import Session, SessionContext
from server.edge.watchers import Watchers
from server.edge.webclient import WebClient
from server.memory import Bounded, CacheGauges, MemoryDebug
from server.metrics import Metrics
from server.play.bot_races import StartedBotRaces
from server.play.bots import BotRunner
from server.play.cache import LiveGames
from server.play.game_machine import GameRules
from server.play.ghosts import Ghosts
from server.play.moves import Moves
from server.play.names import Names
from server.play.players import Players
from server.play.practice import Practice
from server.play.presence import Presence
from server.play.quick import Quick
from server.play.races import Races
from server.play.replays import Replays
from server.play.spectators import Spectating
from server.solver_pool import SolverPool
from server.store.bus import Bus
from server.store.embedded import Supervision, SupervisionMetrics
from server.store.redis_client import create_redis
from server.store.stores import Stores

log = logging.getLogger(__name__)


class App:
    """One server process: the store, the bus, the services of each layer, the sessions."""

    def __init__(
        self,
        config: Config,
        redis_url: str,
        listen: Listen | None = None,
        supervision: Supervision | None = None,
    ) -> None:
        """`supervision`: the watch of the embedded store this process started, if any."""
        self.config = config
        self.redis_url = redis_url
        self.listen = listen
        self.clock = Clock(config.clock_offset_s)
        self.instance = secrets.token_hex(6)
        self.metrics = Metrics()
        self.supervision = supervision
        if supervision is not None:
            SupervisionMetrics(supervision, self.metrics.registry)
        self.admission = Admission(config, self.metrics)
        self.hub = Hub(Watchers.from_config(config))
        self.sessions: set[Session] = set()
        self.draining = False
        self.port = 0
        self.stores = Stores(config, create_redis(config, redis_url), self.instance)
        self.cache = LiveGames(self.stores, config.game_cache_size, self.metrics)
        self.bus = Bus(
            create_redis(config, redis_url, decode_responses=False),
            self.stores.presence.instance_channel,
            self.hub.deliver,
        )
        self.solver = SolverPool(
            config.solver_workers,
            config.solver_queue_max,
            owner_share=config.hint_share,
            owner_burst_s=config.hint_burst_s,
            owners_remembered=config.solver_owners_remembered,
        )
        deliver = self.hub.deliver
        names = Names(self.stores, self.clock, self.metrics)
        self.players = Players(self.stores, self.cache, self.clock, names)
        bot_races = StartedBotRaces()
        hub = self.hub
        cache = self.cache

        def game_finished(gid: str) -> bool:
            live = cache.peek(gid)
            return live is not None and live.record.finished

        def here(player: str) -> bool:
            return bool(hub.sessions(player))

        self.ghosts = Ghosts(self.stores, self.clock, deliver, here, game_finished)
        self.races = Races(
            self.stores, self.cache, self.clock, config, deliver, bot_races, self.ghosts, here
        )
        # The daily deals' secret is read at start-up (run), before anyone plays.
        self.day_seeds = DaySeeds()
        self.daily_deals = DailyDeals(
            self.stores, self.day_seeds.seed, self.solver, config, self.instance
        )
        self.daily = DailyService(
            self.stores,
            self.day_seeds,
            self.clock.now_s,
            engine.GAMES,
            self.metrics,
            self.daily_deals,
        )
        self.moves = Moves(
            self.stores,
            self.cache,
            self.races,
            self.clock,
            self.metrics,
            deliver,
            self.daily,
            GameRules.of(config),
        )
        self.bots = BotRunner(
            self.stores, self.cache, self.moves, self.solver, self.clock, config, bot_races
        )
        self.quick = Quick(self.stores, self.races, self.clock, config, deliver, self.metrics)
        self.presence = Presence(self.stores, self.races, self.quick, config)
        self.practice = Practice(
            self.stores,
            self.cache,
            self.moves,
            self.solver,
            self.clock,
            config,
            deliver,
            self.metrics,
        )
        self.replays = Replays(self.stores, self.clock, config)
        self.spectating = Spectating(self.stores, self.cache, self.clock, config, self.hub)
        CacheGauges(self.bounded_caches(), self.metrics.registry)
        self.memory = MemoryDebug(self.bounded_caches(), self.other_sizes)
        if config.debug_memory:
            self.memory.start()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ids = itertools.count(1)
        self._stop = asyncio.Event()
        self.session_context = SessionContext(
            instance=self.instance,
            config=config,
            metrics=self.metrics,
            admission=self.admission,
            new_players=NewPlayers(config, self.stores, self.clock, self.metrics),
            hub=self.hub,
            decoder=p.RequestDecoder(config.limits),
            players=self.players,
            presence=self.presence,
            handlers=build_handlers(
                self.races,
                self.moves,
                self.practice,
                DailyRequests(self.daily, self.cache, self.clock.now_ms),
                self.replays,
                self.spectating,
                self.quick,
            ),
            spawn=self.spawn,
            ids=self._ids,
            sessions=self.sessions,
            draining=lambda: self.draining,
        )

    def bounded_caches(self) -> dict[str, Bounded]:
        """Every bounded cache of the process, by the name /metrics gives it. Read here
        rather than through each owner, so that a new memo is one line in one place."""
        return {
            "games": self.cache._items,
            "game_keys": self.stores.games._game_keys,
            "race_seats": self.races._seats,
            "race_lobbies": self.races._lobbies,
            "replay_marks": self.replays._marks,
            "spectator_games": self.spectating._replays,
            "hint_owners": self.solver._known,
        }

    def other_sizes(self) -> dict[str, int]:
        """Collections that live as long as what they track (connections, waiters)."""
        return {
            "sessions": len(self.sessions),
            "side_tasks": len(self._tasks),
            "admission_connections": self.admission.total,
            "admission_addresses": len(self.admission.per_address),
            "hub_players": len(self.hub._by_player),
            "game_turns": len(self.cache._turns),
            "solver_running": self.solver.running,
        }

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a side task that nobody awaits (kept referenced until done)."""
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ running

    async def run(self) -> None:
        cfg = self.config
        await self.stores.open()
        self.day_seeds.use((await self.stores.presence.secret_or_new(cfg.secret)).encode())
        await self.bus.start()
        routes = HttpRoutes(
            health=self.stores.ping,
            store_problem=self.supervision.describe if self.supervision else None,
            metrics=self.metrics,
            daily=self.daily,
            replays=self.replays,
            races=self.spectating,
            quick=self.quick,
            memory_report=self.memory.report if cfg.debug_memory else None,
            web=WebClient(),
            allowed_origins=cfg.web_origins,
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        # A worker of `--workers` starts with both blocked (server/workers.py says why): one
        # that came during its start-up is delivered now, to the handler above.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGTERM, signal.SIGINT))
        # Races whose time ran out while no server was up are closed before anyone connects,
        # so that nobody is welcomed back into a race that is over.
        await self._reap(full=True)
        await self.presence.beat()
        limits = Limits(
            max_size=cfg.max_frame_bytes,
            write_limit=cfg.max_outbox_bytes * 2,
            ping_interval=cfg.ping_interval_s,
            ping_timeout=cfg.ping_timeout_s,
            max_fragments=cfg.max_fragments,
            inbox_high=cfg.inbox_high,
            inbox_low=cfg.inbox_low,
        )
        async with serve_connections(
            self._handle,
            cfg.host,
            cfg.port,
            routes=routes,
            limits=limits,
            admission=self.admission,
            listen=self.listen,
        ) as server:
            self.port = server.sockets[0].getsockname()[1] if server.sockets else cfg.port
            log.info(
                "solitaire-server %s listening on ws://%s:%d/ws (namespace %s)",
                self.instance, cfg.host, self.port, cfg.namespace,
            )  # fmt: skip
            if self.listen is None:  # workers: their supervisor says it once
                for line in reach_lines(cfg.public_url, cfg.host, self.port):
                    log.info("%s", line)
            # Everything made so far lives as long as the process; from here on the
            # collector runs on our schedule (server/collector.py says why).
            collector.schedule(cfg.gc_young_threshold)
            reaper = asyncio.create_task(self._reaper(), name="reaper")
            background = [
                asyncio.create_task(self.bots.run(), name="bots"),
                asyncio.create_task(collector.run(cfg.gc_full_every_s), name="collector"),
                asyncio.create_task(self.quick.run(self._stop), name="quick-matcher"),
            ]
            if cfg.daily_prepare_ahead:
                deals = self.daily_deals.run_ahead(engine.GAMES, self.clock.now_s)
                background.append(asyncio.create_task(deals, name="daily-deals"))
            await self._stop.wait()
            log.info("shutting down: no new connections, finishing requests in flight")
            server.close(close_connections=False)
            await self._drain()
            tasks = [reaper, *background]
            for task in tasks:
                task.cancel()
            # Bounded: a cancellation that lands inside a Redis call can be lost in the client
            # library (bench runs saw the reaper carry on looping after cancel()).
            _done, stuck = await asyncio.wait(tasks, timeout=cfg.shutdown_grace_s)
            if stuck:
                log.warning("shutting down without %s", ", ".join(t.get_name() for t in stuck))
            await self.bots.stop()
            await self.ghosts.close()
            self.solver.close()
            await server.wait_closed()
        await self.stores.close()
        await self.bus.close()
        log.info("stopped")

    def _handle(self, ws: InboxConnection) -> Awaitable[None]:
        # The session's own coroutine, not one around it: a frame less per connection.
        return Session(self.session_context, ws).run()

    async def _drain(self) -> None:
        self.draining = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.shutdown_grace_s
        while any(s.busy for s in self.sessions) and loop.time() < deadline:
            await asyncio.sleep(0.02)
        sessions = list(self.sessions)
        await asyncio.gather(
            *(s.close(p.CLOSE_GOING_AWAY, "server shutting down") for s in sessions),
            return_exceptions=True,
        )
        log.info("closed %d connections with 1001", len(sessions))

    async def _reaper(self) -> None:
        """Closes races past their deadline (and complete ones a crash left open)."""
        cfg = self.config
        loop = asyncio.get_running_loop()
        last_full = loop.time()  # run() made a full pass before serving
        while not self._stop.is_set():  # the stop event too: see the cancellation in run()
            await asyncio.sleep(cfg.reaper_interval_s)
            try:
                await self.presence.beat()
                full = loop.time() - last_full >= cfg.reaper_full_scan_s
                if full:
                    last_full = loop.time()
                await self._reap(full)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("reaper: pass failed; will retry")

    async def _reap(self, full: bool) -> None:
        """One pass: races past their deadline, or (`full`) every running race."""
        running = await self.races.reap(full)
        if full:
            self.metrics.races_running.set(running)
        await self.daily.sweep(self.clock.now_ms())
