"""The shared rules engine: pure, deterministic, no I/O.

    import engine
    g = engine.new_game("bakers_game", seed=1)
    g.legal_moves(); g.play("t3-r0"); g.view()

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
