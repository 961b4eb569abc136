"""The engine's exceptions for a refused move: one base, two kinds.

A caller that only needs to refuse the move (the server answering a player) catches
MoveError; one that cares why (a client telling a typo from a rule) tells the two apart.
Either way the game the move was offered to is unchanged.

>>> import engine
>>> game = engine.new_game("doublets", 1)
>>> game.play("w-x")
Traceback (most recent call last):
    ...
engine.errors.MalformedMove: malformed move 'w-x' (moves look like 'deal', 'w-f', 'r3-f')
>>> game.play("w-f")
Traceback (most recent call last):
    ...
engine.errors.IllegalMove: w is empty
>>> issubclass(engine.MalformedMove, engine.MoveError)
True
>>> issubclass(engine.IllegalMove, engine.MoveError)
True
>>> issubclass(engine.MoveError, ValueError)
True
>>> game.moves
0
"""

from __future__ import annotations


class MoveError(ValueError):
    """A move that was refused, with the reason; the game it was offered to is unchanged."""


class MalformedMove(MoveError):
    """Text that is no move of this game at all: not a string, not the notation, a pile
    code the game's moves do not use, or ``deal`` in a game that has no deal move."""


class IllegalMove(MoveError):
    """A well-formed move of this game that the rules forbid in this position."""
