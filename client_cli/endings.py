"""How each seat's game ended, in the standings' words: won, resigned, stuck (no move
left; docs/client.md) or time up."""

from __future__ import annotations

from collections.abc import Collection

from protocol import Result


def finish_notes(result: Result, over: Collection[str], limit_ms: int | None) -> dict[str, str]:
    """Player -> note. A seat neither won nor resigned is stuck if its `progress` said so
    (`over`: those players), or if it stopped before the time limit (`limit_ms`); if
    neither is known (a finished race joined later, whose time limit the client never
    heard), it just ended."""
    notes: dict[str, str] = {}
    for s in result.standings:
        if s.won:
            notes[s.player] = "won"
        elif s.resigned:
            notes[s.player] = "resigned"
        elif s.player in over:
            notes[s.player] = "stuck"
        elif limit_ms is not None:
            notes[s.player] = "time up" if s.time_ms >= limit_ms else "stuck"
        else:
            notes[s.player] = "ended"
    return notes
