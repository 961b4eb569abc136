"""Turning what the player types into a move string, and completing it.

The legal moves come from the engine, computed on the public view alone
(`engine.legal_moves_from_view`); the client uses them only to expand short
forms and to offer completions. A full move string is always sent as typed,
so that the server, which is authoritative, gives its own reason if it is
illegal.

Short forms, tried in order:
- `d` for `deal`;
- the move without its hyphen: `t3t5` for `t3-t5`, `wf` for `w-f`;
- a single pile, when exactly one legal move starts there (`t3` for `t3-f` if
  that is the only move from t3); in Quatorze a cell, when exactly one legal
  pair contains it (either cell).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

MOVE_SHAPE = re.compile(r"deal|[a-z]+\d*-[a-z]+\d*")
PILE_SHAPE = re.compile(r"[a-z]\d*")


@dataclass(frozen=True)
class Resolution:
    move: str | None
    problem: str | None = None


def legal_moves(view: dict[str, Any] | None) -> list[str]:
    """The legal moves of a public view, per the shared engine; [] if it cannot say."""
    if not view:
        return []
    try:
        import engine

        return sorted(engine.legal_moves_from_view(view))
    except Exception:  # an engine older or newer than this client: no hints, still playable
        return []


def resolve(text: str, legal: list[str]) -> Resolution:
    typed = text.strip().lower()
    if not typed:
        return Resolution(None, "Type a move, e.g. t3-f (Tab shows the legal moves).")
    if typed in legal:
        return Resolution(typed)
    if typed == "d" and "deal" in legal:
        return Resolution("deal")
    if MOVE_SHAPE.fullmatch(typed):
        return Resolution(typed)  # the server judges it and says why if it is illegal
    squeezed = [m for m in legal if m.replace("-", "") == typed]
    if len(squeezed) == 1:
        return Resolution(squeezed[0])
    if PILE_SHAPE.fullmatch(typed):
        if typed.startswith("c"):  # a Quatorze pair: either of its cells names it
            starting = [m for m in legal if typed in _piles(m)]
        else:
            starting = [m for m in legal if _piles(m)[0] == typed]
        if len(starting) == 1:
            return Resolution(starting[0])
        if starting:
            return Resolution(None, f"{typed}: several moves: {', '.join(starting)}")
        if not legal:
            return Resolution(None, f"{typed}: this client cannot tell the moves from {typed}.")
        return Resolution(None, f"No legal move from {typed}.")
    return Resolution(None, f"{text.strip()!r} is not a move (e.g. t3-f, w-r2, deal).")


def completions(prefix: str, legal: list[str]) -> list[str]:
    typed = prefix.strip().lower()
    return [m for m in legal if m.startswith(typed)]


def _piles(move: str) -> tuple[str, ...]:
    return tuple(move.split("-")) if "-" in move else (move,)
