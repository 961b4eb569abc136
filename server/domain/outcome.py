"""How a game ended, as one value (after python-chess's `Outcome(termination, winner)`).

A game still in play has no outcome. The stored form keeps the booleans earlier versions
wrote (finished, won, over, resigned, timed_out), so `from_flags` and `flags` map between
the two; everything else reads the outcome.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Termination(enum.Enum):
    WON = "won"  # every card home
    STUCK = "stuck"  # no legal move left (the engine's `over`), not won
    RESIGNED = "resigned"
    # Closed as it stood when its time ran out: a race's time limit or deadline, or a
    # daily attempt's day ending at midnight UTC.
    TIMED_OUT = "timed_out"


@dataclass(frozen=True, slots=True)
class Outcome:
    termination: Termination
    # Plain fields, set from the termination, rather than properties: every state, progress
    # and board of a finished game reads them (on the move path).
    won: bool = field(init=False, compare=False, repr=False)
    # Whether the game itself ended (won or stuck), rather than being stopped.
    over: bool = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        t = self.termination
        object.__setattr__(self, "won", t is Termination.WON)
        object.__setattr__(self, "over", t is Termination.WON or t is Termination.STUCK)

    @property
    def resigned(self) -> bool:
        return self.termination is Termination.RESIGNED

    @property
    def timed_out(self) -> bool:
        return self.termination is Termination.TIMED_OUT

    @staticmethod
    def of_position(won: bool, over: bool) -> Outcome | None:
        """The outcome of a position the engine reports as `won`/`over`; None: play on."""
        if won:
            return WON
        return STUCK if over else None

    @staticmethod
    def from_flags(
        *, finished: bool, won: bool, over: bool, resigned: bool, timed_out: bool
    ) -> Outcome | None:
        """The outcome that stored flags describe. Records of earlier versions may carry
        a game's `over` beside a resignation or time-out (none was ever written so, but
        the order here says which wins): a resignation, then a time-out, then the position."""
        if not finished:
            return None
        if resigned:
            return RESIGNED
        if timed_out:
            return TIMED_OUT
        if won:
            return WON
        return STUCK if over else TIMED_OUT


WON = Outcome(Termination.WON)
STUCK = Outcome(Termination.STUCK)
RESIGNED = Outcome(Termination.RESIGNED)
TIMED_OUT = Outcome(Termination.TIMED_OUT)
