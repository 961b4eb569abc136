"""Playing one game against the server: the loop shared by the play screen and `--plain`.

`Play` owns the connection's event stream and the player's input. Input lines
(moves, short forms, `start`, `resign`, `quit`) are handled one at a time, in
the order typed, so moves go out strictly one after another, each with the `n`
of the state it was made on. The front end (screen or plain) is a `Listener`:
it is told when something changed and sees every server message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, Protocol

from client_cli.connection import Connection, ConnectionLost
from client_cli.messages import ServerError
from client_cli.moves import resolve
from client_cli.session import GameSession

log = logging.getLogger(__name__)

AROUND_ME_LIMIT = 11
QUIT_WORDS = ("quit", "q", "exit")

HELP = (
    "Moves: t3-f, w-r2, c3-c8, deal (d). Short forms: a pile alone (t3) when one move "
    "starts there; t3t5 for t3-t5. Tab lists the legal moves. Commands: resign, quit; "
    "in practice games also undo (u) and hint (i)."
)
UNDO_WORDS = ("undo", "u")
HINT_WORDS = ("hint", "i")
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
        # Leaving must not wait behind a move held up by a dropped connection.
        if text.strip().lower() in QUIT_WORDS:
            self.leave.set()
            return
        self.inputs.put_nowait(text)

    async def idle(self) -> None:
        """Wait until every submitted line has been handled."""
        await self.inputs.join()

    def status(self, text: str) -> None:
        """Connection news: shown on screen, written as a `status` line in plain mode."""
        self.session.status = text
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

    def take(self, message: dict[str, Any], reply: bool = False) -> None:
        if message.get("t") == "welcome":
            self.session.apply(message)
            if message.get("reconnected") and self.session.behind_after_reconnect():
                self._tasks.append(asyncio.create_task(self._rejoin(), name="rejoin"))
            return
        if message.get("t") == "error":
            self.session.say(str(message.get("msg", "error")), error=True)
            self.listener.message(message)
            self.listener.changed()
            return
        was_finished = self.session.phase in ("finished", "result", "done")
        lobby = message.get("t") == "lobby" and self.session.phase in ("connecting", "lobby")
        before = (self.session.host, dict(self.session.seats)) if lobby else None
        if self.session.apply(message, reply=reply):
            self.listener.message(self._annotated(message))
            self.listener.changed()
        if before is not None and self.session.phase == "lobby":
            self._lobby_news(*before)
        if not was_finished and self.session.phase == "finished":
            if self.session.kind == "daily":
                self._tasks.append(asyncio.create_task(self._daily_over(), name="daily-over"))
            elif self.session.kind == "practice":
                won = self.session.state is not None and self.session.state.won
                self.session.say(("Won! " if won else "Game over. ") + "undo (u) or quit.")
            else:
                self.session.say("Your game is over; waiting for the others to finish.")
        if self.session.state is not None:
            self.started.set()
        if self.session.phase in ("result", "done"):
            self.over.set()

    def _lobby_news(self, host: str | None, seats: dict[str, Any]) -> None:
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

    def _annotated(self, message: dict[str, Any]) -> dict[str, Any]:
        """States go out with the legal moves (from the engine, on the public view) for bots."""
        if message.get("t") == "state" and self.session.state is not None:
            return {**message, "legal": self.session.legal_moves()}
        return message

    async def _daily_over(self) -> None:
        """The end of a daily: the player's rank and the board around them."""
        state = self.session.state
        assert state is not None
        await self.show_leaderboard(state.date)
        self.session.phase = "done"
        self.listener.changed()
        self.over.set()

    async def _rejoin(self) -> None:
        """Join the race again after a reconnect, to hear what was missed meanwhile.

        A seated player's `join` is answered with the lobby, and the server then sends, as
        events like any others, a running race's `start` and every seat's `progress`, or a
        finished race's `result`.
        """
        race = self.session.race
        try:
            # Not resent: should this connection drop too, the next welcome asks again.
            reply = await self.conn.request({"t": "join", "race": race}, resend=False)
        except ConnectionLost:
            return
        except ServerError as exc:
            self.tell(f"Could not catch up with race {race}: {exc.msg} ({exc.code})", error=True)
            return
        self.take(reply, reply=True)

    async def show_leaderboard(self, date: str | None) -> None:
        request: dict[str, Any] = {
            "t": "leaderboard",
            "game": self.session.game,
            "around_me": True,
            "limit": AROUND_ME_LIMIT,
        }
        if date:
            request["date"] = date
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
        if word in ("help", "?", "h"):
            session.say(HELP)
            return
        if session.phase in ("result", "done"):
            if word == "":
                self.leave.set()
            return
        if session.kind == "race" and session.state is None:
            if word in ("", "s", "start") and session.phase in ("lobby", "connecting"):
                await self._start_race()
                return
            # Moves typed before the deal is on the board wait for it, in order.
            session.say("The race has not started yet; your move waits for the start.")
            self.listener.changed()
            await self.started.wait()
        if session.kind == "practice" and session.state is not None:
            if word in UNDO_WORDS:
                if await self._send({"t": "undo", "gid": session.state.gid}):
                    session.say("Move taken back.")
                return
            if word in HINT_WORDS:
                await self._hint()
                return
        if session.phase == "finished":
            if session.kind == "practice":
                self.tell("The game is over: undo (u) takes back the last move; quit leaves.")
                return
            self.tell("Your game is over; waiting for the others. quit leaves.")
            return
        if session.state is None:
            self.tell("The game has not started yet.")
            return
        if word == "resign":
            await self._send({"t": "resign", "gid": session.state.gid})
            return
        if word in ("get", "refresh"):
            await self._send({"t": "get", "gid": session.state.gid})
            return
        resolution = resolve(text, session.legal_moves())
        if resolution.move is None:
            self.tell(resolution.problem or "Not a move.", error=True, input=text)
            return
        state = session.state
        move = {"t": "move", "gid": state.gid, "n": state.n, "m": resolution.move}
        if await self._send(move):
            session.say(f"Played {resolution.move}.")

    async def _hint(self) -> None:
        session = self.session
        assert session.state is not None
        try:
            reply = await self.conn.request({"t": "hint", "gid": session.state.gid})
        except ServerError as exc:
            self.tell(f"{exc.msg} ({exc.code})", error=True)
            return
        self.listener.message({k: v for k, v in reply.items() if k not in ("id", "re")})
        move = reply.get("move")
        why = HINT_VERDICTS.get(str(reply.get("verdict")), "")
        self.tell(f"Hint: {move} ({why})." if move else "No move is left.")

    async def _start_race(self) -> None:
        session = self.session
        if session.host and session.me and session.host != session.me:
            self.tell("Only the host can start the race.", error=True)
            return
        assert session.race is not None
        if await self._send({"t": "start", "race": session.race}):
            session.say("The race is on!")

    async def _send(self, request: dict[str, Any]) -> bool:
        """Send a request and take in its reply; on an error show the server's reason."""
        try:
            reply = await self.conn.request(request)
        except ServerError as exc:
            self.session.say(self._explain(request, exc), error=True)
            error = {"t": "error", "code": exc.code, "msg": exc.msg, "request": request}
            self.listener.message(error)
            if exc.code == "out_of_order" and self.session.state is not None:
                with contextlib.suppress(ServerError):
                    self.take(await self.conn.request({"t": "get", "gid": request["gid"]}), True)
            return False
        self.take(reply, reply=True)
        return True

    @staticmethod
    def _explain(request: dict[str, Any], exc: ServerError) -> str:
        if exc.code == "illegal_move":
            return f"Illegal move {request.get('m')}: {exc.msg}"
        if exc.code == "out_of_order":
            return "The board was out of date; it has been refreshed. Try again."
        return f"{exc.msg} ({exc.code})"
