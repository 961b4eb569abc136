"""`solitaire replay ID|RACE:SEAT`: play back a finished game, move by move."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from typing import Any

import protocol as p
from client_cli.boards import game_title, render_text
from client_cli.commands import Subcommands, add_command
from client_cli.commands.context import UsageError, build_context
from client_cli.context import EXCHANGE_FAILURES, Context
from client_cli.game_kind import GameKind
from client_cli.game_session import clock
from client_cli.messages import ProtocolError, as_plain, expect
from client_cli.replay_refs import BadReference, parse_ref, web_page
from client_cli.replayer import DEFAULT_SPEED, SPEEDS, Replayer, Stepper, outcome, whose
from client_cli.words import count

KEYS_HELP = (
    "Keys: Right and Left (or l and h) step one move, Home and End jump to the deal and to "
    "the last position, Space plays the moves by themselves (again: pause), + and - change "
    "the speed, q leaves.\n\n"
    "With --plain: one JSON line with the replay (the deal's seed, every move, the result), "
    "then a `position` line (n, the move, the engine's public view); each line on stdin "
    "moves and prints the position: next (or an empty line), back, start, end, or a number "
    "of moves. Without a terminal (and without --plain) the game and its board at --at are "
    "printed."
)


def register(subparsers: Subcommands) -> None:
    parser = add_command(
        subparsers,
        "replay",
        help="play back a finished game move by move",
        description="Play back a finished game on the board: a race seat once its race is "
        "over (RACE:SEAT, SEAT being its line in the race's standings: 1 is the winner's), a "
        "daily attempt once its day is over, or one of your own practice games once finished. "
        "ID is the game's id, as the web page's address has it (the address itself works "
        "too). The server sends the deal and the moves; this program replays them with the "
        "rules engine.\n\n" + KEYS_HELP,
        epilog="examples:\n  solitaire replay 7K3M2P:1\n"
        "  solitaire replay 7K3M2P:2 --autoplay --speed 8\n"
        "  solitaire replay d.2026-11-28.quatorze.5f0c9a1e2b3d4c6f --at end",
    )
    parser.add_argument("ref", metavar="ID|RACE:SEAT", help="the game's id, or race code and seat")
    parser.add_argument("--at", type=_at, default=None, metavar="N|end",
                        help="start after N moves, or at the end (default: the deal; "
                        "printed without a terminal: the end)")  # fmt: skip
    parser.add_argument("--autoplay", action="store_true", help="start playing at once")
    parser.add_argument("--speed", type=_speed, default=DEFAULT_SPEED, metavar="MOVES",
                        help=f"autoplay speed, {SPEEDS[0]:g} to {SPEEDS[-1]:g} moves a second "
                        f"(default {DEFAULT_SPEED:g}; + and - change it)")  # fmt: skip
    parser.set_defaults(func=run)


def _at(text: str) -> int | str:
    if text == "end":
        return text
    if not text.isdecimal():
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of moves or 'end'")
    return int(text)


def _speed(text: str) -> float:
    try:
        speed = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of moves a second") from None
    if not SPEEDS[0] <= speed <= SPEEDS[-1]:
        lo, hi = SPEEDS[0], SPEEDS[-1]
        raise argparse.ArgumentTypeError(f"a speed is {lo:g} to {hi:g} moves a second")
    return speed


def run(args: argparse.Namespace) -> int:
    try:
        request = parse_ref(args.ref)
    except BadReference as exc:
        raise UsageError(str(exc)) from None
    ctx = build_context(args)
    replay = asyncio.run(fetch(ctx, request))
    if replay is None:
        return 1
    replayer = Replayer(replay)
    if not replayer.ends_as_stored():
        print("solitaire: warning: the moves do not end as the server's result says",
              file=sys.stderr)  # fmt: skip
    terminal = sys.stdin.isatty() and sys.stdout.isatty()
    at = args.at if args.at is not None else (0 if ctx.plain or terminal else "end")
    stepper = Stepper(replay.n, replay.n if at == "end" else min(int(at), replay.n))
    stepper.speed = args.speed
    if ctx.plain:
        return plain(replayer, stepper)
    if not terminal:
        print(as_text(replayer, stepper.n, ctx))
        return 0
    from client_cli.replay_screen import ReplayScreen  # only the screen needs prompt_toolkit

    if args.autoplay:
        stepper.toggle()
    asyncio.run(ReplayScreen(replayer, stepper, ctx.theme).run())
    print(summary(replay, ctx))
    return 0


async def fetch(ctx: Context, request: p.Replay) -> p.ReplayReply | None:
    """The whole replay (every page of its moves), or None after saying why there is none."""
    conn = ctx.connection(lambda text: print(text, file=sys.stderr))
    try:
        await conn.open()
        ctx.opened()
        first = expect(await conn.request(request), p.ReplayReply)
        moves = list(first.moves)
        while len(moves) < first.n:
            # The next pages by gid: the same game, whatever named it first.
            page_request = p.Replay(gid=first.gid, start=len(moves))
            page = expect(await conn.request(page_request), p.ReplayReply)
            if not page.moves:
                raise ProtocolError(f"the server sent {len(moves)} of {first.n} moves")
            moves += page.moves
        first.moves, first.start = moves, 0
        return first
    except EXCHANGE_FAILURES as exc:
        print(f"solitaire: {ctx.failure(exc)}", file=sys.stderr)
    finally:
        await conn.close()
    return None


def ended(replay: p.ReplayReply) -> str:
    r = replay.result
    place = f", #{r.rank} of {r.of}" if r.rank is not None else ""
    moves = count(r.moves, "move")
    return f"{outcome(r)}, score {r.score}/{r.max_score}, {moves}, {clock(r.time_ms)}{place}"


def web_line(replay: p.ReplayReply, ctx: Context) -> str:
    """Where the replay is on the web (a practice game is not: nobody is known there)."""
    if replay.kind == GameKind.PRACTICE:
        return ""
    return f"On the web: {web_page(ctx.server, replay.gid)}"


def summary(replay: p.ReplayReply, ctx: Context) -> str:
    lines = [f"Replay of {whose(replay)} ({game_title(replay.game)}): {ended(replay)}."]
    return "\n".join(filter(None, [*lines, web_line(replay, ctx)]))


def as_text(replayer: Replayer, n: int, ctx: Context) -> str:
    """The replay without a screen: the game, its moves, and the board after `n` of them."""
    replay = replayer.replay
    numbered = "  ".join(f"{i}. {m}" for i, m in enumerate(replay.moves, 1)) or "(none)"
    where = f"After move {n} of {replay.n} ({replay.moves[n - 1]}):" if n else "The deal:"
    parts = [
        f"{game_title(replay.game)} replay: {whose(replay)}, deal {replay.seed}",
        f"Ended: {ended(replay)}",
        textwrap.fill(f"Moves: {numbered}", 78, subsequent_indent="  "),
        "",
        where,
        render_text(replayer.view_at(n), ascii_only=not ctx.theme.unicode),
    ]
    web = web_line(replay, ctx)
    return "\n".join([*parts, *(["", web] if web else [])])


def plain(replayer: Replayer, stepper: Stepper) -> int:
    """--plain: the replay and a position as JSON lines; stdin lines move through it."""
    replay = replayer.replay
    _line({k: v for k, v in as_plain(replay).items() if k not in ("re", "start")})
    _line(position(replayer, stepper.n))
    for raw in sys.stdin:
        word = raw.strip().lower()
        if word in ("quit", "q", "exit"):
            break
        if word in ("", "next", "n"):
            stepper.forward()
        elif word in ("back", "p"):
            stepper.back()
        elif word in ("start", "0"):
            stepper.go(0)
        elif word == "end":
            stepper.go(replay.n)
        elif word.isdecimal():
            stepper.go(int(word))
        else:
            _line({"t": "notice", "msg": f"not a step: {raw.strip()!r}", "input": raw.strip()})
            continue
        _line(position(replayer, stepper.n))
    return 0


def position(replayer: Replayer, n: int) -> dict[str, Any]:
    game = replayer.game_at(n)
    return {
        "t": "position",
        "n": n,
        "move": replayer.replay.moves[n - 1] if n else None,
        "score": game.score,
        "view": game.view(),
    }


def _line(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()
