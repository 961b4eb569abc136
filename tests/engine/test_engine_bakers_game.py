"""Baker's Game: each rule clause of RULES.md on a position built for it.

Positions are small: cards not named are simply not in play. Foundations are given
from their Ace up.
"""

from __future__ import annotations

import pytest
from engine_positions import position, refused, shown

import engine


def test_a_card_goes_on_the_next_higher_card_of_its_suit() -> None:
    game = position("bakers_game", t0="9C 7H", t1="3S 8H", t2="8S")
    assert "t0-t1" in game.legal_moves()
    assert "t0-t2" not in game.legal_moves()
    game.play("t0-t1")
    assert shown(game)["t1"] == "3S 8H 7H"


def test_a_card_of_another_suit_is_refused() -> None:
    game = position("bakers_game", t0="9C 7H", t1="8S")
    assert refused(game, "t0-t1") == "7H does not go on 8S"


def test_a_card_two_values_lower_is_refused() -> None:
    game = position("bakers_game", t0="9C 7H", t1="5S 9H")
    assert refused(game, "t0-t1") == "7H does not go on 9H"


def test_a_build_moves_as_a_unit_and_the_target_fixes_its_length() -> None:
    game = position("bakers_game", t0="2C 6H 5H 4H", t1="TD 7H", r0="QS")
    # 3 free reserves: up to 4 cards may move; the build under 4H is 4H 5H 6H, and 7H
    # takes exactly the three of them.
    game.play("t0-t1")
    assert shown(game)["t1"] == "TD 7H 6H 5H 4H"
    assert shown(game)["t0"] == "2C"
    assert game.moves == 1


@pytest.mark.parametrize("free", [0, 1, 2, 3, 4])
def test_build_limit_is_empty_reserves_plus_one(free: int) -> None:
    reserves = {f"r{i}": card for i, card in enumerate(["2D", "3D", "4D", "5D"][: 4 - free])}
    for n in range(1, 7):
        # A build of n clubs from 4C up, and on t1 the club just above it.
        cards = [f"{v}C" for v in range(3 + n, 3, -1)]
        target = "TC" if n == 6 else f"{4 + n}C"
        game = position("bakers_game", t0="KH " + " ".join(cards), t1=target, **reserves)
        move_ok = n <= free + 1
        assert ("t0-t1" in game.legal_moves()) == move_ok, (free, n)
        if move_ok:
            game.play("t0-t1")
            assert shown(game)["t1"] == " ".join([target, *cards])
        else:
            needed = n - 1
            there = "is 1" if free == 1 else f"are {free}"
            assert refused(game, "t0-t1") == (
                f"moving {n} cards needs {needed} empty reserves; there {there}"
            )


def test_empty_columns_do_not_raise_the_build_limit() -> None:
    # No empty reserve, five empty columns: still only one card may move.
    game = position(
        "bakers_game", t0="KH 5C 4C", t1="6C", t2="QD", r0="2D", r1="3D", r2="4D", r3="5D"
    )
    assert refused(game, "t0-t1") == "moving 2 cards needs 1 empty reserves; there are 0"
    assert "t0-t1" not in game.legal_moves()


def test_an_empty_column_takes_a_king() -> None:
    game = position("bakers_game", t0="3D KS", t1="5H")
    assert sorted(m for m in game.legal_moves() if "-t" in m) == [
        "t0-t2", "t0-t3", "t0-t4", "t0-t5", "t0-t6", "t0-t7"
    ]  # fmt: skip
    game.play("t0-t5")
    assert shown(game)["t5"] == "KS"


def test_an_empty_column_refuses_anything_but_a_king() -> None:
    game = position("bakers_game", t0="3D QS", r0="QH", t1="KC")
    assert refused(game, "t0-t2") == (
        "only a King, or a build led by a King, goes onto the empty column t2"
    )
    assert refused(game, "r0-t2") == "only a King goes onto the empty column t2"
    assert not any(m.startswith(("t0-t", "r0-t")) for m in game.legal_moves())


def test_an_empty_column_takes_a_king_led_build_within_the_limit() -> None:
    game = position("bakers_game", t0="3D KS QS JS", r0="2D", r1="4D")
    # KS QS JS: 3 cards, 2 empty reserves -> allowed.
    game.play("t0-t4")
    assert shown(game)["t4"] == "KS QS JS"
    assert shown(game)["t0"] == "3D"


