"""How a person names a replay (a game id, RACE:SEAT, a page's address) and where the
server shows it on the web."""

from __future__ import annotations

from urllib.parse import quote, unquote, urlsplit

import protocol as p


class BadReference(ValueError):
    """A replay named in a way that cannot name one."""


def parse_ref(text: str) -> p.Replay:
    """The request for a replay as a person names it: a game id (`r.CODE.PLAYER`,
    `d.DATE.GAME.PLAYER`, `p.GAME.NONCE.PLAYER`), `RACE:SEAT` (the seat's line in the
    race's standings), or the address of its web page."""
    text = text.strip()
    if "/replay/" in text:
        text = unquote(urlsplit(text).path.rsplit("/replay/", 1)[1]).removesuffix(".json")
    race, colon, seat = text.partition(":")
    if colon:
        if not seat.isdecimal() or int(seat) < 1:
            raise BadReference(f"{text!r}: SEAT in RACE:SEAT is a line of the standings, from 1")
        if not race:
            raise BadReference(f"{text!r}: RACE:SEAT needs the race's code")
        return p.Replay(race=race, seat=int(seat))
    if not text:
        raise BadReference("name a game: its id, or RACE:SEAT")
    return p.Replay(gid=text)


def web_base(server: str) -> str:
    """The server's HTTP address from its WebSocket URL: ws://host:8765/ws -> http://host:8765."""
    scheme, rest = server.split("://", 1) if "://" in server else ("ws", server)
    rest = rest.removesuffix("/ws")
    return f"{'https' if scheme == 'wss' else 'http'}://{rest.rstrip('/')}"


def web_page(server: str, ident: str) -> str:
    return f"{web_base(server)}/replay/{quote(ident, safe=':')}"
