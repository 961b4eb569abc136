"""The engine's public interface: RULES.md's last section plus the team's agreed extras."""

from __future__ import annotations

from typing import Any

import pytest
from engine_positions import position, refused

import engine
from engine.cards import NAMES

VISIBLE = {
    "doublets": {"w", "f", *(f"r{i}" for i in range(7))},
    "quatorze": {f"c{i}" for i in range(25)},
    "bakers_game": {
        "fC",
        "fD",
        "fH",
        "fS",
        *(f"r{i}" for i in range(4)),
        *(f"t{i}" for i in range(8)),
    },
    "hopscotch": {"w", "f0", "f1", "f2", "f3", "r0", "r1", "r2", "r3"},
}
HIDDEN = {"doublets": {"s"}, "quatorze": {"s"}, "bakers_game": set(), "hopscotch": {"s"}}


def test_games_and_max_scores() -> None:
    assert engine.GAMES == ("doublets", "quatorze", "bakers_game", "hopscotch")
    assert dict(engine.MAX_SCORE) == {
        "doublets": 48,
        "quatorze": 52,
        "bakers_game": 52,
        "hopscotch": 48,
    }
    assert issubclass(engine.IllegalMove, ValueError)


@pytest.mark.parametrize("game_id", engine.GAMES)
def test_a_new_game(game_id: str) -> None:
    game = engine.new_game(game_id, seed=7)
    assert game.game_id == game_id
    assert game.seed == 7
    assert game.moves == 0
    assert game.won is False and game.over is False
    assert isinstance(game.score, int)
    assert set(game.piles) == VISIBLE[game_id] | HIDDEN[game_id]
    assert sum(map(len, game.piles.values())) == 52


