"""The board renderers, on public views built by the engine.

Every expected board below was checked by hand, card by card: Baker's Game
seed 1 against the Microsoft FreeCell deal #1 listed in RULES.md; Quatorze and
Doublets seed 1 against the same deal order (deal_order[i] is the i-th card of
that listing read across the columns: JD 2D 9H JC 5D 7H 7C 5H KD ...); the
Hopscotch board against the view's own piles after the moves shown.
"""

from __future__ import annotations

import random

import pytest

import engine
from client_cli.boards import BOARD_WIDTH, DEFAULT_HEIGHT, render, render_text
from client_cli.theme import Theme

BAKERS_SEED_1 = """\
 r0    r1    r2    r3      f♣    f♦    f♥    f♠
[   ] [   ] [   ] [   ]   [   ] [   ] [   ] [   ]

 t0    t1    t2    t3    t4    t5    t6    t7
[ J♦] [ 2♦] [ 9♥] [ J♣] [ 5♦] [ 7♥] [ 7♣] [ 5♥]
[ K♦] [ K♣] [ 9♠] [ 5♠] [ A♦] [ Q♣] [ K♥] [ 3♥]
[ 2♠] [ K♠] [ 9♦] [ Q♦] [ J♠] [ A♠] [ A♥] [ 3♣]
[ 4♣] [ 5♣] [10♠] [ Q♥] [ 4♥] [ A♣] [ 4♦] [ 7♠]
[ 3♠] [10♦] [ 4♠] [10♥] [ 8♥] [ 2♣] [ J♥] [ 7♦]
[ 6♦] [ 8♠] [ 8♦] [ Q♠] [ 6♣] [ 3♦] [ 8♣] [10♣]
[ 6♠] [ 9♣] [ 2♥] [ 6♥]"""

QUATORZE_SEED_1_ASCII = """\
 s  27 left
[###]    pairs adding up to 14, same row or column

   c0       c1       c2       c3       c4
  [ JD]    [ 2D]    [ 9H]    [ JC]    [ 5D]
   c5       c6       c7       c8       c9
  [ 7H]    [ 7C]    [ 5H]    [ KD]    [ KC]
   c10      c11      c12      c13      c14
  [ 9S]    [ 5S]    [ AD]    [ QC]    [ KH]
   c15      c16      c17      c18      c19
  [ 3H]    [ 2S]    [ KS]    [ 9D]    [ QD]
   c20      c21      c22      c23      c24
  [ JS]    [ AS]    [ AH]    [ 3C]    [ 4C]"""

# r0..r5 = JD 2D 9H JC 5D 7H, foundation 7C (7 doubled is 14 = 1 mod 13: an Ace
# next), r6 = 5H; three deals put the stock's top three cards on the waste.
DOUBLETS_SEED_1_AFTER_3_DEALS = """\
 s  41 left  w  3
[▒▒▒]       [ 9♠]         redeals left: 2

             r2        r3        r4
            [ 9♥]     [ J♣]     [ 5♦]
   r1                                      r5
  [ 2♦]                f  1/48            [ 7♥]
                      [ 7♣]
                      next A
   r0                                      r6
  [ J♦]                                   [ 5♥]"""

# The four starting clubs; each foundation's next card is its top plus its step.
HOPSCOTCH_SEED_1_AFTER_4_MOVES = """\
 s  46 left    w
[▒▒▒]         [   ]

 f0 +1     f1 +2     f2 +3     f3 +4
[ A♣]     [ 2♣]     [ 3♣]     [ 4♣]
 next 2    next 4    next 6    next 8

 r0        r1        r2        r3
[ Q♦]     [ Q♠]     [   ]     [   ]"""


def test_bakers_game_deal_one_is_freecell_deal_one() -> None:
    assert render_text(engine.new_game("bakers_game", 1).view()) == BAKERS_SEED_1


def test_quatorze_grid_in_ascii() -> None:
    view = engine.new_game("quatorze", 1).view()
    assert render_text(view, ascii_only=True) == QUATORZE_SEED_1_ASCII


def test_doublets_arch_and_next_foundation_value() -> None:
    game = engine.replay("doublets", 1, ["deal", "deal", "deal"])
    assert game.view()["piles"]["w"][-1] == "9S"
    assert render_text(game.view()) == DOUBLETS_SEED_1_AFTER_3_DEALS


def test_hopscotch_steps_and_next_cards() -> None:
    game = engine.replay("hopscotch", 1, ["deal", "w-r0", "deal", "w-r1"])
    assert render_text(game.view()) == HOPSCOTCH_SEED_1_AFTER_4_MOVES


def test_hopscotch_next_card_wraps_and_a_king_completes() -> None:
    view = {
        "game": "hopscotch",
        "piles": {"w": [], "f0": ["AC", "KH"], "f1": ["2C", "QH"], "f2": ["3C", "JD"],
                  "f3": ["4C", "TS"], "r0": [], "r1": [], "r2": [], "r3": []},
        "hidden": {"s": 0},
    }  # fmt: skip
    # f0 K: complete. f1 Q+2 = 14 = A. f2 J+3 = 14 = A. f3 10+4 = 14 = A.
    assert " done      next A    next A    next A" in render_text(view)


def test_long_piles_are_shortened_from_the_bottom_and_keep_their_top() -> None:
    cards = ["KS", "QH", "JS", "TH", "9S", "8H", "7S", "6H", "5S", "4H", "3S", "2H", "AS"] * 2
    view = {"game": "hopscotch", "piles": {"r0": cards, "w": []}, "hidden": {"s": 0}}
    lines = render(view, Theme(colour=False), height=12).text().splitlines()
    assert len(lines) <= 12
    assert lines[8].startswith(" +23")  # 26 cards: the marker, then the top 3
    assert [ln[:5] for ln in lines[9:12]] == ["[ 3♠]", "[ 2♥]", "[ A♠]"]


def test_colours_mark_red_and_black_cards_and_no_colour_has_no_styles() -> None:
    view = engine.new_game("bakers_game", 1).view()
    styled = render(view, Theme(colour=True)).fragments()
    styles = {text.strip("[]"): style for style, text in styled if text.startswith("[ ")}
    assert styles[" J♦"] == "class:card.red"
    assert styles[" 6♠"] == "class:card.black"
    plain = render(view, Theme(colour=False)).fragments()
    assert {style for style, _ in plain} == {""}


@pytest.mark.parametrize("game", engine.GAMES)
def test_boards_fit_beside_the_side_panel_in_80x24_throughout_a_game(game: str) -> None:
    rng = random.Random(game)
    for seed in (1, 2, 3):
        g = engine.new_game(game, seed)
        while not g.over and g.moves < 400:
            canvas = render(g.view(), Theme(), DEFAULT_HEIGHT)
            assert canvas.width == BOARD_WIDTH
            assert canvas.height <= DEFAULT_HEIGHT
            g.play(rng.choice(g.legal_moves()))
