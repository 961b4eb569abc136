"""What a client can do with a public view alone: list its legal moves and draw it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.registry import game_class


def legal_moves_from_view(view: Mapping[str, Any]) -> list[str]:
    """The legal moves of the position a public view shows.

    Only the counts of hidden piles matter for legality, so the view is enough.

    >>> import engine
    >>> view = engine.new_game("hopscotch", 1).view()
    >>> view["hidden"], legal_moves_from_view(view)
    ({'s': 48}, ['deal'])
    """
    return game_class(view.get("game")).from_view(view).legal_moves()


def render_text(view: Mapping[str, Any]) -> str:
    """A plain-text board of a public view, for logs and terminals.

    >>> import engine
    >>> print(render_text(engine.new_game("hopscotch", 1).view()))
    Hopscotch  score 0/48  moves 0
    s: 48 face down   w: --
    f0: AC   f1: 2C   f2: 3C   f3: 4C
    r0: --
    r1: --
    r2: --
    r3: --
    """
    return game_class(view.get("game")).render_view(view)
