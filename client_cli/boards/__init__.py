"""Board renderers, one module per game, laid out the way AisleRiot draws each game.

`render(view, theme, height)` draws a public view (the engine's format, hidden
piles as counts) on a `Canvas` of `BOARD_WIDTH` columns and at most `height`
rows; long piles are shortened with a "+n" marker so that the board fits an
80x24 terminal beside the side panel.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client_cli.boards import bakers_game, doublets, hopscotch, quatorze
from client_cli.boards.canvas import Canvas
from client_cli.theme import Theme

BOARD_WIDTH = 50
DEFAULT_HEIGHT = 20

Renderer = Callable[[Canvas, dict[str, Any], Theme, int], None]

RENDERERS: dict[str, Renderer] = {
    "doublets": doublets.draw,
    "quatorze": quatorze.draw,
    "bakers_game": bakers_game.draw,
    "hopscotch": hopscotch.draw,
}

GAME_TITLES = {
    "doublets": "Doublets",
    "quatorze": "Quatorze",
    "bakers_game": "Baker's Game",
    "hopscotch": "Hopscotch",
}


def render(view: dict[str, Any], theme: Theme, height: int = DEFAULT_HEIGHT) -> Canvas:
    canvas = Canvas(BOARD_WIDTH)
    draw = RENDERERS.get(view.get("game", ""), _draw_generic)
    draw(canvas, view, theme, height)
    return canvas


def render_text(view: dict[str, Any], ascii_only: bool = False) -> str:
    """The board as plain text, without colours."""
    return render(view, Theme(unicode=not ascii_only, colour=False)).text()


def game_title(game: str) -> str:
    return GAME_TITLES.get(game, game)


def _draw_generic(canvas: Canvas, view: dict[str, Any], theme: Theme, height: int) -> None:
    """A game this client does not know yet: list every pile, so it is still playable."""
    y = 0
    for code, cards in sorted(view.get("piles", {}).items()):
        x = canvas.put(0, y, f"{code:>4} ", theme.style("class:label"))
        for card in cards[-8:]:
            x = canvas.put_fragments(x, y, [theme.card(card)])
        y += 1
    for code, count in sorted(view.get("hidden", {}).items()):
        canvas.put(0, y, f"{code:>4} {count} face down", theme.style("class:label"))
        y += 1
