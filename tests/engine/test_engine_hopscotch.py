"""Hopscotch: each rule clause of RULES.md on a position built for it."""

from __future__ import annotations

import pytest
from engine_positions import position, refused, shown

# RULES.md's sequences after each foundation's starting club.
SEQUENCES = {
    0: "2 3 4 5 6 7 8 9 T J Q K",
    1: "4 6 8 T Q A 3 5 7 9 J K",
    2: "6 9 Q 2 5 8 J A 4 7 T K",
    3: "8 Q 3 7 J 2 6 T A 5 9 K",
}
STARTERS = ("AC", "2C", "3C", "4C")


@pytest.mark.parametrize("i", range(4))
def test_each_foundation_follows_its_sequence_to_the_king(i: int) -> None:
    cards = [f"{rank}D" for rank in SEQUENCES[i].split()]
    # r0 holds the sequence with its first card on top.
    game = position(
        "hopscotch", **{f"f{k}": STARTERS[k] for k in range(4)}, r0=" ".join(cards[::-1])
    )
    for n, card in enumerate(cards, 1):
        assert f"r0-f{i}" in game.legal_moves(), card
        game.play(f"r0-f{i}")
        assert shown(game)[f"f{i}"].split()[-1] == card
        assert game.score == n
    assert len(shown(game)[f"f{i}"].split()) == 13


def test_a_card_that_does_not_fit_is_refused_with_the_needed_value() -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", w="5D")
    assert refused(game, "w-f0") == "5D does not go on AC: f0 counts by 1 and needs a 2"
    assert refused(game, "w-f2") == "5D does not go on 3C: f2 counts by 3 and needs a 6"


def test_the_king_needs_a_value_of_13_not_0() -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="JD", w="AS")
    # f3 counts by 4: J (11) + 4 = 15 = 2 mod 13.
    assert refused(game, "w-f3") == "AS does not go on JD: f3 counts by 4 and needs a 2"
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="9D", w="AS")
    assert refused(game, "w-f3") == "AS does not go on 9D: f3 counts by 4 and needs a K"


def test_suits_do_not_matter() -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", w="2H", r0="4S", r1="6D")
    assert sorted(game.legal_moves()) == ["r0-f1", "r1-f2", "w-f0", "w-r0", "w-r1", "w-r2", "w-r3"]


def test_a_completed_foundation_takes_nothing_more() -> None:
    f0 = " ".join(["AC", *(f"{r}D" for r in "23456789TJQK")])
    game = position("hopscotch", f0=f0, f1="2C", f2="3C", f3="4C", w="AH")
    # AH would be "K + 1" modulo 13, but f0 is complete.
    assert refused(game, "w-f0") == "f0 is complete"
    assert "w-f0" not in game.legal_moves()


def test_deal_only_when_the_waste_is_empty() -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", s="9S 7H")
    assert game.legal_moves() == ["deal"]
    game.play("deal")
    assert shown(game)["w"] == "7H"
    assert "deal" not in game.legal_moves()
    assert refused(game, "deal") == "the waste is not empty: play 7H first"
    game.play("w-r2")
    game.play("deal")
    assert shown(game)["w"] == "9S"
    assert game.moves == 3


def test_no_redeal() -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", r0="9S")
    assert refused(game, "deal") == "the stock is empty"
    assert game.legal_moves() == []
    assert game.over and not game.won


def test_the_waste_card_goes_onto_any_reserve() -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", w="KS", r1="5H 9D", s="3D")
    assert sorted(game.legal_moves()) == ["w-r0", "w-r1", "w-r2", "w-r3"]
    game.play("w-r1")
    assert shown(game)["r1"] == "5H 9D KS"


def test_only_a_reserves_top_card_plays_and_only_to_a_foundation() -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", r0="2S 9D", s="3D")
    # 2S would fit f0 but 9D covers it.
    assert refused(game, "r0-f0") == "9D does not go on AC: f0 counts by 1 and needs a 2"
    assert refused(game, "r0-r1") == "reserve cards go only to the foundations"
    assert refused(game, "r0-w") == "nothing moves onto the waste"
    assert game.legal_moves() == ["deal"]


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("f0-r0", "cards never leave the foundations"),
        ("s-w", "the stock's cards come out with 'deal'"),
        ("w-s", "nothing moves onto the stock"),
        ("w-f1", "w is empty"),
        ("r3-f1", "r3 is empty"),
    ],
)
def test_other_moves_are_refused_with_a_reason(move: str, reason: str) -> None:
    game = position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", r0="9D", s="3D")
    assert refused(game, move) == reason


def test_won_when_stock_waste_and_reserves_are_empty() -> None:
    # Deal the 48 cards onto the foundations in sequence, taking for each value the first
    # suit still free; KS, the last King handed out, stays on the waste.
    free = {rank: [s for s in "CDHS" if f"{rank}{s}" not in STARTERS] for rank in "A23456789TJQK"}
    fs = {
        f"f{i}": [STARTERS[i], *(f"{r}{free[r].pop(0)}" for r in SEQUENCES[i].split())]
        for i in range(4)
    }
    assert fs["f3"].pop() == "KS"
    fs_text = {code: " ".join(cards) for code, cards in fs.items()}
    game = position("hopscotch", **fs_text, w="KS")
    assert game.score == 47 and not game.won
    game.play("w-f3")
    assert game.won and game.over
    assert game.score == 48 == game.MAX_SCORE
    assert game.legal_moves() == []
    assert refused(game, "deal") == "the game is won: no more moves"