def plain(value: Any) -> bool:
    """Only dict (with str keys), list, str, int, bool and None."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(v) for v in value)
    return value is None or type(value) in (str, int, bool)


@pytest.mark.parametrize("game_id", engine.GAMES)
def test_the_view_has_the_agreed_shape(game_id: str) -> None:
    game = engine.new_game(game_id, 11)
    view = game.view()
    assert plain(view)
    expected_keys = ["game", "piles", "hidden", "score", "max_score", "moves", "won", "over"]
    if game_id == "doublets":
        expected_keys.append("redeals_left")
    assert list(view) == expected_keys
    assert view["game"] == game_id
    assert set(view["piles"]) == VISIBLE[game_id]
    assert set(view["hidden"]) == HIDDEN[game_id]
    assert view["max_score"] == engine.MAX_SCORE[game_id]
    for code in HIDDEN[game_id]:
        assert view["hidden"][code] == len(game.piles[code])
    for code in VISIBLE[game_id]:
        assert view["piles"][code] == game.piles[code]


def test_quatorze_cells_in_the_view_are_empty_or_one_card() -> None:
    view = engine.new_game("quatorze", 3).view()
    assert all(len(view["piles"][f"c{i}"]) == 1 for i in range(25))
    view = position("quatorze", c0="KS", c1="AS", c7="5D").view()
    assert view["piles"]["c0"] == ["KS"] and view["piles"]["c2"] == []


def test_the_view_is_a_snapshot() -> None:
    game = engine.new_game("hopscotch", 2)
    view = game.view()
    view["piles"]["f0"].append("KS")
    game.play("deal")
    assert game.piles["f0"] == ["AC"]
    assert view["piles"]["w"] == []


MALFORMED = [
    "DEAL",
    "Deal",
    " deal",
    "deal ",
    "t3-fH",
    "c03-c8",
    "t03-r0",
    "T3-R0",
    "t3 -r0",
    "t3--r0",
    "t3_r0",
    "t3-r0-t1",
    "t3-",
    "-t3",
    "",
    "t8-r0",
    "r4-t0",
    "c25-c3",
    "f4-r0",
    "r7-f",
    "w",
]


@pytest.mark.parametrize("game_id", engine.GAMES)
@pytest.mark.parametrize("move", MALFORMED)
def test_malformed_moves_are_refused_and_change_nothing(game_id: str, move: str) -> None:
    game = engine.new_game(game_id, 5)
    if game_id != "quatorze":
        game.play(game.legal_moves()[0])
    if move in game.legal_moves():  # e.g. "w" is a pile, never a move
        pytest.fail(f"{move!r} listed")
    reason = refused(game, move, engine.MalformedMove)
    assert reason.startswith(f"malformed move {move!r} (moves look like ")


def test_malformed_message_reads_well() -> None:
    game = engine.new_game("bakers_game", 1)
    assert refused(game, "DEAL", engine.MalformedMove) == (
        "malformed move 'DEAL' (moves look like 't3-r0', 'r1-t5', 't0-t4', 't2-f')"
    )


@pytest.mark.parametrize("move", [None, 5, b"deal", ["deal"], ("t1", "t7"), {"m": 1}, 1.5])
def test_a_non_string_move_is_malformed(move: object) -> None:
    game = engine.new_game("doublets", 5)
    assert refused(game, move, engine.MalformedMove) == (
        f"a move must be a string, not {type(move).__name__}"
    )


def test_a_str_subclass_is_accepted_like_its_text() -> None:
    class Move(str):
        pass

    game = engine.new_game("bakers_game", 1)
    game.play(Move("t1-t7"))
    assert game.moves == 1


def test_play_returns_none() -> None:
    game = engine.new_game("doublets", 1)
    assert game.play("deal") is None


def test_replay_reproduces_the_game() -> None:
    moves = ["t1-t7", "t6-t7", "t0-r0", "t0-r1"]
    game = engine.new_game("bakers_game", 1)
    for move in moves:
        game.play(move)
    replayed = engine.replay("bakers_game", 1, moves)
    assert replayed == game
    assert replayed.view() == game.view()
    assert replayed.moves == 4


def test_replay_stops_at_the_first_failing_move() -> None:
    with pytest.raises(
        engine.IllegalMove, match=r"^move 3 \('r1-t7'\): 8S does not go on TC$"
    ) as error:
        engine.replay("bakers_game", 1, ["t1-r0", "t1-r1", "r1-t7", "nonsense"])
    assert isinstance(error.value, ValueError)
    with pytest.raises(engine.MalformedMove, match=r"^move 1 \('DEAL'\): malformed move 'DEAL'"):
        engine.replay("doublets", 1, ["DEAL"])


def test_replay_rejects_unknown_games_and_bad_seeds() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        engine.replay("solitaire", 1, [])
    with pytest.raises(ValueError, match="out of range"):
        engine.replay("doublets", 0, [])


@pytest.mark.parametrize("game_id", engine.GAMES)
def test_copy_is_independent(game_id: str) -> None:
    game = engine.new_game(game_id, 9)
    twin = game.copy()
    assert twin == game and twin is not game
    twin.play(twin.legal_moves()[0])
    assert twin != game
    assert game.moves == 0
    assert game == engine.new_game(game_id, 9)
    assert twin.copy() == twin


def test_copy_keeps_doublets_redeals() -> None:
    game = position("doublets", f="AC", w="5S", redeals_left=1)
    twin = game.copy()
    twin.play("deal")
    assert twin.redeals_left == 0 and game.redeals_left == 1


@pytest.mark.parametrize("game_id", engine.GAMES)
def test_legal_moves_from_a_fresh_view(game_id: str) -> None:
    game = engine.new_game(game_id, 4)
    assert sorted(engine.legal_moves_from_view(game.view())) == sorted(game.legal_moves())


def test_legal_moves_from_view_uses_the_redeals_left() -> None:
    # A view accounts for the whole deck: the cards not in play here sit under AC.
    rest = " ".join(c for c in NAMES if c not in ("AC", "5S"))
    game = position("doublets", f=f"{rest} AC", w="5S", redeals_left=0)
    assert engine.legal_moves_from_view(game.view()) == []
    game = position("doublets", f=f"{rest} AC", w="5S", redeals_left=1)
    assert engine.legal_moves_from_view(game.view()) == ["deal"]


def test_legal_moves_from_view_refuses_a_broken_view() -> None:
    view = engine.new_game("doublets", 1).view()
    with pytest.raises(ValueError, match="unknown game"):
        engine.legal_moves_from_view({**view, "game": "klondike"})
    with pytest.raises(ValueError, match="hides 45 cards but leaves 44 unaccounted for"):
        engine.legal_moves_from_view({**view, "hidden": {"s": 45}})
    with pytest.raises(ValueError, match="hides 43 cards but leaves 44 unaccounted for"):
        engine.legal_moves_from_view({**view, "hidden": {"s": 43}})
    with pytest.raises(ValueError, match="must be counts"):
        engine.legal_moves_from_view({**view, "hidden": {"s": -1}})
    with pytest.raises(ValueError, match="not a card"):
        engine.legal_moves_from_view({**view, "piles": {**view["piles"], "w": ["XX"]}})
    with pytest.raises(ValueError, match="appears twice"):
        engine.legal_moves_from_view(
            {**view, "piles": {**view["piles"], "w": [view["piles"]["r0"][0]]}}
        )


def test_render_text_shows_the_board() -> None:
    text = engine.render_text(engine.new_game("bakers_game", 1).view())
    lines = text.splitlines()
    assert lines[0] == "Baker's Game  score 0/52  moves 0"
    assert "t0: JD KD 2S 4C 3S 6D 6S" in lines
    assert "r0: --   r1: --   r2: --   r3: --" in lines


def test_render_text_of_each_game_hides_the_stock() -> None:
    for game_id in engine.GAMES:
        game = engine.new_game(game_id, 1)
        text = engine.render_text(game.view())
        stock = game.piles.get("s", [])
        if stock:
            assert f"s: {len(stock)} face down" in text
            # The stock's top card is not on the board (it is nowhere else either).
            assert stock[-1] not in text


def test_render_text_of_quatorze_is_a_grid_and_of_doublets_shows_redeals() -> None:
    text = engine.render_text(engine.new_game("quatorze", 1).view())
    assert "c0  JD  c1  2D  c2  9H  c3  JC  c4  5D" in text.splitlines()
    text = engine.render_text(engine.new_game("doublets", 1).view())
    assert text.splitlines()[0] == "Doublets  score 1/48  moves 0  redeals left 2"


def test_render_text_marks_a_won_game() -> None:
    game = position("quatorze", c0="KS", c1="AS")
    game.play("c0-c1")
    assert engine.render_text(game.view()).splitlines()[0].endswith("WON")


def test_from_piles_checks_the_position() -> None:
    bakers = engine.game_class("bakers_game")
    with pytest.raises(ValueError, match="has no pile 'x9'"):
        bakers.from_piles({"x9": []})
    with pytest.raises(ValueError, match="appears twice"):
        bakers.from_piles({"t0": ["AS"], "t1": ["AS"]})
    with pytest.raises(ValueError, match="more than one card"):
        bakers.from_piles({"r0": ["2S", "3S"]})
    with pytest.raises(ValueError, match="from the Ace"):
        bakers.from_piles({"fH": ["2H"]})
    with pytest.raises(ValueError, match="AC appears twice"):
        position("hopscotch", f0="AC", f1="2C", f2="3C", f3="4C", r0="AC")
    with pytest.raises(ValueError, match="needs its base card"):
        position("doublets", r0="5S")
    with pytest.raises(ValueError, match="moves must be a count"):
        position("quatorze", moves=-1)
    with pytest.raises(TypeError, match="no counter"):
        position("quatorze", redeals_left=1)