def test_a_king_led_build_over_the_limit_is_refused() -> None:
    game = position("bakers_game", t0="3D KS QS JS", r0="2D", r1="4D", r2="6D")
    assert refused(game, "t0-t4") == "moving 3 cards needs 2 empty reserves; there is 1"


def test_a_build_not_led_by_a_king_does_not_go_to_an_empty_column() -> None:
    game = position("bakers_game", t0="3D QS JS")
    assert refused(game, "t0-t4") == (
        "only a King, or a build led by a King, goes onto the empty column t4"
    )


def test_a_lone_king_may_move_from_one_empty_column_to_another() -> None:
    game = position("bakers_game", t0="KS", t1="5H 4H", r0="2D", r1="3D", r2="6D", r3="7D")
    assert sorted(game.legal_moves()) == [f"t0-t{i}" for i in range(2, 8)]
    game.play("t0-t3")
    assert shown(game)["t3"] == "KS"
    assert "t0" not in shown(game)


def test_column_to_reserve_and_back() -> None:
    game = position("bakers_game", t0="9C 6H", t1="7H")
    game.play("t0-r2")
    assert shown(game)["r2"] == "6H"
    game.play("r2-t1")
    assert shown(game)["t1"] == "7H 6H"
    assert game.moves == 2


def test_every_empty_reserve_is_listed_as_a_target() -> None:
    game = position("bakers_game", t0="9C", r1="5D")
    assert sorted(game.legal_moves()) == ["t0-r0", "t0-r2", "t0-r3"]


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("t0-r1", "r1 is not empty"),
        ("r1-r0", "there is no move from one reserve to another"),
        ("r0-t0", "r0 is empty"),
        ("t3-r0", "t3 is empty"),
        ("t3-t0", "t3 is empty"),
        ("r1-t1", "5D does not go on 7H"),
        ("t0-t0", "t0 cannot move onto itself"),
        ("f-t0", "cards never leave the foundations"),
        ("t0-f", "9C does not go on fC: it needs 2C"),
        ("r1-f", "5D does not go on fD: it needs AD"),
    ],
)
def test_other_moves_are_refused_with_a_reason(move: str, reason: str) -> None:
    game = position("bakers_game", t0="9C", t1="7H", r1="5D", fC="AC")
    assert refused(game, move) == reason


def test_foundation_moves_are_never_listed() -> None:
    game = engine.new_game("bakers_game", 3)
    assert not any(m.endswith("-f") for m in game.legal_moves())


def test_auto_play_after_a_move_runs_until_nothing_fits() -> None:
    # Moving KS off AH lets AH go home; then 2H follows from r0, then 3H, uncovered by AH.
    game = position("bakers_game", t0="3H AH KS", r0="2H", t1="5C 4S", t2="QD")
    assert shown(game).get("fH") is None
    game.play("t0-t3")
    assert shown(game)["t3"] == "KS"
    assert shown(game)["fH"] == "AH 2H 3H"
    assert "t0" not in shown(game) and "r0" not in shown(game)
    assert game.moves == 1  # auto-played cards are not moves
    assert game.score == 3


def test_auto_play_after_a_move_to_a_reserve() -> None:
    game = position("bakers_game", t0="AD 2C", t1="AC 9S", fD="", r3="2D")
    game.play("t1-r0")
    # AC goes home, then 2C from t0, then AD, then 2D from r3.
    assert shown(game) == {"fC": "AC 2C", "fD": "AD 2D", "r0": "9S"}
    assert game.moves == 1


def test_won_with_all_52_home_then_every_move_is_refused() -> None:
    home = {f"f{s}": " ".join(f"{r}{s}" for r in "A23456789TJQK") for s in "CDH"}
    home["fS"] = "AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS"
    game = position("bakers_game", t0="QS KS", **home)
    assert game.score == 50 and not game.won
    game.play("t0-r0")  # QS goes home, then KS from r0
    assert game.score == 52 == game.MAX_SCORE
    assert game.won and game.over
    assert game.legal_moves() == []
    assert refused(game, "t0-r0") == "the game is won: no more moves"


def test_over_when_stuck() -> None:
    game = position("bakers_game", t0="5C 9S", t1="3C 7H", r0="2D", r1="3D", r2="4D", r3="6D")
    assert game.legal_moves() == []
    assert game.over and not game.won
