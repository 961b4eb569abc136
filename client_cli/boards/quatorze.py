"""Quatorze: a 5x5 grid of cells, the stock beside it."""

from __future__ import annotations

from typing import Any

from client_cli.boards.canvas import Canvas
from client_cli.boards.common import label, slot, stock
from client_cli.theme import Theme

GRID = 5
CELL_STEP = 9  # columns from one cell to the next
GRID_TOP = 3


def draw(canvas: Canvas, view: dict[str, Any], theme: Theme, height: int) -> None:
    piles = view["piles"]
    stock_count = view.get("hidden", {}).get("s", 0)
    label(canvas, 1, 0, f"s  {stock_count} left", theme)
    stock(canvas, 0, 1, stock_count, theme)
    label(canvas, 9, 1, "pairs adding up to 14, same row or column", theme)
    for index in range(GRID * GRID):
        row, col = divmod(index, GRID)
        x = 2 + col * CELL_STEP
        y = GRID_TOP + row * 2
        code = f"c{index}"
        label(canvas, x + 1, y, code, theme)
        slot(canvas, x, y + 1, piles.get(code), theme)
