"""Deals: the shuffle, the published test vectors, and one hand-checked deal per game.

The shuffle (RULES.md): state = seed; repeat: state = (state * 214013 + 2531011) mod 2^31,
r = state div 2^16, j = r mod len(cards); swap cards[j] with the last card and deal it.
The expected layouts below come from outside the engine: RULES.md's test vector, the
layout of Microsoft FreeCell deal #617 published on Rosetta Code ("Deal cards for
FreeCell", mirrored in freeCodeCamp's curriculum as rosetta-code/deal-cards-for-freecell),
the program `make-microsoft-freecell-board -t N` of Debian's freecell-solver-bin (an
independent implementation of the Microsoft deals), and arithmetic done by hand.
"""

from __future__ import annotations

import pytest
from engine_positions import shown

import engine
from engine.deal import deal_order
from engine.games.bakers_game import BakersGame
from engine.games.doublets import Doublets
from engine.games.hopscotch import Hopscotch


def columns(text: str) -> dict[str, list[str]]:
    return {f"t{i}": line.split() for i, line in enumerate(text.strip().splitlines())}


# RULES.md's vector: Baker's Game seed 1 is Microsoft FreeCell deal #1.
DEAL_1 = columns("""
    JD KD 2S 4C 3S 6D 6S
    2D KC KS 5C TD 8S 9C
    9H 9S 9D TS 4S 8D 2H
    JC 5S QD QH TH QS 6H
    5D AD JS 4H 8H 6C
    7H QC AS AC 2C 3D
    7C KH AH 4D JH 8C
    5H 3H 3C 7S 7D TC
""")

# Microsoft FreeCell deal #617 as Rosetta Code publishes it (rows of its table read as
# columns here); `make-microsoft-freecell-board -t 617` prints the same eight columns.
DEAL_617 = columns("""
    7D TD TH KD 4C 4S JD
    AD 7S QC 5H QS TS KS
    5C QD 3H 9S 9C 2H KC
    3S AC 9D 3C 9H 5D 4H
    5S 6D 6S 8S 7C JC
    8C 8H 8D 7H 6H 6C
    2D AS 3D 4D 2C JH
    AH KH TC JS 2S QH
""")

# `make-microsoft-freecell-board -t 3`.
DEAL_3 = columns("""
    KC 7D TC 4H 6C 9S 8C
    2D JH QH AS TD 2C 4S
    QC 9D TS JD 2S 3H 5S
    7H JS 5D 8D 3C 4C 5C
    6S QS 6H AC 9H AH
    8H 8S KS 6D KD 2H
    TH 9C 7C 3D 7S JC
    4D QD AD KH 3S 5H
""")


def test_shuffle_first_steps_by_hand() -> None:
    """Seed 1, worked by hand.

    Step 1: state = 1 * 214013 + 2531011 = 2745024 (below 2^31); r = 2745024 div 65536 = 41
    (41 * 65536 = 2686976). j = 41 mod 52 = 41; card 41 of the canonical deck is rank
    41 div 4 = 10 (a Jack), suit 41 mod 4 = 1 (diamonds): JD. KS (card 51) moves to 41.
    Step 2: state = (2745024 * 214013 + 2531011) mod 2^31 = 1210316419, r = 18467,
    j = 18467 mod 51 = 5 -> card 5 is 2D. Step 3: state = 415139642, r = 6334,
    j = 6334 mod 50 = 34 -> card 34 is 9H. Step 4: state = 1736732949, r = 26500,
    j = 26500 mod 49 = 40 -> card 40 is JC.
    These are the first four cards of Microsoft FreeCell deal #1's first row.
    """
    assert deal_order(range(52), 1)[:4] == [41, 5, 34, 40]
    assert [BakersGame.dealt_piles(1)[f"t{i}"][0] for i in range(4)] == ["JD", "2D", "9H", "JC"]


