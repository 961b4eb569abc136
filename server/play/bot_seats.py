"""Who the bots are: their player ids and names (a human's id never starts like a bot's)."""

from __future__ import annotations

import secrets

import protocol as p

BOT_PREFIX = "bot-"
BOT_SUFFIX = " (bot)"
BOT_NAMES = (
    "Ada", "Bram", "Cleo", "Dov", "Edda", "Finn", "Gus", "Hana",
    "Ivo", "Juno", "Kai", "Lea", "Milo", "Nell", "Otto", "Pia",
)  # fmt: skip


def is_bot(player: str) -> bool:
    return player.startswith(BOT_PREFIX)


def bot_seat(i: int) -> p.Seat:
    """A new bot player for the `i`-th bot seat of a race."""
    return p.Seat(
        player=BOT_PREFIX + secrets.token_hex(6), name=BOT_NAMES[i % len(BOT_NAMES)] + BOT_SUFFIX
    )
