"""The race requests (create, join, start, rematch) and the closing of races, over the store.

Each request loads the race, asks the race machine (server/play/race_machine.py) for a
transition, has the store make its writes (checked against the version the machine
decided on), and on success answers and delivers the transition's events; when the
store says the race changed meanwhile, it loads the race again and asks again.
Any instance may close a race: the store lets exactly one close go through.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence

import protocol as p
from server.clock import Clock
from server.config import Config
from server.domain.changes import Written
from server.domain.ids import race_gid
from server.domain.ratings import PlayerRating
from server.domain.records import RaceRecord, RaceStatus
from server.lru import LRU
from server.play.bot_races import StartedBotRaces
from server.play.bot_seats import bot_seat, is_bot
from server.play.cache import LiveGames
from server.play.effects import Applier
from server.play.ghosts import Ghosts
from server.play.offers import rematch_offer
from server.play.optimistic import Optimistic, Plan, answer, done
from server.play.players import Who
from server.play.race_machine import (
    RaceMachine,
    RaceRules,
    Transition,
    new_code,
    new_seed,
    normalise_code,
    not_found,
)
from server.play.ratings import new_rating
from server.store.events import Event
from server.store.stores import Stores

log = logging.getLogger(__name__)

RETRIES = 8  # attempts on a race that keeps changing under us before answering `unavailable`

Deliver = Callable[[list[Event]], None]


class Races:
    def __init__(
        self,
        stores: Stores,
        cache: LiveGames,
        clock: Clock,
        config: Config,
        deliver: Deliver,
        bot_races: StartedBotRaces,
        ghosts: Ghosts | None = None,
        here: Callable[[str], bool] = lambda player: False,
    ) -> None:
        self.stores = stores
        self.here = here  # whether a player is connected to this process
        self.cache = cache
        self.clock = clock
        self.config = config
        self.rules = RaceRules.from_config(config)
        self.applier = Applier(deliver)
        self.runner = Optimistic(RETRIES)
        self.bot_races = bot_races
        self.ghosts = ghosts
        # Seats of started races (they no longer change), and lobbies as this process last
        # wrote them: shortcuts that the store can always give again.
        self._seats: LRU[str, list[str]] = LRU(config.race_memo_size)
        self._lobbies: LRU[str, tuple[int, RaceRecord]] = LRU(config.race_memo_size)

    # ------------------------------------------------------------ requests

    async def create(self, who: Who, msg: p.Create) -> list[p.Message]:
        host = p.Seat(player=who.player, name=who.name)
        seed = msg.seed if msg.seed is not None else new_seed()

        def make(code: str) -> tuple[RaceMachine, Transition]:
            return RaceMachine.create(
                self.rules,
                code=code,
                game=msg.game,
                seed=seed,
                host=host,
                max_players=msg.max_players,
                time_limit_s=msg.time_limit_s,
                now_ms=self.clock.now_ms(),
                spectators=msg.spectators,
                rated=msg.rated,
                window_s=(msg.window_s or self.config.async_window_s) if msg.async_ else None,
            )

        for _ in range(RETRIES):
            # Seated now: no longer waiting for a quick race (out of the queue in the same
            # round trip as the seat's listing: one less per race on the create path).
            opened = await self._open(who, new_code(self.rules.code_length), make, unqueue=True)
            if opened is not None:
                break
        else:
            raise p.Refused(p.UNAVAILABLE, "could not find a free race code; try again")
        machine = opened[0]
        race = machine.race
        log.info(
            "race %s created by player %s: %s, %d seats, time limit %s, %s%s",
            race.code, who.player, race.game, race.max_players, race.time_limit_s or "none",
            "spectators welcome" if race.spectators else "no spectators",
            ", rated" if race.rated else "",
        )  # fmt: skip
        if race.async_race:
            await self._list_challenge(who.player, race)
            log.info(
                "race %s is asynchronous: open until %d (window %d s)",
                race.code, race.ends_at_ms, race.window_s,
            )  # fmt: skip
        return await self._opened(who, opened, msg.bots, msg.bot_strength)

    async def join(self, who: Who, msg: p.Join) -> list[p.Message]:
        code = self._code(msg.race)
        seat = p.Seat(player=who.player, name=who.name)
        step, machine = await self._join(code, seat, who.uid)
        if machine.race.async_race and machine.race.status == RaceStatus.RUNNING:
            return await self._joined_async(who, step, machine)
        if step.change is None and not machine.seated(who.player):
            log.info("race %s: its result shown to player %s (not seated)", code, who.player)
        elif step.change is None:
            await self.stores.presence.listen(races=[code])
            if any(isinstance(r, p.Result) for r in step.replies):
                log.info("race %s: result sent again to player %s", code, who.player)
                # A rematch asked for while this seat was away: the `rematch` it missed.
                offer = await rematch_offer(self.stores, machine.race)
                if offer is not None:
                    return [*step.replies, offer]
            elif len(step.replies) > 1:
                log.info("race %s: player %s is back in the running race", code, who.player)
        else:
            log.info("race %s: player %s (%s) joined", code, who.player, who.name)
            self._remember_lobby(machine.race)
            await self.stores.queue.drop(who.player)  # seated: no longer waiting
        return step.replies

    async def _joined_async(
        self, who: Who, step: Transition, machine: RaceMachine
    ) -> list[p.Message]:
        """A seat of an asynchronous race dealt (or back at its game): its ghosts follow."""
        code = machine.code
        live = step.dealt[0]
        if step.change is None:
            await self.stores.presence.listen(races=[code])
            log.info("race %s: player %s is back at its asynchronous game", code, who.player)
        else:
            self.cache.adopt(live)
            await self._list_challenge(who.player, machine.race)
            log.info(
                "race %s: player %s (%s) dealt in the asynchronous race (%d of %d seats)",
                code, who.player, who.name, len(machine.race.seats), machine.race.max_players,
            )  # fmt: skip
            if live.record.finished:  # a deal with no move at all: over at once
                await self.close_if_due(code)
        if self.ghosts is not None and not live.record.finished:
            self.ghosts.follow(live.record)
        return step.replies

    async def _list_challenge(self, player: str, race: RaceRecord) -> None:
        ttl_s = race.window_s + self.config.finished_race_ttl_s
        await self.stores.players.add_challenge(player, race.code, race.created_ms, ttl_s)

    async def challenges(self, who: Who, msg: p.Challenges) -> list[p.Message]:
        """The asker's asynchronous races still open or closed lately, with the standings of
        the seats that have finished (none while the asker's own game is in play)."""
        out: list[p.Challenge] = []
        now = self.clock.now_ms()
        for code in await self.stores.players.player_challenges(who.player):
            race = await self.stores.races.load_race(code)
            if race is None or not race.async_race:
                continue  # expired since
            machine = RaceMachine(race, self.rules)
            if not machine.seated(who.player):
                continue
            records = await self.stores.games.load_records(machine.gids())
            games = [g for g in records if g is not None]
            out.append(machine.challenge(who.player, games, now))
        out.sort(key=lambda c: (not c.open, -c.created_ms))
        return [p.ChallengesReply(races=out[: self.config.challenges_listed])]

    async def start(self, who: Who, msg: p.StartRace) -> list[p.Message]:
        code = self._code(msg.race)
        # First as this process last wrote it, if it did: the store refuses a race that
        # changed since, and then it is read again.
        guess = self._last_lobby(code)

        async def attempt() -> Plan[tuple[RaceMachine, Transition, list[Event]]]:
            nonlocal guess
            race, guess = guess or await self.stores.races.load_race(code), None
            if race is None:
                raise not_found(code)
            machine = RaceMachine(race, self.rules)
            step = machine.start(who.player, self.clock.now_ms())
            change = step.change
            assert change is not None
            events = self._route(step, who.uid)
            return Plan(
                lambda: answer((machine, step, events)),
                lambda: self.stores.races.start_race(change, machine.deadline_ms()),
            )

        machine, step, events = await self.runner.run(f"race {code}", attempt)
        players = machine.players()
        log.info("race %s started by player %s with %d seats", code, who.player, len(players))
        # The first move of a seat connected here needs neither its game nor the seats from
        # the store (a seat elsewhere loads its game there).
        for live in step.dealt:
            if self.here(live.record.player):
                self.cache.adopt(live)
        self._seats.put(code, players)
        self.applier.deliver(events)
        if step.dealt[0].record.over:  # a deal with no move at all: over at once
            await self.close_if_due(code)
        if any(is_bot(pl) for pl in players):
            await self._drive_bots(code)
        return step.replies

    async def open_quick(
        self, game: str, seats: list[p.Seat], rated: bool, bot: str | None = None
    ) -> str:
        """Store a quick race the matcher formed for `seats` (with a bot of strength `bot`
        beside a lone player), tell its players, and schedule its start; its code."""
        now = self.clock.now_ms()
        starts = now + round(self.config.quick_countdown_s * 1000)
        for _ in range(RETRIES):
            code = new_code(self.rules.code_length)
            instances: set[str] = {self.stores.instance}
            listed = await asyncio.gather(
                *(self._seat(s.player, race_gid(code, s.player)) for s in seats)
            )
            for found in listed:
                instances.update(found)
            machine, step = RaceMachine.create_quick(
                self.rules,
                code=code,
                game=game,
                seed=new_seed(),
                seats=seats,
                max_players=len(seats) + (1 if bot else 0),
                time_limit_s=self.config.quick_time_limit_s,
                now_ms=now,
                starts_at_ms=starts,
                rated=rated,
            )
            assert step.change is not None
            events = self._route(step, "", sorted(instances))
            # Scheduled first: a crash right after the write cannot leave it never started
            # (a code scheduled but never written is dropped when its time comes).
            await self.stores.queue.schedule_start(code, starts)
            if await self.stores.races.write_race(step.change) is Written.APPLIED:
                break
            for seat in seats:
                await self.stores.players.forget_player_games(
                    seat.player, [race_gid(code, seat.player)]
                )
        else:
            raise p.Refused(p.UNAVAILABLE, "could not find a free race code; try again")
        self.applier.deliver(events)
        race = machine.race
        if bot:
            race = await self._seat_bots(race, 1, bot, "")
        self._remember_lobby(race)
        log.info(
            "race %s: quick %s race of %s, %s, starts at %d",
            code, game, ", ".join(s.player for s in seats) + (f" and a {bot} bot" if bot else ""),
            "rated" if rated else "unrated", starts,
        )  # fmt: skip
        return code

    async def autostart(self, code: str) -> bool:
        """Start a quick race whose start time has come; True once it needs no more
        starting (started now or before, or gone)."""

        async def attempt() -> Plan[tuple[RaceMachine, Transition, list[Event]] | None]:
            race = await self.stores.races.load_race(code)
            if race is None:
                return done(None)
            machine = RaceMachine(race, self.rules)
            step = machine.autostart(self.clock.now_ms())
            if step is None:
                return done(None)
            change = step.change
            assert change is not None
            events = self._route(step)
            return Plan(
                lambda: answer((machine, step, events)),
                lambda: self.stores.races.start_race(change, machine.deadline_ms()),
                missing=lambda: None,
            )

        started = await self.runner.run(f"race {code}", attempt)
        if started is None:
            race = await self.stores.races.load_race(code)
            return race is None or not RaceMachine(race, self.rules).starts_by_itself
        machine, step, events = started
        players = machine.players()
        log.info("race %s started by itself with %d seats", code, len(players))
        self._seats.put(code, players)
        self.applier.deliver(events)
        if step.dealt[0].record.over:
            await self.close_if_due(code)
        if any(is_bot(pl) for pl in players):
            await self._drive_bots(code)
        return True

    async def _drive_bots(self, code: str) -> None:
        # Indexed before the reply, so that any instance drives them should this one die;
        # the bot runner here takes them at once.
        cfg = self.config
        longest = max(cfg.untimed_race_max_s, cfg.async_window_s, p.WINDOW_MAX_S)
        if await self.stores.races.index_bot_race(code, longest + cfg.finished_race_ttl_s):
            self.bot_races.started(code)

    async def rematch(self, who: Who, msg: p.Rematch) -> list[p.Message]:
        """A seated player of a finished race asks for a rematch (RaceMachine.rematch): the
        first asker makes it, as its host, and every seat of the finished race hears of it;
        whoever asks after is seated in that same race, as by `join`."""
        code = self._code(msg.race)
        await self.stores.queue.drop(who.player)  # seated in the rematch: no longer waiting

        async def attempt() -> Plan[RaceMachine]:
            race = await self.stores.races.load_race(code)
            if race is None:
                raise not_found(code)
            machine = RaceMachine(race, self.rules)
            change = machine.rematch(who.player, new_code(self.rules.code_length)).change
            if change is None:
                return done(machine)

            async def asked() -> RaceMachine:
                log.info(
                    "race %s: player %s asks for a rematch: race %s",
                    code, who.player, machine.race.rematch,
                )  # fmt: skip
                return machine

            return Plan(asked, lambda: self.stores.races.write_race(change))

        machine = await self.runner.run(f"race {code}", attempt)
        done_race = machine.race
        # Made by whoever gets there first: the asker who decided it, or, should that one
        # be slow or have died before making it, the next asker (the store lets one through).
        if await self.stores.races.load_race(done_race.rematch) is None:
            replies = await self._make_rematch(who, machine)
            if replies is not None:
                return replies
        log.info("race %s: player %s goes to its rematch %s", code, who.player, done_race.rematch)
        return await self.join(who, p.Join(race=done_race.rematch))

    async def _make_rematch(self, who: Who, done: RaceMachine) -> list[p.Message] | None:
        """Make the rematch that finished race `done` records, `who` its host, with bots
        where `done` had them; tell every seat of `done`. None: it was made meanwhile."""
        host = p.Seat(player=who.player, name=who.name)

        def make(code: str) -> tuple[RaceMachine, Transition]:
            return RaceMachine.create_rematch(
                self.rules, done.race, seed=new_seed(), host=host, now_ms=self.clock.now_ms()
            )

        opened = await self._open(who, done.race.rematch, make)
        if opened is None:
            return None
        machine = opened[0]
        bots = done.bot_seats()
        strength = "medium"
        if bots:
            strength = (await self.stores.races.race_bots(done.code)).get(bots[0].player, strength)
        log.info(
            "race %s: rematch of race %s made by player %s: %s, %d seats, %d bots",
            machine.code, done.code, who.player, machine.race.game, machine.race.max_players,
            len(bots),
        )  # fmt: skip
        replies = await self._opened(who, opened, len(bots), strength)
        offer = self.applier.events([done.offer(host)], who.uid)
        self.applier.deliver(offer)
        # The seats' players may be connected anywhere by now, not only where they raced.
        await self.stores.presence.publish(
            await self.stores.presence.players_instances(offer[0].to), self.applier.payload(offer)
        )
        return replies

    async def leave(self, code: str, player: str) -> None:
        """`player` has gone from every connection: they leave the race if it is still in
        its lobby (RaceMachine.leave), and the others hear the lobby as it then stands."""

        async def attempt() -> Plan[None]:
            race = await self.stores.races.load_race(code)
            if race is None:
                return done(None)
            machine = RaceMachine(race, self.rules)
            step = machine.leave(player)
            events = self._route(step)
            change = step.change
            if change is None:
                if race.status == RaceStatus.LOBBY and player == race.host:
                    log.info(
                        "race %s: host %s left, no other player to hand it to: the lobby "
                        "waits for them", code, player,
                    )  # fmt: skip
                return done(None)

            async def left() -> None:
                new = machine.race
                if new.host != race.host:
                    log.info(
                        "race %s: host %s left the lobby; %s is the host now",
                        code, player, new.host,
                    )  # fmt: skip
                else:
                    log.info("race %s: player %s left the lobby", code, player)
                self._lobbies.pop(code)
                self.applier.deliver(events)

            return Plan(left, lambda: self.stores.races.write_race(change), missing=lambda: None)

        def exhausted() -> None:
            log.warning("race %s: player %s could not leave it (it kept changing)", code, player)

        await self.runner.run(f"race {code}", attempt, exhausted=exhausted)

    # ------------------------------------------------------------ seats

    def known_seats(self, code: str) -> list[str] | None:
        """The seated players of a started race if this process has them at hand."""
        return self._seats.get(code)

    async def seats(self, code: str) -> list[str]:
        """The seated players of a started race (seats no longer change once it runs)."""
        players = self._seats.get(code)
        if players is None:
            race = await self.stores.races.load_race(code)
            players = race.players() if race is not None else []
            if race is not None and race.async_race:
                # Its seats change while it runs, and hear nothing of each other's moves
                # (ghosts are scheduled from the store): no one to tell.
                players = []
            self._seats.put(code, players)
        return players

    # ------------------------------------------------------------ closing

    async def close_if_due(self, code: str) -> bool:
        """Close the race if every seat has finished or its deadline has passed; True if
        it is no longer running (closed now or before). A seat's game or the race that
        changed between the read and the write is read again."""

        async def attempt() -> Plan[bool]:
            # Seats no longer change once a race runs: if this process knows them, the race
            # and its games are read in one round trip.
            known = self.known_seats(code)
            guess = [race_gid(code, player) for player in known or ()]
            race, loaded = await self.stores.races.load_race_records(code, guess)
            if race is None or race.status != RaceStatus.RUNNING:
                return done(True)
            machine = RaceMachine(race, self.rules)
            if machine.gids() != guess:
                loaded = await self.stores.games.load_records(machine.gids())
            records = [r for r in loaded if r is not None]
            ratings = await self._ratings(race) if race.rated else None
            step = machine.close(records, self.clock.now_ms(), ratings)
            if step is None:
                return done(False)
            events = self._route(step)
            change = step.change
            assert change is not None

            async def closed() -> bool:
                for gid in machine.gids():
                    self.cache.evict(gid)
                result = step.replies[0]
                assert isinstance(result, p.Result)
                log.info(
                    "race %s finished (%s): %s",
                    code,
                    "all seats done" if all(r.finished for r in records) else "time limit",
                    ", ".join(f"{s.rank}. {s.player} {s.score}" for s in result.standings),
                )
                self.applier.deliver(events)
                return True

            return Plan(closed, lambda: self.stores.races.close_race(change, machine.deadline_ms()))

        def exhausted() -> bool:
            log.warning("race %s: could not close it (kept changing); will retry", code)
            return False

        return await self.runner.run(f"race {code}", attempt, exhausted=exhausted)

    async def reap(self, full: bool) -> int:
        """One pass of the timer: close the races past their deadline, or (`full`) check
        every running race (complete ones a crash left open); the number of running races
        seen."""
        now = self.clock.now_ms()
        entries = await self.stores.races.running(None if full else now)
        for code, deadline in entries:
            closed = await self.close_if_due(code)
            if closed and self.config.redis_cluster:
                # Closed, yet indexed: on a cluster its ratings may wait in its outbox.
                await self.stores.rating_outbox.flush(code)
            if closed and deadline <= now:
                # Not running, yet indexed: a race indexed but never started, or closed by
                # an instance that died before unindexing it.
                await self.stores.races.unindex(code, deadline)
        return len(entries)

    # ------------------------------------------------------------ helpers

    async def _ratings(self, race: RaceRecord) -> list[PlayerRating]:
        """The seats' ratings in the race's game as stored now (new players' unstored)."""
        stored = await self.stores.ratings.load(race.game, race.players())
        return [
            r if r is not None else new_rating(s.player, race.game, s.name)
            for s, r in zip(race.seats, stored, strict=True)
        ]

    async def _open(
        self,
        who: Who,
        code: str,
        make: Callable[[str], tuple[RaceMachine, Transition]],
        unqueue: bool = False,
    ) -> tuple[RaceMachine, list[Event], Transition] | None:
        """Store the new race that `make` decides under `code` (given the instances where
        its host `who` is connected, this one first); None if the code is taken. With
        `unqueue`, the host leaves the quick-race queue."""
        gid = race_gid(code, who.player)
        instances = await self._seat(who.player, gid, unqueue)
        machine, step = make(code)
        assert step.change is not None
        events = self._route(step, who.uid, [self.stores.instance, *instances])
        if machine.race.async_race:
            # Running from its creation: indexed with its window's end, like a live race's
            # deadline, so that whichever instance is up closes it then.
            written = await self.stores.races.start_race(step.change, machine.deadline_ms())
        else:
            written = await self.stores.races.write_race(step.change)
        if written is Written.APPLIED:
            return machine, events, step
        await self.stores.players.forget_player_games(who.player, [gid])
        return None

    async def _opened(
        self,
        who: Who,
        opened: tuple[RaceMachine, list[Event], Transition],
        bots: int,
        strength: str,
    ) -> list[p.Message]:
        """A race just stored: its events out, its bots seated; the host's replies."""
        machine, events, step = opened
        self.applier.deliver(events)
        race = machine.race
        if bots:
            race = await self._seat_bots(race, bots, strength, who.uid)
            step.replies[-1] = RaceMachine(race, self.rules).lobby()
            if race.async_race:
                # Dealt as they were seated: they play now, at their usual pace, and the
                # people who join later race them as ghosts.
                await self._drive_bots(race.code)
        self._remember_lobby(race)
        return step.replies

    async def _seat(self, player: str, gid: str, unqueue: bool = False) -> list[str]:
        """List a seat's game among the player's games (the store, before the seat is
        written; with `unqueue`, out of the quick-race queue too); a player who starts a
        game is kept (their keys no longer expire). The other instances where they are
        connected."""
        listed = await self.stores.players.seat_player(player, gid, unqueue=unqueue)
        await self.stores.players.keep_player(player, listed.meta_ttl_ms)
        return listed.instances

    def _route(
        self, step: Transition, asker: str = "", instances: Sequence[str] = ()
    ) -> list[Event]:
        """The events of what `step` says, put in its write for the other instances (and
        `instances`, where its players are, to hear the race from now on); delivered here
        once the write is applied."""
        events = self.applier.events(step.says, asker)
        if step.change is not None:
            step.change.payload = self.applier.payload(events)
            step.change.instances = list(instances)
        return events

    def _code(self, text: str) -> str:
        code = normalise_code(text, self.rules.code_length)
        if code is None:
            raise p.Refused(p.NOT_FOUND, f"no race {text!r}")
        return code

    async def _join(self, code: str, seat: p.Seat, origin: str) -> tuple[Transition, RaceMachine]:
        # A new seat is decided first on the race as this process last wrote it, if it did:
        # the store refuses a race that changed since, and then it is read again. Whatever
        # a join answers without a write (a refusal, the race as it stands) is decided on
        # the race as stored.
        guess = self._last_lobby(code)

        async def attempt() -> Plan[tuple[Transition, RaceMachine]]:
            nonlocal guess
            race, guess = guess, None
            if race is not None and not race.async_race:
                machine = RaceMachine(race, self.rules)
                try:
                    step = machine.join(seat)
                except p.Refused:
                    step = None
                if step is not None and step.change is not None:
                    return await self._seated(machine, step, seat, origin)
            race = await self.stores.races.load_race(code)
            if race is None:
                raise not_found(code)
            machine = RaceMachine(race, self.rules)
            if race.async_race and race.status == RaceStatus.RUNNING:
                return await self._attempt_async(machine, seat, origin)
            if machine.seated(seat.player) and race.status == RaceStatus.RUNNING:
                # Back in a running race: it answers with where every seat stands.
                records = await self.stores.games.load_records(machine.gids())
                games = [r for r in records if r is not None]
                return done((machine.join(seat, games, self.clock.now_ms()), machine))
            step = machine.join(seat)
            if step.change is None:  # seated already, or the race is done
                return done((step, machine))
            return await self._seated(machine, step, seat, origin)

        return await self.runner.run(f"race {code}", attempt)

    async def _seated(
        self, machine: RaceMachine, step: Transition, seat: p.Seat, origin: str
    ) -> Plan[tuple[Transition, RaceMachine]]:
        """The plan of a join that seats `seat` (`step`, decided on `machine`)."""
        instances: list[str] = []
        if not is_bot(seat.player):
            gid = race_gid(machine.code, seat.player)
            instances = [self.stores.instance, *await self._seat(seat.player, gid)]
        events = self._route(step, origin, instances)
        change = step.change
        assert change is not None

        async def joined() -> tuple[Transition, RaceMachine]:
            self.applier.deliver(events)
            return step, machine

        return Plan(joined, lambda: self.stores.races.write_race(change))

    async def _attempt_async(
        self, machine: RaceMachine, seat: p.Seat, origin: str
    ) -> Plan[tuple[Transition, RaceMachine]]:
        code = machine.code
        gid = race_gid(code, seat.player)
        seated = machine.seated(seat.player)
        own = await self.cache.get(gid, fresh=True) if seated else None
        instances: list[str] = []
        if not seated and not is_bot(seat.player):
            instances = [self.stores.instance, *await self._seat(seat.player, gid)]
        step = machine.join_async(seat, own, self.clock.now_ms())
        change = step.change
        if change is None:
            return done((step, machine))
        if seated:
            instances = [self.stores.instance]
        self._route(step, origin, instances)  # nothing said: the instances hear the race
        return Plan(lambda: answer((step, machine)), lambda: self.stores.races.write_race(change))

    async def _seat_bots(
        self, race: RaceRecord, count: int, strength: str, origin: str
    ) -> RaceRecord:
        """Seat `count` bots in a race still in its lobby; the race as it then stands."""
        now = self.clock.now_ms()
        for i in range(count):
            seat = bot_seat(i)
            await self.stores.players.create_bot(seat.player, seat.name, strength, now)
            await self.stores.races.add_race_bot(race.code, seat.player, strength)
            try:
                _step, machine = await self._join(race.code, seat, origin)
            except p.Refused:
                break
            race = machine.race
        log.info("race %s: %d %s bots seated", race.code, count, strength)
        return race

    def _remember_lobby(self, race: RaceRecord) -> None:
        self._lobbies.put(race.code, (self.clock.now_ms(), race))

    def _last_lobby(self, code: str) -> RaceRecord | None:
        """The race as this process last wrote it in its lobby (forgotten once asked for):
        a guess that saves reading it back, which the store checks (its version).

        Only while the race cannot have expired since: a later race under the same code
        would start at the same version, and the store could not tell them apart."""
        written, race = self._lobbies.pop(code) or (0, None)
        cfg = self.config
        if self.clock.now_ms() - written >= 1000 * min(cfg.lobby_ttl_s, cfg.finished_race_ttl_s):
            return None
        return race
