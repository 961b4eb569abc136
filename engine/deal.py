"""The Microsoft FreeCell shuffle: (deck, seed) -> the order the cards are dealt in."""

from __future__ import annotations

from collections.abc import Sequence

MIN_SEED = 1
MAX_SEED = 2**31 - 1


def check_seed(seed: object) -> int:
    """The seed itself if it is an int in 1..2^31-1; a ValueError saying why not otherwise."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"a seed must be an integer, not {type(seed).__name__}")
    if not MIN_SEED <= seed <= MAX_SEED:
        raise ValueError(f"seed {seed} is out of range: seeds run from {MIN_SEED} to {MAX_SEED}")
    return seed


def deal_order(deck: Sequence[int], seed: int) -> list[int]:
    """The cards of ``deck`` (canonical order) in the order they are dealt.

    Microsoft C's rand(): state = state * 214013 + 2531011 mod 2^31, and the
    15-bit result is state >> 16. Each step picks a card, swaps it with the
    last one and deals it, which is what makes Baker's Game deal N equal to
    Microsoft FreeCell deal N.
    """
    check_seed(seed)
    cards = list(deck)
    order = []
    state = seed
    while cards:
        state = (state * 214013 + 2531011) & 0x7FFFFFFF
        j = (state >> 16) % len(cards)
        cards[j], cards[-1] = cards[-1], cards[j]
        order.append(cards.pop())
    return order
