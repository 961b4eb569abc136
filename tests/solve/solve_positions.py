"""Small positions built from explicit piles, for checking verdicts by brute force."""

from __future__ import annotations

import random

import engine
from engine.game import Game
from engine.solve import solve

RANKS = "A23456789TJQK"
SUITS = "CDHS"


def quatorze_endgame(rng: random.Random) -> Game:
    """Four to six random pairs worth 14 laid out from c0, the stock gone."""
    pool = {v: [RANKS[v - 1] + s for s in SUITS] for v in range(1, 14)}
    for cards in pool.values():
        rng.shuffle(cards)
    layout: list[str] = []
    for _ in range(rng.randint(4, 6)):
        v = rng.randint(1, 13)
        if len(pool[v]) >= 2 and len(pool[14 - v]) >= 2:
            layout += [pool[v].pop(), pool[14 - v].pop()]
    rng.shuffle(layout)
    return engine.game_class("quatorze").from_piles(
        {f"c{i}": [card] for i, card in enumerate(layout)}
    )


def _late_position(game_id: str, seed: int, home: int) -> Game:
    """Deal `seed`, played along the solver's winning line until `home` cards are home."""
    line = solve(game_id, seed, budget_s=5.0).moves
    assert line, f"{game_id} {seed} is expected to be won"
    game = engine.new_game(game_id, seed)
    for move in line:
        if game.score >= home:
            break
        game.play(move)
    return game


def doublets_endgame(rng: random.Random, seed: int) -> Game:
    """A late Doublets position with its stock and waste reshuffled and random redeals left."""
    game = _late_position("doublets", seed, home=40)
    piles = game.piles
    face_down = piles["s"] + piles["w"]
    rng.shuffle(face_down)
    cut = rng.randint(0, len(face_down))
    piles["s"], piles["w"] = face_down[:cut], face_down[cut:]
    return engine.game_class("doublets").from_piles(piles, redeals_left=rng.choice([0, 0, 1]))


def hopscotch_endgame(rng: random.Random) -> Game:
    """Each foundation three cards short of its King; those twelve cards in play at random."""
    from engine.solve.hopscotch import wanted

    pool = {v: [RANKS[v - 1] + s for s in SUITS] for v in range(1, 14)}
    for v in range(1, 5):
        pool[v].remove(RANKS[v - 1] + "C")  # the starting cards
    piles: dict[str, list[str]] = {}
    rest: list[str] = []
    for i in range(4):
        step = i + 1
        values = [wanted(k, step) for k in range(1, 13)]  # the 2nd..13th cards
        short = rng.randint(3, 5)
        piles[f"f{i}"] = [RANKS[i] + "C"] + [pool[v].pop() for v in values[: 12 - short]]
        rest += [pool[v].pop() for v in values[12 - short :]]
    rng.shuffle(rest)
    for j in range(4):
        piles[f"r{j}"] = []
    for card in rest[: rng.randint(0, len(rest))]:
        piles[f"r{rng.randrange(4)}"].append(card)
    piles["s"] = rest[sum(len(piles[f"r{j}"]) for j in range(4)) :]
    return engine.game_class("hopscotch").from_piles(piles)
