"""The games the engine knows, by id, and the functions that start and replay them.

>>> from engine import GAMES, MAX_SCORE
>>> GAMES
('doublets', 'quatorze', 'bakers_game', 'hopscotch')
>>> dict(MAX_SCORE)
{'doublets': 48, 'quatorze': 52, 'bakers_game': 52, 'hopscotch': 48}
"""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType

from engine.errors import MoveError
from engine.game import Game
from engine.games.bakers_game import BakersGame
from engine.games.doublets import Doublets
from engine.games.hopscotch import Hopscotch
from engine.games.quatorze import Quatorze

GAME_CLASSES = MappingProxyType(
    {cls.game_id: cls for cls in (Doublets, Quatorze, BakersGame, Hopscotch)}
)
GAMES: tuple[str, ...] = tuple(GAME_CLASSES)
MAX_SCORE = MappingProxyType({game_id: cls.MAX_SCORE for game_id, cls in GAME_CLASSES.items()})


def game_class(game_id: object) -> type[Game]:
    """The Game subclass of a game id; ValueError for an unknown id.

    >>> game_class("hopscotch").title
    'Hopscotch'
    >>> game_class("klondike")
    Traceback (most recent call last):
        ...
    ValueError: unknown game 'klondike'; the games are doublets, quatorze, bakers_game, hopscotch
    """
    try:
        return GAME_CLASSES[game_id]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {game_id!r}; the games are {', '.join(GAMES)}") from None


def new_game(game_id: str, seed: int) -> Game:
    """Deal game ``seed`` (1..2^31-1) of ``game_id``; ValueError for a bad game or seed.

    >>> game = new_game("doublets", 1)
    >>> game.score, game.piles["f"]  # the foundation's base card counts
    (1, ['7C'])
    >>> new_game("quatorze", 0)
    Traceback (most recent call last):
        ...
    ValueError: seed 0 is out of range: seeds run from 1 to 2147483647
    """
    return game_class(game_id)(seed)


def replay(game_id: str, seed: int, moves: Iterable[str]) -> Game:
    """The game after playing ``moves`` in order from the deal.

    The first move that fails raises what ``Game.play`` raised for it (MalformedMove or
    IllegalMove, both MoveError), its message prefixed with the move's position (1-based).

    >>> game = replay("bakers_game", 1, ["t1-t7", "t0-r0"])
    >>> game.moves, game.piles["r0"]
    (2, ['6S'])
    >>> replay("bakers_game", 1, ["t1-t7", "t6-t1"])
    Traceback (most recent call last):
        ...
    engine.errors.IllegalMove: move 2 ('t6-t1'): 8C does not go on 8S
    >>> replay("quatorze", 1, ["deal"])
    Traceback (most recent call last):
        ...
    engine.errors.MalformedMove: move 1 ('deal'): Quatorze has no 'deal' move
    """
    game = new_game(game_id, seed)
    play = game.play
    for number, move in enumerate(moves, 1):
        try:
            play(move)
        except MoveError as error:
            raise type(error)(f"move {number} ({move!r}): {error}") from None
    return game
