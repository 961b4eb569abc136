"""The public solver API: solve, solve_game, find_winnable_seed, best_move."""

from __future__ import annotations

import hashlib

import pytest

import engine
from engine.solve import best_move, find_winnable_seed, next_seed, solve, solve_game

MAX_SEED = 2**31 - 1


def test_solve_answers_a_replayable_win() -> None:
    # fc-solve -g ko_bakers_game: Microsoft deal 2 is winnable, deal 1 is not.
    won = solve("bakers_game", 2, budget_s=5.0)
    assert won.verdict == "won" and won.game_id == "bakers_game"
    assert won.moves == won.best_line and won.nodes > 0 and won.seconds >= 0
    assert engine.replay("bakers_game", 2, won.moves).won
    lost = solve("bakers_game", 1, budget_s=5.0)
    assert lost.verdict == "unwinnable" and lost.moves == []


def test_node_budget_is_honoured() -> None:
    # Deal 35 needs some 90,000 positions to be proven unwinnable.
    result = solve("bakers_game", 35, budget_nodes=500)
    assert result.verdict == "gave_up" and result.moves == []
    assert result.nodes <= 500
    # The line to the best position seen is still a line of legal moves.
    engine.replay("bakers_game", 35, result.best_line)


def test_zero_time_budget_gives_up() -> None:
    result = solve("hopscotch", 1, budget_s=0.0)
    assert result.verdict == "gave_up"


@pytest.mark.parametrize(("game_id", "seed"), [("bakers_game", 0), ("nope", 1)])
def test_bad_game_or_seed_is_a_value_error(game_id: str, seed: int) -> None:
    with pytest.raises(ValueError):
        solve(game_id, seed, budget_s=1.0)


def test_solve_game_from_a_position_in_progress_leaves_the_game_alone() -> None:
    line = solve("doublets", 2, budget_s=5.0).moves
    game = engine.replay("doublets", 2, line[:30])
    before = game.piles, game.moves
    result = solve_game(game, budget_s=5.0)
    assert (game.piles, game.moves) == before
    assert result.verdict == "won"
    for move in result.moves:
        game.play(move)
    assert game.won


def test_solve_game_on_a_won_game() -> None:
    line = solve("quatorze", 5, budget_s=5.0).moves
    result = solve_game(engine.replay("quatorze", 5, line), budget_s=1.0)
    assert (result.verdict, result.moves) == ("won", [])


def test_next_seed_wraps() -> None:
    assert next_seed(7) == 8
    assert next_seed(MAX_SEED) == 1


def test_find_winnable_seed_steps_to_the_first_winnable_deal() -> None:
    assert find_winnable_seed("bakers_game", 1, budget_s_each=5.0, max_tries=3)[0] == 2
    with pytest.raises(LookupError):
        find_winnable_seed("bakers_game", 1, budget_s_each=5.0, max_tries=1)


def test_find_winnable_seed_wraps_past_the_last_seed() -> None:
    seed, moves = find_winnable_seed("quatorze", MAX_SEED, budget_s_each=2.0, max_tries=2)
    assert seed in (MAX_SEED, 1)
    assert engine.replay("quatorze", seed, moves).won


@pytest.mark.parametrize("game_id", engine.GAMES)
@pytest.mark.parametrize("date", ["2026-11-29", "2027-02-14"])
def test_winnable_deal_for_a_date_replays_to_a_win(game_id: str, date: str) -> None:
    digest = hashlib.sha256(f"{game_id}:{date}".encode()).digest()
    first = int.from_bytes(digest[:4]) % MAX_SEED + 1
    seed, moves = find_winnable_seed(game_id, first, budget_s_each=2.0, max_tries=40)
    assert 0 <= (seed - first) % MAX_SEED < 40
    assert engine.replay(game_id, seed, moves).won


@pytest.mark.parametrize(("game_id", "seed"), [("bakers_game", 2), ("doublets", 3)])
def test_following_hints_wins(game_id: str, seed: int) -> None:
    game = engine.new_game(game_id, seed)
    played: list[str] = []
    for _ in range(400):
        if game.won:
            break
        hint = best_move(game, budget_s=2.0, moves_so_far=played)
        assert hint in game.legal_moves()
        game.play(hint)
        played.append(hint)
    assert game.won
    assert best_move(game, budget_s=1.0) is None


def test_hint_on_an_unwinnable_deal_is_a_legal_move() -> None:
    game = engine.new_game("bakers_game", 1)
    assert best_move(game, budget_s=2.0) in game.legal_moves()
