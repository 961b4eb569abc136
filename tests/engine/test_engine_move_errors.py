"""Refused moves come in two kinds, both a MoveError: MalformedMove for text that is no
move of the game at all (outside its notation), IllegalMove for a move of the game that
the rules forbid in this position."""

from __future__ import annotations

import pytest
from engine_positions import position, refused

import engine
from engine.game import Game


def test_the_two_kinds_share_one_base_and_neither_is_the_other() -> None:
    assert issubclass(engine.MoveError, ValueError)
    assert issubclass(engine.MalformedMove, engine.MoveError)
    assert issubclass(engine.IllegalMove, engine.MoveError)
    assert not issubclass(engine.MalformedMove, engine.IllegalMove)
    assert not issubclass(engine.IllegalMove, engine.MalformedMove)
    assert {"MoveError", "MalformedMove", "IllegalMove"} <= set(engine.__all__)


def doublets() -> Game:
    # Stock and waste empty, so that `deal` is well-formed but refused.
    return position("doublets", f="9H", r0="QC", r1="KS")


def quatorze() -> Game:
    return position("quatorze", c0="KS", c6="AS", c3="9S", c8="5H", s="AH 6D")


def bakers_game() -> Game:
    return position("bakers_game", t0="9C", t1="7H", r1="5D", fC="AC")


def hopscotch() -> Game:
    return position("hopscotch", w="7H", r0="9D", s="5S", f0="AC", f1="2C", f2="3C", f3="4C")


POSITIONS = {
    "doublets": doublets,
    "quatorze": quatorze,
    "bakers_game": bakers_game,
    "hopscotch": hopscotch,
}

MALFORMED = [
    # Pile codes the game does not have, or that its moves do not use.
    ("doublets", "r7-f", "malformed move 'r7-f' (moves look like 'deal', 'w-f', 'r3-f')"),
    ("doublets", "t0-f", "malformed move 't0-f' (moves look like 'deal', 'w-f', 'r3-f')"),
    ("doublets", "w-f0", "malformed move 'w-f0' (moves look like 'deal', 'w-f', 'r3-f')"),
    ("quatorze", "c25-c3", "malformed move 'c25-c3' (moves look like 'c3-c8' (two cells))"),
    ("quatorze", "c3-f", "malformed move 'c3-f' (moves look like 'c3-c8' (two cells))"),
    ("quatorze", "deal", "Quatorze has no 'deal' move"),
    (
        "bakers_game",
        "t3-fH",
        "malformed move 't3-fH' (moves look like 't3-r0', 'r1-t5', 't0-t4', 't2-f')",
    ),
    (
        "bakers_game",
        "r4-t0",
        "malformed move 'r4-t0' (moves look like 't3-r0', 'r1-t5', 't0-t4', 't2-f')",
    ),
    ("bakers_game", "deal", "Baker's Game has no 'deal' move"),
    ("hopscotch", "w-f", "malformed move 'w-f' (moves look like 'deal', 'w-f2', 'w-r0', 'r3-f1')"),
    (
        "hopscotch",
        "r0-f4",
        "malformed move 'r0-f4' (moves look like 'deal', 'w-f2', 'w-r0', 'r3-f1')",
    ),
    # Bad syntax, the same in every game.
    ("doublets", "Deal", "malformed move 'Deal' (moves look like 'deal', 'w-f', 'r3-f')"),
    ("quatorze", "c03-c8", "malformed move 'c03-c8' (moves look like 'c3-c8' (two cells))"),
    (
        "bakers_game",
        "t0 -t1",
        "malformed move 't0 -t1' (moves look like 't3-r0', 'r1-t5', 't0-t4', 't2-f')",
    ),
    ("hopscotch", "w-", "malformed move 'w-' (moves look like 'deal', 'w-f2', 'w-r0', 'r3-f1')"),
]

