"""Drawing pieces that several games share: labelled slots and fanned piles."""

from __future__ import annotations

from client_cli.boards.canvas import Canvas
from client_cli.theme import Theme


def label(canvas: Canvas, x: int, y: int, text: str, theme: Theme) -> None:
    canvas.put(x, y, text, theme.style("class:label"))


def hint(canvas: Canvas, x: int, y: int, text: str, theme: Theme) -> None:
    canvas.put(x, y, text, theme.style("class:hint"))


def slot(canvas: Canvas, x: int, y: int, cards: list[str] | None, theme: Theme) -> None:
    """The top card of a pile, or an empty slot."""
    canvas.put_fragments(x, y, [theme.card(cards[-1] if cards else None)])


def stock(canvas: Canvas, x: int, y: int, count: int, theme: Theme) -> None:
    canvas.put_fragments(x, y, [theme.back() if count else theme.card(None)])


def fan_down(canvas: Canvas, x: int, y: int, cards: list[str], rows: int, theme: Theme) -> None:
    """A pile fanned downwards, bottom card first; if it needs more than `rows` rows the
    lowest cards give way to a "+n" line, so the top of the pile (the playable end) shows."""
    if not cards:
        canvas.put_fragments(x, y, [theme.card(None)])
        return
    rows = max(rows, 2)
    shown = cards
    if len(cards) > rows:
        hidden = len(cards) - (rows - 1)
        canvas.put(x, y, f" +{hidden}", theme.style("class:label"))
        y += 1
        shown = cards[hidden:]
    for i, card in enumerate(shown):
        canvas.put_fragments(x, y + i, [theme.card(card)])
