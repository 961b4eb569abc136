"""Counted nouns in the client's texts: "1 move", "2 moves"."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