def test_bakers_game_seed_1_is_freecell_deal_1() -> None:
    dealt = BakersGame.dealt_piles(1)
    assert {k: v for k, v in dealt.items() if k.startswith("t")} == DEAL_1
    assert all(not v for k, v in dealt.items() if not k.startswith("t"))
    # No Ace is on top, so auto-play changes nothing and the game starts as dealt.
    game = engine.new_game("bakers_game", 1)
    assert game.piles == dealt
    assert game.score == 0


def test_bakers_game_seed_617_is_freecell_deal_617() -> None:
    game = engine.new_game("bakers_game", 617)
    assert {k: v for k, v in game.piles.items() if k.startswith("t")} == DEAL_617
    assert game.score == 0


def test_bakers_game_auto_plays_right_after_the_deal() -> None:
    """Deal #3 has AH on top of t4; once it is home, 2H on top of t5 follows it."""
    assert {k: v for k, v in BakersGame.dealt_piles(3).items() if k.startswith("t")} == DEAL_3
    game = engine.new_game("bakers_game", 3)
    expected = {k: v[:] for k, v in DEAL_3.items()}
    expected["t4"].pop()
    expected["t5"].pop()
    assert {k: v for k, v in game.piles.items() if k.startswith("t")} == expected
    assert game.piles["fH"] == ["AH", "2H"]
    assert game.score == 2
    assert game.moves == 0


def test_doublets_seed_1_by_hand() -> None:
    """Doublets uses the 52-card deck, so its deal order is FreeCell deal #1's, read row by
    row: JD 2D 9H JC 5D 7H 7C 5H | KD KC 9S 5S AD QC KH 3H | ... The first six go to r0..r5,
    the seventh (7C) is the foundation's base, the eighth (5H) goes to r6, and the stock
    starts with KD on top. No King among the eight, so nothing is replaced."""
    game = engine.new_game("doublets", 1)
    view = game.view()
    assert [view["piles"][f"r{i}"] for i in range(7)] == [
        ["JD"], ["2D"], ["9H"], ["JC"], ["5D"], ["7H"], ["5H"]
    ]  # fmt: skip
    assert view["piles"]["f"] == ["7C"]
    assert view["hidden"] == {"s": 44}
    assert game.piles["s"][-1] == "KD"
    assert game.piles["s"][-2] == "KC"
    assert game.piles["s"][-3] == "9S"
    game.play("deal")
    assert game.piles["w"] == ["KD"]


def test_doublets_kings_are_replaced_in_visiting_order() -> None:
    """Seed 20 (`make-microsoft-freecell-board -t 20`): the first row is
    KS 5H 6S 3H KC 7H KH 8C and the second 6H 6D TS 9S 5C 5D 2C 4S; the last card dealt
    is 7S. So r0 = KS, r4 = KC, the base is KH, and the stock's top is 6H, then 6D, TS, 9S.
    r0's KS goes under the stock and 6H replaces it; r4's KC goes under and 6D replaces
    it; the base KH goes under and TS replaces it. The stock's bottom is then
    KH, KC, KS, 7S and its top 9S."""
    game = engine.new_game("doublets", 20)
    piles = game.piles
    assert [piles[f"r{i}"][0] for i in range(7)] == ["6H", "5H", "6S", "3H", "6D", "7H", "8C"]
    assert piles["f"] == ["TS"]
    assert piles["s"][:4] == ["KH", "KC", "KS", "7S"]
    assert piles["s"][-1] == "9S"
    assert len(piles["s"]) == 44
    assert game.score == 1


def test_doublets_a_king_drawn_for_a_king_is_replaced_too() -> None:
    """Seed 37 (`make-microsoft-freecell-board -t 37`): first row AS 2D AH 2S QH 6S 4H KH,
    second row KC KD KS QC AD 4C 7S 9S; the last card dealt is AC. r6 holds KH, and the
    stock's next three cards are the other Kings: each is drawn, goes under the stock in
    turn, and QC finally stays in r6. Bottom of the stock: KS KD KC KH AC."""
    game = engine.new_game("doublets", 37)
    piles = game.piles
    assert piles["r6"] == ["QC"]
    assert [piles[f"r{i}"][0] for i in range(6)] == ["AS", "2D", "AH", "2S", "QH", "6S"]
    assert piles["f"] == ["4H"]
    assert piles["s"][:5] == ["KS", "KD", "KC", "KH", "AC"]
    assert piles["s"][-1] == "AD"


