"""Quatorze: each rule clause of RULES.md on a position built for it.

Cells are numbered in reading order: c0..c4 is the top row, c0 c5 c10 c15 c20 the left
column.
"""

from __future__ import annotations

import pytest
from engine_positions import position, refused, shown


def grid(**cells: str) -> dict[str, str]:
    return cells


@pytest.mark.parametrize(
    ("a", "b", "cards"),
    [
        ("c0", "c4", ("KS", "AD")),  # same row, not adjacent
        ("c2", "c22", ("QC", "2H")),  # same column, not adjacent
        ("c6", "c7", ("JD", "3S")),
        ("c10", "c14", ("TH", "4C")),
        ("c3", "c18", ("9S", "5H")),
        ("c20", "c24", ("8D", "6C")),
        ("c12", "c17", ("7S", "7H")),
    ],
)
def test_pairs_adding_to_14_in_a_row_or_column_are_removed(
    a: str, b: str, cards: tuple[str, str]
) -> None:
    game = position("quatorze", **{a: cards[0], b: cards[1]}, c11="5C", c16="2S")
    assert f"{a}-{b}" in game.legal_moves()
    game.play(f"{a}-{b}")
    assert a not in shown(game) or shown(game)[a] != cards[0]
    assert cards[0] not in " ".join(shown(game).values())
    assert cards[1] not in " ".join(shown(game).values())
    assert game.moves == 1


def test_cards_not_in_a_shared_line_are_refused() -> None:
    game = position("quatorze", c0="KS", c6="AD")  # diagonal neighbours
    assert refused(game, "c0-c6") == "c0 and c6 share neither a row nor a column"
    assert game.legal_moves() == []
    assert game.over


def test_cards_not_adding_to_14_are_refused() -> None:
    game = position("quatorze", c0="KS", c1="2D")
    assert refused(game, "c0-c1") == "KS and 2D do not add up to 14"


def test_the_reverse_spelling_is_the_same_move_but_not_listed() -> None:
    game = position("quatorze", c3="9S", c8="5H", c9="QS", s="AH 6D")
    assert game.legal_moves() == ["c3-c8"]
    game.play("c8-c3")
    # Refill: the lower cell (c3) first, from the stock's top (6D), then c8 (AH).
    assert shown(game) == {"c3": "6D", "c8": "AH", "c9": "QS"}


def test_refill_fills_the_lower_cell_first_from_the_stock_top() -> None:
    game = position("quatorze", c1="4S", c21="TS", c9="QD", s="2H 3C KD")
    game.play("c1-c21")
    assert shown(game) == {"c1": "KD", "c21": "3C", "c9": "QD", "s": "2H"}


def test_stock_running_out_mid_refill_then_compaction() -> None:
    game = position("quatorze", c0="QH", c1="4S", c2="8C", c3="TS", c4="2D", c7="9C", s="6D")
    game.play("c1-c3")
    # c1 gets the stock's last card; c3 stays empty, so the grid is compacted: the
    # remaining cards keep their reading order and move to c0, c1, ... with no gaps.
    assert shown(game) == {"c0": "QH", "c1": "6D", "c2": "8C", "c3": "2D", "c4": "9C"}
    assert game.view()["hidden"] == {"s": 0}


def test_compaction_when_the_stock_was_already_empty() -> None:
    game = position("quatorze", c2="JH", c5="7D", c7="3C", c11="5S", c12="9D", c24="AC")
    game.play("c2-c7")
    assert shown(game) == {"c0": "7D", "c1": "5S", "c2": "9D", "c3": "AC"}
    cells = game.view()["piles"]
    assert [cells[f"c{i}"] for i in range(25)] == [["7D"], ["5S"], ["9D"], ["AC"]] + [[]] * 21


def test_compaction_brings_new_pairs_into_line() -> None:
    # 7D in c5 and 7S in c11 share nothing; once c0 and c2 are gone they move to c0, c1.
    game = position("quatorze", c0="KH", c2="AS", c5="7D", c11="7S")
    assert game.legal_moves() == ["c0-c2"]
    game.play("c0-c2")
    assert shown(game) == {"c0": "7D", "c1": "7S"}
    assert game.legal_moves() == ["c0-c1"]


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("c3-c3", "c3 cannot pair with itself"),
        ("c4-c9", "c4 is empty"),
        ("c9-c4", "c4 is empty"),
        ("s-c3", "the stock's cards come out only to refill the grid"),
        ("c3-s", "the stock's cards come out only to refill the grid"),
    ],
)
def test_other_moves_are_refused_with_a_reason(move: str, reason: str) -> None:
    game = position("quatorze", c3="9S", c8="5H", s="AH 6D")
    assert refused(game, move) == reason


def test_won_when_every_card_is_gone() -> None:
    game = position("quatorze", c0="KS", c1="AS")
    game.play("c1-c0")
    assert game.won and game.over
    assert game.score == 52 == game.MAX_SCORE
    assert game.legal_moves() == []
    assert refused(game, "c0-c1") == "the game is won: no more moves"


def test_score_is_two_per_pair() -> None:
    import engine

    game = engine.new_game("quatorze", 1)
    assert game.score == 0
    game.play(game.legal_moves()[0])
    assert game.score == 2
    game.play(game.legal_moves()[0])
    assert game.score == 4
