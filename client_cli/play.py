"""Playing one game against the server: the loop shared by the play screen and `--plain`.

`Play` owns the connection's event stream and the player's input. Input lines
(moves, short forms, `start`, `resign`, `quit`, and `rematch` once a race is over) are
handled one at a time, in the order typed, so moves go out strictly one after another,
each with the `n` of the state it was made on. The front end (screen or plain) is a `Listener`:
it is told when something changed and sees every server message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

import protocol as p
from client_cli.connection import Connection, ConnectionLost
from client_cli.game_kind import GameKind
from client_cli.game_phase import Phase
from client_cli.game_session import GameSession, Seat
from client_cli.messages import (
    Event,
    Incoming,
    ProtocolError,
    ServerError,
    Welcomed,
    as_plain,
    expect,
)
from client_cli.moves import help_text, resolve

log = logging.getLogger(__name__)

AROUND_ME_LIMIT = 11
QUIT_WORDS = ("quit", "q", "exit")
UNDO_WORDS = ("undo", "u")
HINT_WORDS = ("hint", "i")
YES_WORDS = ("y", "yes", "resign")
REMATCH_WORDS = ("r", "rematch")
RANKED_ONLY = (
    "{word} works only in practice games (solitaire practice GAME): "
    "races and dailies are ranked, so there is no undo or hint."
)
RESIGN_QUESTION = {
    GameKind.DAILY: "Resign? This ends your one ranked attempt at today's deal with the score "
    "it has now. Type y to resign, anything else to play on.",
    GameKind.RACE: "Resign? Your game in this race ends with the score it has now. "
    "Type y to resign, anything else to play on.",
    GameKind.PRACTICE: "Resign this practice game? Type y to resign, anything else to play on.",
}
HINT_VERDICTS = {
    "won": "on a winning line",
    "unwinnable": "no line wins from here",
    "gave_up": "the best the solver found",
}


class Listener(Protocol):
    def changed(self) -> None: ...

    def message(self, message: dict[str, Any]) -> None: ...


class Play:
    def __init__(self, conn: Connection, session: GameSession, listener: Listener) -> None:
        self.conn = conn
        self.session = session
        self.listener = listener
        self.inputs: asyncio.Queue[str] = asyncio.Queue()
        self.leave = asyncio.Event()  # the player asked to leave
        self.over = asyncio.Event()  # the race's result, or the daily's leaderboard, is in
        self.started = asyncio.Event()  # the game's first state arrived
        # The play screen asks before `resign` ends a game; a script (--plain) means what it
        # sends.
        self.confirm_resign = False
        self.resign_pending = False
        self._tasks: list[asyncio.Task[None]] = []

    # -- running -------------------------------------------------------------------------

    def start_tasks(self) -> None:
        self._tasks = [
            asyncio.create_task(self._pump_events(), name="events"),
            asyncio.create_task(self._handle_inputs(), name="inputs"),
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def submit(self, text: str) -> None:
        self.session.typed()
        # Leaving must not wait behind a move held up by a dropped connection.
        if text.strip().lower() in QUIT_WORDS:
            self.leave.set()
            return
        if not self.conn.connected and text.strip() and self.session.phase is Phase.PLAYING:
            # Said at once: the line waits (behind any unanswered move) until the connection
            # is back; then the server's answer replaces this ("Played", or why not).
            self.tell(f"{text.strip()}: pending, sent once the connection is back.")
        self.inputs.put_nowait(text)

    async def idle(self) -> None:
        """Wait until every submitted line has been handled."""
        await self.inputs.join()

    def status(self, text: str) -> None:
        """Connection news: shown on screen, written as a `status` line in plain mode."""
        self.session.status = text
        self.session.status_fades = text.startswith("Reconnected")
        self.listener.message({"t": "status", "msg": text})
        self.listener.changed()

    def tell(self, text: str, error: bool = False, **extra: str) -> None:
        """A word from the client itself: on the notice line, or a `notice` line in plain mode."""
        self.session.say(text, error)
        self.listener.message({"t": "notice", "msg": text, **extra})
        self.listener.changed()

    # -- server side ---------------------------------------------------------------------

    async def _pump_events(self) -> None:
        while True:
            message = await self.conn.events.get()
            self.take(message)

    def take(self, message: Event, reply: bool = False) -> None:
        if isinstance(message, Welcomed):
            self.session.apply(message)
            if message.reconnected and self.session.behind_after_reconnect():
                self._tasks.append(asyncio.create_task(self._rejoin(), name="rejoin"))
            return
        if isinstance(message, p.Error):
            self.session.say(message.msg, error=True)
            self.listener.message(as_plain(message))
            self.listener.changed()
            return
        lobby = isinstance(message, p.Lobby)
        # Who sat in the lobby before it changes, to say who left.
        seated = (self.session.host, dict(self.session.seats)) if lobby else None
        applied = self.session.apply(message, reply=reply)
        if applied:
            self.listener.message(self._annotated(message))
            self.listener.changed()
        if seated is not None and applied and self.session.phase is Phase.LOBBY:
            self._lobby_news(*seated)
        if self.session.phase is not Phase.PLAYING:
            self.resign_pending = False  # the game ended meanwhile: nothing left to ask
        if isinstance(message, p.RematchOffer) and self.session.rematch_offer is message:
            self.session.say(self._offer_text(message))
        if applied.entered is not None:
            self._entered(applied.entered)
        if self.session.state is not None:
            self.started.set()

    def _entered(self, phase: Phase) -> None:
        """What the client does as its game enters `phase` (client_cli/game_phase.py)."""
        session = self.session
        if phase is Phase.FINISHED:
            if session.kind is GameKind.DAILY:
                self._tasks.append(asyncio.create_task(self._daily_over(), name="daily-over"))
            elif session.kind is GameKind.PRACTICE:
                won = session.state is not None and session.state.won
                session.say(("Won! " if won else "Game over. ") + "undo (u) or quit.")
            else:
                session.say(self._race_waiting())
        elif phase is Phase.RESULT:
            keys = self._result_keys()
            if not session.time_up:
                session.say(f"Every player has finished: the standings. {keys}")
            elif session.limit_ms() is not None:
                session.say(f"Time's up: the race's time limit ended it. {keys}")
            else:
                session.say(f"Time's up: the race reached its longest allowed time. {keys}")
        if phase in (Phase.RESULT, Phase.DONE):
            self.over.set()

    def _result_keys(self) -> str:
        if self.session.in_result():
            return "Enter leaves; r asks for a rematch."
        return "Enter leaves."

    def _offer_text(self, offer: p.RematchOffer) -> str:
        if offer.player == self.session.me:
            return f"You asked for a rematch: press r to go to race {offer.next}."
        return f"{offer.name} asks for a rematch: press r to join race {offer.next}."

    def _race_waiting(self) -> str:
        if self.session.async_race:
            return (
                "Your run is over. The standings come once every seat has played, or when the "
                "race closes; quit leaves meanwhile (solitaire challenges shows them so far)."
            )
        until = "every player has finished"
        if self.session.limit_ms() is not None:
            until += " or the time limit is reached"
        return f"Your game is over. The standings appear once {until}; quit leaves meanwhile."

    def _lobby_news(self, host: str | None, seats: dict[str, Seat]) -> None:
        """Say who left the lobby, and who is its host now if that changed."""
        session = self.session
        gone = [seat.name for pid, seat in seats.items() if pid not in session.seats]
        if not gone or host is None:
            return
        text = f"{', '.join(gone)} left the lobby."
        if session.host != host:
            new = session.seats.get(session.host or "")
            if session.host == session.me:
                text += " You are the host now: press Enter to start the race."
            elif new is not None:
                text += f" {new.name} is the host now."
        self.tell(text)

    def _annotated(self, message: Incoming) -> dict[str, Any]:
        """States go out with the legal moves (from the engine, on the public view) for bots."""
        fields = as_plain(message)
        if isinstance(message, p.State) and self.session.state is not None:
            fields["legal"] = self.session.legal_moves()
        return fields

    async def _daily_over(self) -> None:
        """The end of a daily: the player's rank and the board around them."""
        state = self.session.state
        assert state is not None
        await self.show_leaderboard(state.date)
        self.session.ranked()
        self.listener.changed()
        self.over.set()

    async def _rejoin(self) -> None:
        """Join the race again after a reconnect, to hear what was missed meanwhile.

        A seated player's `join` is answered with the lobby, and the server then sends, as
        events like any others, a running race's `start` and every seat's `progress`, or a
        finished race's `result`.
        """
        race = self.session.race
        if race is None:  # behind_after_reconnect() asks only of a known race
            return
        try:
            # Not resent: should this connection drop too, the next welcome asks again.
            reply = await self.conn.request(p.Join(race=race), resend=False)
        except ConnectionLost:
            return
        except ServerError as exc:
            self.tell(f"Could not catch up with race {race}: {exc.msg} ({exc.code})", error=True)
            return
        self.take(reply, reply=True)

    async def show_leaderboard(self, date: str | None) -> None:
        request = p.Leaderboard(
            game=self.session.game, date=date or None, around_me=True, limit=AROUND_ME_LIMIT
        )
        try:
            reply = await self.conn.request(request)
        except (ServerError, ConnectionLost) as exc:
            self.tell(f"Could not fetch the leaderboard: {exc}", error=True)
            return
        self.take(reply, reply=True)

    # -- player side ---------------------------------------------------------------------

    async def _handle_inputs(self) -> None:
        while True:
            text = await self.inputs.get()
            try:
                await self.handle(text)
            except ConnectionLost as exc:
                self.tell(f"Not sent: {exc}. Try again once reconnected.", error=True)
            except Exception:
                log.exception("handling input %r", text)
                self.tell("Internal error in the client; see the log.", error=True)
            finally:
                self.inputs.task_done()
                self.listener.changed()

    async def handle(self, text: str) -> None:
        session = self.session
        word = text.strip().lower()
        if word in QUIT_WORDS:
            self.leave.set()
            return
        if self.resign_pending:
            self.resign_pending = False
            if word in YES_WORDS and session.state is not None and not session.state.finished:
                await self._send(p.Resign(gid=session.state.gid))
            else:
                session.say("Not resigned: play on.")
            return
        if word in ("help", "?", "h"):
            session.say(help_text(session.game, practice=session.kind is GameKind.PRACTICE))
            return
        if session.phase in (Phase.RESULT, Phase.DONE):
            if word == "":
                self.leave.set()
            elif word in REMATCH_WORDS and session.kind is GameKind.RACE:
                await self._rematch()
            elif session.in_result():
                self.tell(f"The race is over. {self._result_keys()}")
            return
        if session.kind is GameKind.RACE and session.state is None:
            if word in ("", "s", "start") and session.phase in (Phase.LOBBY, Phase.CONNECTING):
                await self._start_race()
                return
            # Moves typed before the deal is on the board wait for it, in order.
            session.say("The race has not started yet; your move waits for the start.")
            self.listener.changed()
            await self.started.wait()
        if session.kind is GameKind.PRACTICE and session.state is not None:
            if word in UNDO_WORDS:
                if await self._send(p.Undo(gid=session.state.gid)):
                    session.say("Move taken back.")
                return
            if word in HINT_WORDS:
                await self._hint()
                return
        elif session.kind is not GameKind.PRACTICE and word in UNDO_WORDS + HINT_WORDS:
            what = "undo" if word in UNDO_WORDS else "hint"
            self.tell(RANKED_ONLY.format(word=what.capitalize()), error=True, input=text)
            return
        if session.phase is Phase.FINISHED:
            if session.kind is GameKind.PRACTICE:
                self.tell("The game is over: undo (u) takes back the last move; quit leaves.")
                return
            if session.kind is GameKind.RACE:
                self.tell(self._race_waiting())
            else:
                self.tell("Your attempt is over; your rank is on its way. quit leaves.")
            return
        if session.state is None:
            self.tell("The game has not started yet.")
            return
        if word == "resign":
            if self.confirm_resign:
                self.resign_pending = True
                session.say(RESIGN_QUESTION[session.kind])
                return
            await self._send(p.Resign(gid=session.state.gid))
            return
        if word in ("get", "refresh"):
            await self._send(p.Get(gid=session.state.gid))
            return
        resolution = resolve(text, session.legal_moves(), session.game, session.state.view)
        if resolution.move is None:
            self.tell(resolution.problem or "Not a move.", error=True, input=text)
            return
        state = session.state
        move = p.Move(gid=state.gid, n=state.n, m=resolution.move)
        # The move that ends the game keeps the notice that says what comes next.
        if await self._send(move) and session.phase is Phase.PLAYING:
            session.say(f"Played {resolution.move}.")

    async def _hint(self) -> None:
        session = self.session
        assert session.state is not None
        try:
            reply = expect(await self.conn.request(p.Hint(gid=session.state.gid)), p.HintReply)
        except ServerError as exc:
            self.tell(f"{exc.msg} ({exc.code})", error=True)
            return
        except ProtocolError as exc:
            self.tell(f"No hint: {exc}", error=True)
            return
        self.listener.message(as_plain(reply))
        why = HINT_VERDICTS.get(reply.verdict, "")
        self.tell(f"Hint: {reply.move} ({why})." if reply.move else "No move is left.")

    async def _start_race(self) -> None:
        session = self.session
        if session.quick:
            self.tell("A quick race starts by itself.", error=True)
            return
        if session.host and session.me and session.host != session.me:
            self.tell("Only the host can start the race.", error=True)
            return
        assert session.race is not None
        if await self._send(p.StartRace(race=session.race)):
            session.say("The race is on!")

    async def _rematch(self) -> None:
        """Join the rematch a player offered, or ask for one (the server seats whoever asks
        after the first in the same race); on success the screen goes to its lobby."""
        session = self.session
        if not session.in_result() or session.race is None:
            self.tell("Only the race's players can ask for a rematch.", error=True)
            return
        offer = session.rematch_offer
        request: p.Request = p.Join(race=offer.next) if offer else p.Rematch(race=session.race)
        try:
            reply = await self.conn.request(request)
        except ServerError as exc:
            self.tell(f"No rematch: {exc.msg} ({exc.code})", error=True)
            error = {"t": "error", "code": exc.code, "msg": exc.msg, "request": as_plain(request)}
            self.listener.message(error)
            return
        if not isinstance(reply, p.Created | p.Lobby):
            self.tell(f"No rematch: the server answered with {as_plain(reply)}", error=True)
            return
        # Before the reply is taken in: the new race's events come right after it.
        was_async = session.async_race
        session.next_race(reply.race)
        session.async_race = was_async  # a challenge's rematch is a challenge too
        self.over.clear()
        self.started.clear()
        if isinstance(reply, p.Created):
            session.seats[session.me] = Seat(session.me, session.my_name, moves=0)
            session.host = session.me
        self.take(reply, reply=True)
        if was_async:
            await self._deal_challenge(reply.race)
            return
        if isinstance(reply, p.Created):
            session.say(f"Rematch: race {reply.race}. Press Enter to start it once all are in.")
        else:
            session.say(f"You are in the rematch, race {reply.race}.")

    async def _deal_challenge(self, code: str) -> None:
        """In a challenge's rematch: one's own run is dealt by joining it (if the reply to
        `rematch` did not already), and the screen learns until when it is open."""
        session = self.session
        try:
            if session.state is None or session.state.race != code:
                self.take(await self.conn.request(p.Join(race=code)), reply=True)
            self.take(await self.conn.request(p.Challenges()), reply=True)
        except ServerError as exc:
            self.tell(f"Rematch {code}: {exc.msg} ({exc.code})", error=True)
            return
        session.say(f"Rematch: challenge {code}; others play it with solitaire race join {code}")

    async def _send(self, request: p.Request) -> bool:
        """Send a request and take in its reply; on an error show the server's reason."""
        try:
            reply = await self.conn.request(request)
        except ServerError as exc:
            self.session.say(self._explain(request, exc), error=True)
            error = {"t": "error", "code": exc.code, "msg": exc.msg, "request": as_plain(request)}
            self.listener.message(error)
            if exc.code == p.OUT_OF_ORDER and isinstance(request, p.Move):
                with contextlib.suppress(ServerError):
                    self.take(await self.conn.request(p.Get(gid=request.gid)), True)
            return False
        self.take(reply, reply=True)
        return True

    def _explain(self, request: p.Request, exc: ServerError) -> str:
        if exc.code == p.ILLEGAL_MOVE and self.session.out_of_time():
            return "Time's up: the race's time limit has passed; the standings come next."
        if exc.code == p.ILLEGAL_MOVE and isinstance(request, p.Move):
            return f"Illegal move {request.m}: {exc.msg}"
        if exc.code == p.OUT_OF_ORDER:
            return "The board was out of date; it has been refreshed. Try again."
        return f"{exc.msg} ({exc.code})"
