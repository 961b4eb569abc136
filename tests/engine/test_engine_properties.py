"""Property tests: random seeds and random legal playouts keep every invariant of the issue.

At every step of a playout: every card exists exactly once (Quatorze's removed pairs
leave play, two per point of score); every listed move plays and every other well-formed
move is refused and changes nothing; over holds exactly when no legal move is left; a won
game has the maximum score; the view shows no card of a hidden pile; the legal moves
computed from the view alone equal the game's own. At the end, replaying the move list
reproduces the game.
"""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.cards import NAMES
from engine.game import Game

MAX_STEPS = 150  # Baker's Game can shuffle a King between empty columns for ever
SEEDS = st.integers(min_value=1, max_value=2**31 - 1)
EVERY_CARD = sorted(NAMES)


def well_formed_moves(game: Game) -> list[str]:
    """Every move string of the game's notation: SRC-DST over its move codes, and `deal`
    in the two games that have one (RULES.md: Doublets and Hopscotch turn a stock)."""
    codes = list(game.MOVE_CODES)
    deal = ["deal"] if game.game_id in ("doublets", "hopscotch") else []
    return [*deal, *(f"{a}-{b}" for a in codes for b in codes)]


def canonical(game_id: str, move: str) -> str:
    """RULES.md's one alternative spelling: Quatorze's cB-cA means cA-cB (A < B)."""
    match = re.fullmatch(r"c(\d+)-c(\d+)", move)
    if game_id == "quatorze" and match and int(match[1]) > int(match[2]):
        return f"c{match[2]}-c{match[1]}"
    return move


def check_cards(game: Game) -> None:
    cards = [card for pile in game.piles.values() for card in pile]
    if game.game_id == "quatorze":
        assert len(cards) == len(set(cards)) == 52 - game.score
    else:
        assert sorted(cards) == EVERY_CARD


def check_view(game: Game, legal: list[str]) -> None:
    view = game.view()
    hidden_codes = set(view["hidden"])
    hidden_cards = {card for code in hidden_codes for card in game.piles[code]}
    shown_cards = {card for pile in view["piles"].values() for card in pile}
    assert not shown_cards & hidden_cards
    assert not hidden_codes & set(view["piles"])
    assert all(view["hidden"][code] == len(game.piles[code]) for code in hidden_codes)
    assert sorted(engine.legal_moves_from_view(view)) == sorted(legal)
    assert engine.game_class(game.game_id).from_view(view).view() == view


def check_moves(game: Game, legal: list[str]) -> None:
    assert len(set(legal)) == len(legal)
    assert all(canonical(game.game_id, m) == m for m in legal)
    legal_set = set(legal)
    for move in well_formed_moves(game):
        twin = game.copy()
        if canonical(game.game_id, move) in legal_set:
            twin.play(move)
            assert twin.moves == game.moves + 1
        else:
            before = twin.view()
            with pytest.raises(engine.MoveError) as refusal:
                twin.play(move)
            assert type(refusal.value) is engine.IllegalMove
            assert twin == game
            assert twin.view() == before


def check_end(game: Game, legal: list[str]) -> None:
    assert game.over == (not legal)
    if game.won:
        assert game.over
        assert game.score == game.MAX_SCORE == engine.MAX_SCORE[game.game_id]
    assert 0 <= game.score <= game.MAX_SCORE


@pytest.mark.parametrize("game_id", engine.GAMES)
@settings(max_examples=25, deadline=None)
@given(seed=SEEDS, choices=st.randoms(use_true_random=False), thrifty=st.booleans())
def test_random_playouts_keep_every_invariant(
    game_id: str, seed: int, choices: random.Random, thrifty: bool
) -> None:
    """A thrifty player avoids parking cards in reserves when it can, which takes Baker's
    Game and Hopscotch further (builds, emptied columns, long reserves)."""
    game = engine.new_game(game_id, seed)
    played = []
    for _ in range(MAX_STEPS):
        legal = game.legal_moves()
        check_cards(game)
        check_end(game, legal)
        check_view(game, legal)
        check_moves(game, legal)
        if not legal:
            break
        keep = [m for m in legal if not re.search(r"-r\d$", m)] if thrifty else legal
        move = choices.choice(keep or legal)
        game.play(move)
        played.append(move)
        assert game.moves == len(played)
    replayed = engine.replay(game_id, seed, played)
    assert replayed == game
    assert replayed.view() == game.view()


@pytest.mark.parametrize("game_id", engine.GAMES)
@settings(max_examples=60, deadline=None)
@given(seed=SEEDS, choices=st.randoms(use_true_random=False), junk=st.text(max_size=8))
def test_playouts_refuse_junk_and_stay_consistent(
    game_id: str, seed: int, choices: random.Random, junk: str
) -> None:
    """Longer, cheaper playouts: arbitrary text is refused unless it is a legal move, as
    malformed unless it is in the game's notation."""
    game = engine.new_game(game_id, seed)
    well_formed = set(well_formed_moves(game))
    played = []
    while not game.over and len(played) < 400:
        legal = game.legal_moves()
        assert legal
        if canonical(game_id, junk) not in legal:
            before = game.copy()
            kind = engine.IllegalMove if junk in well_formed else engine.MalformedMove
            with pytest.raises(engine.MoveError) as refusal:
                game.play(junk)
            assert type(refusal.value) is kind
            assert game == before
        move = choices.choice(legal)
        game.play(move)
        played.append(move)
    check_cards(game)
    check_end(game, game.legal_moves())
    assert engine.replay(game_id, seed, played) == game


@settings(max_examples=200, deadline=None)
@given(game_id=st.sampled_from(engine.GAMES), seed=SEEDS)
def test_every_deal_is_a_whole_deck(game_id: str, seed: int) -> None:
    game = engine.new_game(game_id, seed)
    check_cards(game)
    assert game.score == engine.new_game(game_id, seed).score
    assert game.moves == 0
    assert not game.won
