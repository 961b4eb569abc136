"""`--plain`: the front end for scripts and bots, one JSON object per line on stdout for
every message that matters and one command per line read from stdin."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from client_cli.game_kind import GameKind
from client_cli.game_phase import Phase
from client_cli.play import Play
from client_cli.terminal_input import stdin_lines


class PlainFront:
    """`--plain`: one JSON object per line on stdout for every message that matters."""

    def changed(self) -> None:
        pass

    def message(self, message: dict[str, Any]) -> None:
        if message.get("t") == "welcome":
            return
        out = {k: v for k, v in message.items() if k not in ("id", "re")}
        sys.stdout.write(json.dumps(out, default=str, ensure_ascii=False) + "\n")
        sys.stdout.flush()


async def plain_loop(play: Play) -> None:
    lines = stdin_lines()
    # A daily's rank ends the session; a race's result does not, so that a script may
    # ask for (or join) a rematch: it ends with the input, an empty line or `quit`.
    ends_when_over = play.session.kind is not GameKind.RACE
    leave = asyncio.create_task(play.leave.wait())
    over: asyncio.Task[bool] | None = None
    try:
        while True:
            nxt = asyncio.create_task(lines.get())
            over = asyncio.create_task(play.over.wait()) if ends_when_over else None
            waits = {nxt, leave} | ({over} if over else set())
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if over is not None:
                over.cancel()
            if not nxt.done():
                nxt.cancel()
                return
            line = nxt.result()
            if line is None:
                break
            play.submit(line.rstrip("\r\n"))
            await play.idle()
        # End of input: a finished game still waits for its race's result or its rank.
        if (
            play.session.phase in (Phase.FINISHED, Phase.RESULT, Phase.DONE)
            and play.session.kind is not GameKind.PRACTICE
        ):
            over = asyncio.create_task(play.over.wait())
            await asyncio.wait({over, leave}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if over is not None:
            over.cancel()
        leave.cancel()
