"""Hopscotch: stock and waste, four foundations each building by its own step, four
fanned reserves below."""

from __future__ import annotations

from typing import Any

from client_cli.boards.canvas import Canvas
from client_cli.boards.common import fan_down, hint, label, slot, stock
from client_cli.theme import Theme, card_value, rank_label

STEP = 10
RESERVES_TOP = 7
WASTE_X = 14


def next_value(top: str, step: int) -> int | None:
    """The value foundation `f(step-1)` takes next, or None once it is complete (a King)."""
    value = card_value(top)
    if value == 13:
        return None
    return (value + step) % 13 or 13


def draw(canvas: Canvas, view: dict[str, Any], theme: Theme, height: int) -> None:
    piles = view["piles"]
    stock_count = view.get("hidden", {}).get("s", 0)
    label(canvas, 1, 0, f"s  {stock_count} left", theme)
    stock(canvas, 0, 1, stock_count, theme)
    label(canvas, WASTE_X + 1, 0, "w", theme)
    slot(canvas, WASTE_X, 1, piles.get("w"), theme)
    for i in range(4):
        code = f"f{i}"
        x = i * STEP
        cards = piles.get(code, [])
        label(canvas, x + 1, 3, f"{code} +{i + 1}", theme)
        slot(canvas, x, 4, cards, theme)
        if cards:
            wanted = next_value(cards[-1], i + 1)
            text = "done" if wanted is None else f"next {rank_label(wanted)}"
            hint(canvas, x + 1, 5, text, theme)
    rows = max(height - RESERVES_TOP - 1, 2)
    for i in range(4):
        code = f"r{i}"
        label(canvas, i * STEP + 1, RESERVES_TOP, code, theme)
        fan_down(canvas, i * STEP, RESERVES_TOP + 1, piles.get(code, []), rows, theme)
