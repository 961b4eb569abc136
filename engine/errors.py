"""The engine's one exception type."""

from __future__ import annotations


class IllegalMove(ValueError):
    """A move that is malformed or breaks a rule; the game it was offered to is unchanged."""
