"""Replaying a finished game on this side: the positions, and where one is in them.

No I/O here. `Replayer` holds a `replay` message (its moves all fetched) and gives the
position after any number of moves, replayed by the engine from the deal (a copy of every
CHECKPOINT-th position is kept, so any step costs at most that many moves); `Stepper` is
where the viewer stands (the move, autoplay and its speed), which the screen and the plain
mode drive alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import engine
import protocol as p
from client_cli.game_kind import GameKind

CHECKPOINT = 256
SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)  # autoplay, in moves per second
DEFAULT_SPEED = 2.0


class Replayer:
    """The positions of one finished game, replayed by the engine from its deal."""

    def __init__(self, replay: p.ReplayReply) -> None:
        if len(replay.moves) != replay.n:
            raise ValueError(f"{len(replay.moves)} of the game's {replay.n} moves")
        self.replay = replay
        game = engine.new_game(replay.game, replay.seed)
        self._checkpoints = [game.copy()]
        for i, move in enumerate(replay.moves, 1):
            game.play(move)
            if i % CHECKPOINT == 0:
                self._checkpoints.append(game.copy())
        self.final = game
        self._at: tuple[int, engine.Game] = (replay.n, game.copy())

    @property
    def n(self) -> int:
        return self.replay.n

    def game_at(self, n: int) -> engine.Game:
        """The engine's game after the first `n` moves (0: the deal)."""
        n = max(0, min(n, self.n))
        at, game = self._at
        if not at <= n < at + CHECKPOINT:
            game = self._checkpoints[n // CHECKPOINT].copy()
            at = n // CHECKPOINT * CHECKPOINT
        for move in self.replay.moves[at:n]:
            game.play(move)
        self._at = (n, game)
        return game

    def view_at(self, n: int) -> dict[str, Any]:
        return self.game_at(n).view()

    def ends_as_stored(self) -> bool:
        """The replay's last position is the stored result's (as the server must ensure)."""
        r, g = self.replay.result, self.final
        return (g.score, g.moves, g.won, g.over) == (r.score, r.moves, r.won, r.over)


@dataclass
class Stepper:
    """Where the viewer stands in a replay of `last` moves, and whether it plays by itself."""

    last: int
    n: int = 0
    playing: bool = False
    speed: float = DEFAULT_SPEED
    _speeds: tuple[float, ...] = field(default=SPEEDS, repr=False)

    def go(self, n: int) -> None:
        self.n = max(0, min(n, self.last))
        if self.n == self.last:
            self.playing = False

    def forward(self) -> None:
        self.go(self.n + 1)

    def back(self) -> None:
        self.playing = False
        self.go(self.n - 1)

    def toggle(self) -> None:
        """Autoplay on or off; at the end, on starts again from the deal."""
        if not self.playing and self.n == self.last:
            self.n = 0
        self.playing = not self.playing and self.last > 0

    def faster(self) -> None:
        self.speed = next((s for s in self._speeds if s > self.speed), self._speeds[-1])

    def slower(self) -> None:
        self.speed = next((s for s in reversed(self._speeds) if s < self.speed), self._speeds[0])


def outcome(result: p.ReplayResult) -> str:
    if result.won:
        return "won"
    if result.resigned:
        return "resigned"
    if result.timed_out:
        return "out of time"
    return "no moves left" if result.over else "finished"


def whose(replay: p.ReplayReply) -> str:
    """Whose game it is, in a few words: `alice in race 7K3M2P`."""
    if replay.kind == GameKind.RACE and replay.race:
        return f"{replay.name} in race {replay.race}"
    if replay.kind == GameKind.DAILY and replay.date:
        return f"{replay.name}'s daily of {replay.date}"
    return f"{replay.name}'s practice game"
