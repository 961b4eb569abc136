"""How a command reports a failure: a server's refusal said in words, and an error line
on stderr with the exit status."""

from __future__ import annotations

import re
import sys

from client_cli.messages import ServerError

# Request fields as the command line names them, for the server's validation texts.
FIELD_WORDS = {
    "time_limit_s": "the time limit (--time-limit, in seconds)",
    "max_players": "the number of players (--max-players)",
    "seed": "the deal number (--seed)",
    "bots": "the number of bots (--bots)",
    "name": "your name (--name)",
}
BOUND = re.compile(r"Expected `(\w+)` (>=|<=|>|<) (-?\d+) - at `\$\.(\w+)`")
BOUND_WORDS = {">=": "at least", "<=": "at most", ">": "more than", "<": "less than"}


def in_words(exc: ServerError) -> str:
    """A refusal for a person: the server's validation text ("Expected `int` >= 30 - at
    `$.time_limit_s`") said in words; any other reason as the server gave it."""
    match = BOUND.search(exc.msg) if exc.code == "bad_request" else None
    if match is None:
        return f"{exc.msg} ({exc.code})"
    _kind, op, bound, name = match.groups()
    what = FIELD_WORDS.get(name, name.replace("_", " "))
    return f"the server refused: {what} must be {BOUND_WORDS[op]} {bound}"


def fail(message: str) -> int:
    print(f"solitaire: {message}", file=sys.stderr)
    return 1
