"""The shared rules engine: pure, deterministic, no I/O.

>>> import engine
>>> engine.GAMES
('doublets', 'quatorze', 'bakers_game', 'hopscotch')
>>> g = engine.new_game("bakers_game", seed=1)
>>> g.piles["t0"]  # Microsoft FreeCell deal #1; no Ace on top, so nothing went home
['JD', 'KD', '2S', '4C', '3S', '6D', '6S']
>>> g.score, g.moves, g.won, g.over
(0, 0, False, False)
>>> g.play("t1-t7")  # 9C onto TC
>>> g.piles["t7"][-2:], g.moves
(['TC', '9C'], 1)

A refused move raises MalformedMove (no move of this game) or IllegalMove (the rules
forbid it here); both are MoveError, a ValueError, and leave the game unchanged:

>>> try:
...     g.play("t6-t1")
... except engine.MoveError as refusal:
...     print(type(refusal).__name__, "-", refusal)
IllegalMove - 8C does not go on 8S

See docs/games/README.md for the games, the move notation and the public view.
"""

from engine.errors import IllegalMove, MalformedMove, MoveError
from engine.game import Game
from engine.registry import GAME_CLASSES, GAMES, MAX_SCORE, game_class, new_game, replay
from engine.views import legal_moves_from_view, render_text

__all__ = [
    "GAMES",
    "GAME_CLASSES",
    "MAX_SCORE",
    "Game",
    "IllegalMove",
    "MalformedMove",
    "MoveError",
    "game_class",
    "legal_moves_from_view",
    "new_game",
    "render_text",
    "replay",
]
