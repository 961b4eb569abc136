"""Where the client is in a game, and every way it moves on: one table.

GameSession (client_cli/game_session.py) turns each server message that concerns its
game into a `Cue` and moves by `TRANSITIONS`; nothing else sets its phase. Play
(client_cli/play.py) reacts to the phase a message made it enter.
"""

from __future__ import annotations

from enum import Enum, StrEnum, auto


class Phase(StrEnum):
    CONNECTING = "connecting"  # nothing heard of the game yet
    LOBBY = "lobby"  # a race not started
    PLAYING = "playing"  # one's own game open
    FINISHED = "finished"  # one's own game over: a race's standings or a daily's rank to come
    RESULT = "result"  # a race's standings are in
    DONE = "done"  # a daily's rank is in


class Cue(Enum):
    """What a message (or the client itself) says that may move the phase on."""

    CREATED = auto()  # the server made one's race
    LOBBY = auto()  # one's race's lobby
    START = auto()  # one's race started
    OPEN = auto()  # a state of one's own game, not finished
    OVER = auto()  # a state of one's own game, finished
    UNDONE = auto()  # a practice game's end taken back (its next state is open again)
    RESULT = auto()  # one's race's standings
    RANKED = auto()  # a daily's rank fetched: nothing more to wait for


# (phase, cue) -> the next phase. A pair not listed leaves the phase as it is: a lobby
# heard once the race runs (joining it again) does not take one back to the lobby, nor
# does a state after the standings.
TRANSITIONS: dict[tuple[Phase, Cue], Phase] = {
    # A race just created is at its lobby; standings and a daily's rank end the game
    # wherever it was.
    **{(phase, Cue.CREATED): Phase.LOBBY for phase in Phase},
    **{(phase, Cue.RESULT): Phase.RESULT for phase in Phase},
    **{(phase, Cue.RANKED): Phase.DONE for phase in Phase},
    (Phase.CONNECTING, Cue.LOBBY): Phase.LOBBY,
    (Phase.CONNECTING, Cue.START): Phase.PLAYING,
    (Phase.LOBBY, Cue.START): Phase.PLAYING,
    (Phase.CONNECTING, Cue.OPEN): Phase.PLAYING,
    (Phase.LOBBY, Cue.OPEN): Phase.PLAYING,
    (Phase.CONNECTING, Cue.OVER): Phase.FINISHED,
    (Phase.LOBBY, Cue.OVER): Phase.FINISHED,
    (Phase.PLAYING, Cue.OVER): Phase.FINISHED,
    (Phase.FINISHED, Cue.UNDONE): Phase.PLAYING,
}


def next_phase(phase: Phase, cue: Cue) -> Phase:
    return TRANSITIONS.get((phase, cue), phase)
