"""What a running race's spectators may see of its seats' boards.

Every seat plays the same deal, so a card face up in one seat's game is, in another's, the
same card in the same place of the deal, maybe still face down there. A spectator (a
`watch` connection, the race's page), who may be a seat itself or hear from one, is
therefore shown a card face up only once every seat still playing has seen it in its own
game; any other card is taken out of its pile and counted face down there (`hidden`, as
for a face-down pile). Once the race is over, boards are shown in full.

Pure: fed each seat's cards never shown (engine.Game.unseen()) and whether it still
plays, it says which cards to hide and hides them from a board. A seat's set of cards
never shown only shrinks and a seat only stops playing, so what is noted is merged as an
intersection: news that arrive late or out of order can only hide more, never less.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

import protocol as p
from engine.cards import CARD_IDS
from server.store.events import SeatSeen

EVERY_CARD = (1 << 52) - 1
_BIT = tuple(1 << c for c in range(52))


@dataclass(slots=True)
class Sight:
    """What one seat has seen: the cards its game has never shown, and whether it plays."""

    unseen: int
    playing: bool


class SpectatorBoards:
    """One race's seats as its spectators' boards depend on them."""

    def __init__(self) -> None:
        self._seats: dict[str, Sight] = {}

    def seats(self, players: list[str]) -> None:
        """The race's seats are now `players`: one never heard of has seen nothing yet."""
        self._seats = {pl: self._seats.get(pl) or Sight(EVERY_CARD, True) for pl in players}

    def note(self, player: str, cards: bytes, playing: bool) -> None:
        """What `player`'s game now says: the cards it has never shown (engine.Game.unseen())
        and whether it plays (merged with what was noted before)."""
        unseen = sum(map(_BIT.__getitem__, set(cards)))
        sight = self._seats.get(player)
        if sight is None:
            self._seats[player] = Sight(unseen, playing)
            return
        sight.unseen &= unseen
        sight.playing = sight.playing and playing

    def hidden(self) -> int:
        """The cards no spectator may see now: those some seat still playing has not."""
        mask = 0
        for sight in self._seats.values():
            if sight.playing:
                mask |= sight.unseen
        return mask

    def boards(self, race: str, seen: list[SeatSeen]) -> list[p.SeatBoard]:
        """Seats' boards for the spectators, once what they say of their seats is noted."""
        for s in seen:
            self.note(s.player, s.unseen, not s.finished)
        hidden = self.hidden()
        return [
            p.SeatBoard(
                race=race,
                player=s.player,
                n=s.n,
                view=hide_raw(s.view, hidden),
                score=s.score,
                won=s.won,
                over=s.over,
                finished=s.finished,
                elapsed_ms=s.elapsed_ms,
            )
            for s in seen
        ]


def hide(view: dict[str, Any], cards: int) -> dict[str, Any]:
    """A public view with the cards of the bit set `cards` taken out of its visible piles
    and counted face down in them (`hidden[pile]`); `view` itself is left as it was."""
    if not cards:
        return view
    piles: dict[str, list[str]] = {}
    hidden: dict[str, int] = dict(view["hidden"])
    for code, pile in view["piles"].items():
        kept = [c for c in pile if not cards >> CARD_IDS[c] & 1]
        piles[code] = kept
        if len(kept) != len(pile):
            hidden[code] = hidden.get(code, 0) + len(pile) - len(kept)
    return {**view, "piles": piles, "hidden": hidden}


def hide_raw(view: msgspec.Raw, cards: int) -> msgspec.Raw:
    """`hide` on a view as encoded; the same bytes when nothing is hidden from it."""
    if not cards:
        return view
    decoded = msgspec.msgpack.decode(view)
    shown = hide(decoded, cards)
    if shown["hidden"] == decoded["hidden"]:
        return view
    return msgspec.Raw(p.encode_value(shown))
