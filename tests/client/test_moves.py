"""Move entry: short forms and completion, on legal moves the engine computes."""

from __future__ import annotations

import engine
from client_cli.moves import completions, legal_moves, resolve

# Quatorze seed 1 (grid checked in test_boards.py): c0 J♦ pairs with c15 3♥ (column 0);
# c2 9♥ pairs with c4 5♦ (row 0) and c7 5♥ (column 2).
QUATORZE_1 = engine.new_game("quatorze", 1).view()


def test_legal_moves_come_from_the_engine_on_the_public_view() -> None:
    legal = legal_moves(QUATORZE_1)
    assert "c0-c15" in legal
    assert {"c2-c4", "c2-c7"} <= set(legal)
    assert legal == sorted(engine.new_game("quatorze", 1).legal_moves())


def test_a_full_move_string_passes_as_typed_even_if_illegal() -> None:
    legal = legal_moves(QUATORZE_1)
    assert resolve("c0-c15", legal).move == "c0-c15"
    # Not legal, but well formed: the server must be the one to say why.
    assert resolve("c0-c1", legal).move == "c0-c1"
    assert resolve(" C0-C15 ", legal).move == "c0-c15"


def test_a_pile_alone_plays_its_only_move_and_lists_several() -> None:
    legal = legal_moves(QUATORZE_1)
    assert resolve("c0", legal).move == "c0-c15"
    assert resolve("c15", legal).move is None  # c0-c15 and c15-c20 (3♥ + J♠)
    assert "c0-c15" in (resolve("c15", legal).problem or "")
    several = resolve("c2", legal)
    assert several.move is None and "c2-c4" in (several.problem or "")
    assert resolve("c1", legal).problem == "No legal move from c1."


def test_hyphenless_moves_and_d_for_deal() -> None:
    assert resolve("c0c15", legal_moves(QUATORZE_1)).move == "c0-c15"
    doublets = legal_moves(engine.new_game("doublets", 1).view())
    assert doublets == ["deal"]
    assert resolve("d", doublets).move == "deal"


def test_every_short_form_gives_the_engines_reason() -> None:
    """Hopscotch with a card on the waste: `d` goes to the server as `deal` does (which
    refuses it: the waste is not empty), and a pile with no move says why."""
    game = engine.new_game("hopscotch", 1)
    game.play("deal")
    view = game.view()
    legal = legal_moves(view)
    assert "deal" not in legal
    assert resolve("d", legal, "hopscotch", view).move == "deal"
    assert resolve("deal", legal, "hopscotch", view).move == "deal"
    assert resolve("r1", legal, "hopscotch", view).problem == "No legal move from r1: r1 is empty"
    stock = resolve("s", legal, "hopscotch", view).problem
    assert stock == "No legal move from s: the stock's cards come out with 'deal'"
    # Without its hyphen an illegal move still goes to the server, like the full move.
    assert "w-f0" not in legal and resolve("wf0", legal, "hopscotch", view).move == "w-f0"
    doublets = engine.new_game("doublets", 1).view()
    assert resolve("w", legal_moves(doublets), "doublets", doublets).problem == (
        "No legal move from w: w is empty"
    )


def test_bakers_game_column_short_form() -> None:
    legal = legal_moves(engine.new_game("bakers_game", 1).view())
    # t1's top 9♣ may go to four free cells or onto t7's 10♣: several moves.
    assert resolve("t1", legal).move is None
    assert resolve("t1t7", legal).move == "t1-t7"


def test_nonsense_is_refused_with_an_example() -> None:
    problem = resolve("hello world", ["deal"]).problem or ""
    assert "not a move" in problem


def test_completions_filter_by_prefix() -> None:
    legal = legal_moves(QUATORZE_1)
    assert completions("c2-", legal) == ["c2-c4", "c2-c7"]
    assert completions("", legal) == legal


def test_known_winning_line_replays_to_a_win() -> None:
    from client_deals import QUATORZE_SEED, QUATORZE_WIN

    game = engine.replay("quatorze", QUATORZE_SEED, QUATORZE_WIN)
    assert game.won and game.score == 52 and game.moves == 26
