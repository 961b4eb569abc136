"""Doublets: each rule clause of RULES.md on a position built for it."""

from __future__ import annotations

import pytest
from engine_positions import position, refused, shown

# The doubling sequence of RULES.md, one card per value (suits vary so cards are unique).
SEQUENCE = ["AC", "2D", "4H", "8S", "3C", "6D", "QH", "JS", "9C", "5D", "TH", "7S", "AD"]


def test_deal_turns_the_stock_top_onto_the_waste() -> None:
    game = position("doublets", s="9C 3D", f="5H", r0="2S")
    game.play("deal")
    assert shown(game)["w"] == "3D"
    assert shown(game)["s"] == "9C"
    assert game.moves == 1
    assert game.redeals_left == 2


def test_redeal_keeps_the_order_so_the_first_waste_card_is_on_top_again() -> None:
    game = position("doublets", s="9C 3D 7H", f="5H", r0="2S")
    for _ in range(3):
        game.play("deal")
    assert shown(game)["w"] == "7H 3D 9C"
    game.play("deal")  # the redeal
    assert game.redeals_left == 1
    assert shown(game)["s"] == "9C 3D 7H"
    assert "w" not in shown(game)
    game.play("deal")
    assert shown(game)["w"] == "7H"  # the first card dealt comes out first again
    assert game.moves == 5


def test_two_redeals_then_no_more() -> None:
    game = position("doublets", s="9C", f="5H", r0="2S")
    game.play("deal")
    game.play("deal")  # redeal 1
    game.play("deal")
    game.play("deal")  # redeal 2
    assert game.redeals_left == 0
    game.play("deal")
    assert shown(game)["w"] == "9C"
    assert "deal" not in game.legal_moves()
    assert refused(game, "deal") == "the stock is empty and no redeals are left"
    assert game.over


def test_deal_with_stock_and_waste_empty_is_refused() -> None:
    game = position("doublets", f="5H", r0="2S")
    assert refused(game, "deal") == "the stock and the waste are both empty"


@pytest.mark.parametrize("i", range(len(SEQUENCE) - 1))
def test_foundation_takes_double_the_top_value_mod_13(i: int) -> None:
    below, card = SEQUENCE[i], SEQUENCE[i + 1]
    game = position("doublets", f=below, r3=card)
    assert game.legal_moves() == ["r3-f"]
    game.play("r3-f")
    assert shown(game)["f"] == f"{below} {card}"
    assert game.score == 2


def test_a_card_that_is_not_the_double_is_refused_with_the_needed_value() -> None:
    game = position("doublets", f="9H", w="7H", r0="QC", s="2D")
    # 9 x 2 = 18 = 5 mod 13: a 5 is needed.
    assert refused(game, "w-f") == "7H does not go on 9H: it needs a 5"
    assert refused(game, "r0-f") == "QC does not go on 9H: it needs a 5"
    assert game.legal_moves() == ["deal"]


def test_a_10_is_named_10_in_the_reason() -> None:
    game = position("doublets", f="5H", w="7H")
    assert refused(game, "w-f") == "7H does not go on 5H: it needs a 10"


def test_kings_never_go_onto_the_foundation() -> None:
    # 2 x 7 = 14 = 1: no value doubles to a King (13 = 0 mod 13 would need a King below).
    game = position("doublets", f="7H", w="KD", r0="KS")
    assert refused(game, "w-f") == "KD does not go on 7H: Kings never go onto the foundation"
    assert refused(game, "r0-f") == "KS does not go on 7H: Kings never go onto the foundation"
    assert game.legal_moves() == ["deal"]  # only the redeal


def test_reserve_refills_from_the_waste_first() -> None:
    game = position("doublets", f="AC", r2="2D", w="9S 4C", s="8H")
    game.play("r2-f")
    assert shown(game) == {"f": "AC 2D", "r2": "4C", "w": "9S", "s": "8H"}


def test_reserve_refills_from_the_stock_when_the_waste_is_empty() -> None:
    game = position("doublets", f="AC", r2="2D", s="8H 6S")
    game.play("r2-f")
    assert shown(game) == {"f": "AC 2D", "r2": "6S", "s": "8H"}


def test_reserve_stays_empty_when_waste_and_stock_are_empty() -> None:
    game = position("doublets", f="AC", r2="2D", r0="5S")
    game.play("r2-f")
    assert shown(game) == {"f": "AC 2D", "r0": "5S"}
    assert refused(game, "r2-f") == "r2 is empty"


def test_waste_to_foundation_refills_nothing() -> None:
    game = position("doublets", f="AC", w="3S 2D", s="8H")
    game.play("w-f")
    assert shown(game) == {"f": "AC 2D", "w": "3S", "s": "8H"}


def test_a_king_refilled_into_a_reserve_blocks_it() -> None:
    game = position("doublets", f="AC", r2="2D", w="KH", s="4S")
    game.play("r2-f")
    assert shown(game)["r2"] == "KH"
    # Nothing moves into a reserve, and the King never leaves it: r2 is blocked for good.
    assert refused(game, "r2-f") == "KH does not go on 2D: Kings never go onto the foundation"
    game.play("deal")
    assert refused(game, "w-r2") == "nothing moves into r2: reserves refill by themselves"
    assert sorted(game.legal_moves()) == ["deal", "w-f"]
    game.play("w-f")
    assert shown(game)["r2"] == "KH"


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("f-r0", "nothing moves into r0: reserves refill by themselves"),
        ("f-w", "cards move only onto the foundation, 'f'"),
        ("r0-w", "cards move only onto the foundation, 'f'"),
        ("f-f", "cards never leave the foundation"),
        ("s-f", "the stock's cards come out with 'deal'"),
        ("r1-f", "r1 is empty"),
    ],
)
def test_other_moves_are_refused_with_a_reason(move: str, reason: str) -> None:
    game = position("doublets", f="AC", r0="9D", s="3S")
    assert refused(game, move) == reason


def test_won_at_48_cards_then_every_move_is_refused() -> None:
    non_kings = [f"{r}{s}" for r in "A23456789TJQ" for s in "CDHS"]
    non_kings.remove("AC")
    non_kings.remove("2C")
    game = position("doublets", f=" ".join([*non_kings, "AC"]), r0="2C", s="KS KH", w="KD KC")
    assert game.score == 47
    assert not game.won
    game.play("r0-f")
    assert game.score == 48 == game.MAX_SCORE
    assert game.won and game.over
    assert shown(game)["r0"] == "KC"  # refilled from the waste
    assert game.legal_moves() == []
    # A card could still be turned, but a won game refuses every move.
    assert refused(game, "deal") == "the game is won: no more moves"
    assert game.view()["won"] is True


def test_score_counts_the_base_card() -> None:
    game = position("doublets", f="3C", r0="6D")
    assert game.score == 1
    game.play("r0-f")
    assert game.score == 2
