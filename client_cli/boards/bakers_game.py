"""Baker's Game: four free cells and four foundations on top, eight columns below."""

from __future__ import annotations

from typing import Any

from client_cli.boards.canvas import Canvas
from client_cli.boards.common import fan_down, label, slot
from client_cli.theme import Theme

STEP = 6
FOUNDATIONS = ("fC", "fD", "fH", "fS")
COLUMNS_TOP = 3


def draw(canvas: Canvas, view: dict[str, Any], theme: Theme, height: int) -> None:
    piles = view["piles"]
    for i in range(4):
        code = f"r{i}"
        label(canvas, i * STEP + 1, 0, code, theme)
        slot(canvas, i * STEP, 1, piles.get(code), theme)
    for i, code in enumerate(FOUNDATIONS):
        x = 26 + i * STEP
        label(canvas, x + 1, 0, f"f{theme.suit(code[1])}", theme)
        slot(canvas, x, 1, piles.get(code), theme)
    rows = max(height - COLUMNS_TOP - 1, 2)
    for i in range(8):
        code = f"t{i}"
        label(canvas, i * STEP + 1, COLUMNS_TOP, code, theme)
        fan_down(canvas, i * STEP, COLUMNS_TOP + 1, piles.get(code, []), rows, theme)
