"""Races with bot seats that have just started: from the races, which start them, to the
bot runner, which drives them. Neither holds the other (the bot runner plays through the
moves, which close races through the races), so the app makes this first and gives it to
both."""

from __future__ import annotations

import asyncio


class StartedBotRaces:
    """A mailbox of race codes. The store's bot-race index is the durable record (any
    instance takes over a race whose driver died); this only saves the wait for the bot
    runner's next scan of it."""

    def __init__(self) -> None:
        self._codes: asyncio.Queue[str] = asyncio.Queue()

    def started(self, code: str) -> None:
        self._codes.put_nowait(code)

    async def next(self) -> str:
        return await self._codes.get()