ILLEGAL = [
    ("doublets", "deal", "the stock and the waste are both empty"),
    ("doublets", "r0-f", "QC does not go on 9H: it needs a 5"),
    ("doublets", "r1-f", "KS does not go on 9H: Kings never go onto the foundation"),
    ("doublets", "w-f", "w is empty"),
    ("doublets", "w-r2", "nothing moves into r2: reserves refill by themselves"),
    ("doublets", "f-w", "cards move only onto the foundation, 'f'"),
    ("doublets", "s-f", "the stock's cards come out with 'deal'"),
    ("quatorze", "c0-c6", "c0 and c6 share neither a row nor a column"),
    ("quatorze", "c0-c3", "KS and 9S do not add up to 14"),
    ("quatorze", "c3-c3", "c3 cannot pair with itself"),
    ("quatorze", "c4-c9", "c4 is empty"),
    ("quatorze", "s-c3", "the stock's cards come out only to refill the grid"),
    ("bakers_game", "t0-t1", "9C does not go on 7H"),
    ("bakers_game", "r1-r0", "there is no move from one reserve to another"),
    ("bakers_game", "f-t0", "cards never leave the foundations"),
    ("bakers_game", "t0-t0", "t0 cannot move onto itself"),
    ("bakers_game", "t3-r0", "t3 is empty"),
    ("hopscotch", "deal", "the waste is not empty: play 7H first"),
    ("hopscotch", "w-f0", "7H does not go on AC: f0 counts by 1 and needs a 2"),
    ("hopscotch", "r0-r1", "reserve cards go only to the foundations"),
    ("hopscotch", "r1-f0", "r1 is empty"),
    ("hopscotch", "f0-w", "cards never leave the foundations"),
    ("hopscotch", "s-w", "the stock's cards come out with 'deal'"),
]


@pytest.mark.parametrize(("game_id", "move", "reason"), MALFORMED)
def test_text_outside_the_notation_is_malformed(game_id: str, move: str, reason: str) -> None:
    assert refused(POSITIONS[game_id](), move, engine.MalformedMove) == reason


@pytest.mark.parametrize(("game_id", "move", "reason"), ILLEGAL)
def test_a_move_the_rules_forbid_here_is_illegal(game_id: str, move: str, reason: str) -> None:
    assert refused(POSITIONS[game_id](), move, engine.IllegalMove) == reason


@pytest.mark.parametrize("game_id", engine.GAMES)
def test_a_non_string_is_malformed_in_every_game(game_id: str) -> None:
    assert refused(POSITIONS[game_id](), 3, engine.MalformedMove) == (
        "a move must be a string, not int"
    )


def _won_doublets() -> Game:
    return position("doublets", f=" ".join(f"{r}{s}" for r in "A23456789TJQ" for s in "CDHS"))


def _won_bakers_game() -> Game:
    homes = {f"f{s}": " ".join(f"{r}{s}" for r in "A23456789TJQK") for s in "CDHS"}
    return position("bakers_game", **homes)


WON = {
    "doublets": _won_doublets,
    "quatorze": lambda: position("quatorze"),
    "bakers_game": _won_bakers_game,
    # Nothing left in stock, waste or reserves: won, whatever the foundations hold.
    "hopscotch": lambda: position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C"),
}


@pytest.mark.parametrize(
    ("game_id", "move"),
    [("doublets", "deal"), ("quatorze", "c0-c1"), ("bakers_game", "t0-r0"), ("hopscotch", "deal")],
)
def test_a_won_game_refuses_its_moves_as_illegal_and_junk_as_malformed(
    game_id: str, move: str
) -> None:
    game = WON[game_id]()
    assert game.won
    assert refused(game, move, engine.IllegalMove) == "the game is won: no more moves"
    assert refused(game, "nonsense", engine.MalformedMove).startswith("malformed move")


def test_replay_keeps_the_kind_of_the_first_failing_move() -> None:
    with pytest.raises(engine.IllegalMove, match=r"^move 2 \('t6-t1'\): 8C does not go on 8S$"):
        engine.replay("bakers_game", 1, ["t1-t7", "t6-t1"])
    with pytest.raises(engine.MalformedMove, match=r"^move 2 \('deal'\): Baker's Game has no"):
        engine.replay("bakers_game", 1, ["t1-t7", "deal"])
    with pytest.raises(engine.MoveError):
        engine.replay("quatorze", 1, ["deal"])
