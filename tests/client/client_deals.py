"""Known deals for the end-to-end tests."""

from __future__ import annotations

# Quatorze deal 1 is won by these 26 pair removals (found by a depth-first search
# with the engine; test_known_winning_line_replays_to_a_win checks it still wins).
QUATORZE_SEED = 1
QUATORZE_WIN = [
    "c0-c15", "c0-c2", "c0-c1", "c3-c23", "c5-c6", "c5-c6", "c10-c11", "c10-c13", "c12-c14",
    "c12-c13", "c13-c14", "c11-c13", "c1-c11", "c1-c4", "c2-c4", "c0-c5", "c0-c2", "c0-c3",
    "c2-c3", "c1-c11", "c1-c2", "c0-c4", "c1-c3", "c0-c5", "c0-c2", "c0-c1",
]  # fmt: skip
