"""Doublets: seven reserves in an arch around the foundation, stock and waste above."""

from __future__ import annotations

from typing import Any

from client_cli.boards.canvas import Canvas
from client_cli.boards.common import hint, label, slot, stock
from client_cli.theme import Theme, card_value, rank_label

# (column, row) of each reserve's label; the card goes on the row below.
# r0 low on the left, over the top, to r6 low on the right: AisleRiot's horseshoe.
RESERVE_SPOTS = {
    "r0": (2, 9),
    "r1": (2, 5),
    "r2": (12, 3),
    "r3": (22, 3),
    "r4": (32, 3),
    "r5": (42, 5),
    "r6": (42, 9),
}
FOUNDATION_SPOT = (22, 6)


def next_value(top: str) -> int:
    """The value the foundation takes next: double the top card's, modulo 13."""
    return (2 * card_value(top)) % 13 or 13


def draw(canvas: Canvas, view: dict[str, Any], theme: Theme, height: int) -> None:
    piles = view["piles"]
    stock_count = view.get("hidden", {}).get("s", 0)
    waste = piles.get("w", [])
    label(canvas, 1, 0, f"s  {stock_count} left", theme)
    stock(canvas, 0, 1, stock_count, theme)
    label(canvas, 13, 0, f"w  {len(waste)}", theme)
    slot(canvas, 12, 1, waste, theme)
    redeals = view.get("redeals_left")
    if redeals is not None:
        label(canvas, 26, 1, f"redeals left: {redeals}", theme)
    for code, (x, y) in RESERVE_SPOTS.items():
        label(canvas, x + 1, y, code, theme)
        slot(canvas, x, y + 1, piles.get(code), theme)
    fx, fy = FOUNDATION_SPOT
    foundation = piles.get("f", [])
    label(canvas, fx + 1, fy, f"f  {len(foundation)}/48", theme)
    slot(canvas, fx, fy + 1, foundation, theme)
    if foundation and not view.get("won"):
        hint(canvas, fx, fy + 2, f"next {rank_label(next_value(foundation[-1]))}", theme)
