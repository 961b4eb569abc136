"""Turning what the player types into a move string, and completing it.

The legal moves come from the engine, computed on the public view alone
(`engine.legal_moves_from_view`); the client uses them only to expand short
forms and to offer completions. A full move string is always sent as typed,
so that the server, which is authoritative, gives its own reason if it is
illegal.

Short forms, tried in order:
- `d` for `deal` (in the games that deal; sent even when the deal is refused, so that
  the server says why, as for `deal`);
- the move without its hyphen: `t3t5` for `t3-t5`, `wf` for `w-f` (sent whether legal or
  not, like the full move);
- a single pile, when exactly one legal move starts there (`t3` for `t3-f` if
  that is the only move from t3); in Quatorze a cell, when exactly one legal
  pair contains it (either cell). When none does, the engine's reason (from the
  public view) for the moves that pile could make is given.

Help and error texts give each game's own example moves (`GAME_MOVES`), so a
Quatorze player is never told to try `t3-f`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

MOVE_SHAPE = re.compile(r"deal|[a-z]+\d*-[a-z]+\d*")
PILE_SHAPE = re.compile(r"[a-z]\d*")
SQUEEZED_SHAPE = re.compile(r"([a-z]+?\d*)([a-z]+\d*)")


@dataclass(frozen=True)
class GameMoves:
    """What a player of one game types: example moves, and whether `deal` exists."""

    examples: tuple[str, ...]
    deals: bool
    piles: str  # a pile alone, as a short form


GAME_MOVES: dict[str, GameMoves] = {
    "doublets": GameMoves(("deal", "w-f", "r3-f"), deals=True, piles="w, r3"),
    "quatorze": GameMoves(("c3-c8",), deals=False, piles="c3"),
    "bakers_game": GameMoves(("t3-r0", "r0-t5", "t2-t6"), deals=False, piles="t3"),
    "hopscotch": GameMoves(("deal", "w-f2", "w-r1", "r1-f0"), deals=True, piles="w, r1"),
}
ANY_GAME = GameMoves(("t3-f", "w-r2", "c3-c8", "deal"), deals=True, piles="t3")


def game_moves(game: str) -> GameMoves:
    return GAME_MOVES.get(game, ANY_GAME)


def examples(game: str) -> str:
    return ", ".join(game_moves(game).examples)


def help_text(game: str, practice: bool = False) -> str:
    """The `help` line of the play screen: the game's moves and the commands (2 lines of 80)."""
    info = game_moves(game)
    if game == "quatorze":
        moves = "Moves: c3-c8 removes the pair in cells 3 and 8; a cell alone (c3) plays "
        moves += "its only pair."
    else:
        shown = [f"{m} (d)" if m == "deal" else m for m in info.examples]
        moves = f"Moves: {', '.join(shown)}; a pile alone ({info.piles}) plays its only move."
    commands = "resign, quit" + (", undo (u), hint (i)" if practice else "")
    return f"{moves} Tab lists the legal moves. Commands: {commands}."


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


def resolve(
    text: str, legal: list[str], game: str = "", view: dict[str, Any] | None = None
) -> Resolution:
    """The move a line stands for, or what is wrong with it; `view` (the position's public
    view) lets the engine say why a pile alone has no move."""
    typed = text.strip().lower()
    info = game_moves(game)
    if not typed:
        first = info.examples[0]
        return Resolution(None, f"Type a move, e.g. {first} (Tab shows the legal moves).")
    if typed in legal:
        return Resolution(typed)
    if typed in ("d", "deal") and not info.deals:
        return Resolution(None, f"This game has no deal; its moves look like {examples(game)}.")
    if typed == "d":
        return Resolution("deal")  # legal or not: the server says why, as for `deal`
    if MOVE_SHAPE.fullmatch(typed):
        return Resolution(typed)  # the server judges it and says why if it is illegal
    squeezed = [m for m in legal if m.replace("-", "") == typed]
    if len(squeezed) == 1:
        return Resolution(squeezed[0])
    spelled = SQUEEZED_SHAPE.fullmatch(typed)
    if spelled:
        hyphened = f"{spelled.group(1)}-{spelled.group(2)}"
        if hyphened not in legal and _well_formed(view, hyphened):
            return Resolution(hyphened)  # the server judges it, as the full move
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
        why = _why_nothing_from(view, typed)
        return Resolution(None, f"No legal move from {typed}" + (f": {why}" if why else "."))
    return Resolution(None, f"{text.strip()!r} is not a move (e.g. {examples(game)}).")


def refusal(view: dict[str, Any] | None, move: str) -> tuple[str, str] | None:
    """The engine's refusal of `move` on the position of a public view: (kind, reason) with
    kind "malformed" or "illegal"; None if the move is legal or the engine cannot say."""
    if not view:
        return None
    try:
        import engine

        game = engine.game_class(view.get("game", "")).from_view(view)
    except Exception:  # an engine older or newer than this client
        return None
    try:
        game.play(move)
    except engine.MalformedMove as exc:
        return "malformed", str(exc)
    except engine.IllegalMove as exc:
        return "illegal", str(exc)
    except Exception:
        return None
    return None


def _well_formed(view: dict[str, Any] | None, move: str) -> bool:
    """Whether the engine reads `move` as a move of the view's game (legal or not)."""
    if not view:
        return False
    refused = refusal(view, move)
    return refused is None or refused[0] != "malformed"


def _why_nothing_from(view: dict[str, Any] | None, pile: str) -> str:
    """Why no move starts at `pile`: the engine's reason for the move it would most likely
    be, to a foundation (the first such refusal); without one, the reason most of the moves
    it could be (to another pile of the view) are refused for."""
    if not view:
        return ""
    reasons: list[tuple[str, str]] = []
    for target in view.get("piles", {}):
        if target == pile:
            continue
        refused = refusal(view, f"{pile}-{target}")
        if refused is not None and refused[0] == "illegal":
            reasons.append((target, refused[1]))
    if not reasons:
        return ""
    home = sorted(why for to, why in reasons if to.startswith("f"))
    if home:
        return home[0]
    tally = Counter(why for _to, why in reasons)
    common = max(tally, key=lambda why: tally[why])  # the first of the most frequent
    # Reasons that differ for every target (Quatorze's sums) say nothing of the pile itself.
    return common if tally[common] > 1 or len(reasons) == 1 else ""


def completions(prefix: str, legal: list[str]) -> list[str]:
    typed = prefix.strip().lower()
    return [m for m in legal if m.startswith(typed)]


def _piles(move: str) -> tuple[str, ...]:
    return tuple(move.split("-")) if "-" in move else (move,)
