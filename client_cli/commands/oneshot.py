"""One request, one answer: what `leaderboard` and `stats` share."""

from __future__ import annotations

import json
import sys
from typing import TypeVar

import msgspec

import protocol as p
from client_cli.context import EXCHANGE_FAILURES, Context
from client_cli.messages import as_plain, expect

M = TypeVar("M", bound=p.Message)


async def ask(ctx: Context, request: p.Request, kind: type[M]) -> tuple[M | None, str]:
    """(reply, player id), or (None, "") after printing why there is none."""

    def on_status(text: str) -> None:
        print(text, file=sys.stderr)

    conn = ctx.connection(on_status)
    try:
        welcome = await conn.open()
        ctx.opened()
        return expect(await conn.request(request), kind), welcome.player
    except EXCHANGE_FAILURES as exc:
        print(f"solitaire: {ctx.failure(exc)}", file=sys.stderr)
    finally:
        await conn.close()
    return None, ""


def print_json(message: msgspec.Struct) -> None:
    out = {k: v for k, v in as_plain(message).items() if k not in ("id", "re")}
    print(json.dumps(out, default=str, ensure_ascii=False))
