"""The games the engine knows, by id, and the functions that start and replay them."""

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
    """The Game subclass of a game id; ValueError for an unknown id."""
    try:
        return GAME_CLASSES[game_id]  # type: ignore[index]
    except (KeyError, TypeError):
        raise ValueError(f"unknown game {game_id!r}; the games are {', '.join(GAMES)}") from None


def new_game(game_id: str, seed: int) -> Game:
    """Deal game ``seed`` of ``game_id``."""
    return game_class(game_id)(seed)


def replay(game_id: str, seed: int, moves: Iterable[str]) -> Game:
    """The game after playing ``moves`` in order from the deal.

    The first move that fails raises what ``Game.play`` raised for it (MalformedMove or
    IllegalMove, both MoveError), its message prefixed with the move's position (1-based).
    """
    game = new_game(game_id, seed)
    play = game.play
    for number, move in enumerate(moves, 1):
        try:
            play(move)
        except MoveError as error:
            raise type(error)(f"move {number} ({move!r}): {error}") from None
    return game