def test_quatorze_seed_1_by_hand() -> None:
    """The first 25 cards of deal #1's order fill c0..c24 row by row; card 26 (5C, the
    first card of the fourth row of FreeCell deal #1) is the stock's top."""
    piles = engine.new_game("quatorze", 1).piles
    grid = [piles[f"c{i}"] for i in range(25)]
    assert all(len(cell) == 1 for cell in grid)
    assert " ".join(cell[0] for cell in grid) == (
        "JD 2D 9H JC 5D 7H 7C 5H KD KC 9S 5S AD QC KH 3H 2S KS 9D QD JS AS AH 3C 4C"
    )
    assert piles["s"][-1] == "5C"
    assert len(piles["s"]) == 27


def test_hopscotch_seed_1_by_hand() -> None:
    """Hopscotch shuffles 48 cards: AD AH AS 2D 2H 2S 3D 3H 3S 4D 4H 4S 5C 5D ... KS.
    The random numbers are seed 1's (see the first test): r = 41, 18467, 6334, 26500.
    Card 1: j = 41 mod 48 = 41. The first 12 cards are the A-4 of D, H, S; after them
    card k is canonical card k + 4, so card 41 is canonical 45 = QD. KS moves to 41.
    Card 2: j = 18467 mod 47 = 43 -> canonical 47 = QS; KH (index 46) moves to 43.
    Card 3: j = 6334 mod 46 = 32 -> canonical 36 = TC. Card 4: j = 26500 mod 45 = 40 ->
    canonical 44 = QC. So the stock reads QD, QS, TC, QC from the top."""
    game = engine.new_game("hopscotch", 1)
    assert game.piles["s"][-4:] == ["QC", "TC", "QS", "QD"]
    assert len(game.piles["s"]) == 48
    assert [game.piles[f"f{i}"] for i in range(4)] == [["AC"], ["2C"], ["3C"], ["4C"]]
    game.play("deal")
    assert game.view()["piles"]["w"] == ["QD"]
    assert Hopscotch.DECK[:3] == (1, 2, 3)


@pytest.mark.parametrize("game_id", engine.GAMES)
@pytest.mark.parametrize("seed", [0, -1, 2**31, 10**20])
def test_seed_out_of_range_is_a_value_error(game_id: str, seed: int) -> None:
    with pytest.raises(ValueError, match="out of range"):
        engine.new_game(game_id, seed)


@pytest.mark.parametrize("seed", ["1", 1.0, True, None])
def test_seed_must_be_an_int(seed: object) -> None:
    with pytest.raises(ValueError, match="integer"):
        engine.new_game("doublets", seed)  # type: ignore[arg-type]


def test_extreme_seeds_deal() -> None:
    for game_id in engine.GAMES:
        for seed in (1, 2**31 - 1):
            game = engine.new_game(game_id, seed)
            assert game.seed == seed


@pytest.mark.parametrize("game_id", ["klondike", "Doublets", "", None, 3])
def test_unknown_game_is_a_value_error(game_id: object) -> None:
    with pytest.raises(ValueError, match="unknown game"):
        engine.new_game(game_id, 1)  # type: ignore[arg-type]


def test_same_seed_same_deal_different_seed_different_deal() -> None:
    for game_id in engine.GAMES:
        assert engine.new_game(game_id, 5).piles == engine.new_game(game_id, 5).piles
        assert engine.new_game(game_id, 5).piles != engine.new_game(game_id, 6).piles


def test_doublets_deal_uses_rules_order_not_pile_order() -> None:
    """The eighth card goes to r6, the seventh to the foundation (not the other way)."""
    order = Doublets.dealt_piles(1)
    assert order["f"] == ["7C"] and order["r6"] == ["5H"]
    assert shown(engine.new_game("doublets", 1))["f"] == "7C"
