"""Race links: what a host pastes to friends, and what `solitaire race join` makes of it.

A race's link is the server's public address (the `url` of its `welcome`, else the address
this client reached it at) with `/r/CODE`: `https://play.example.org/r/7K3M2PQX9ABC`. A
browser opens it in the web client; `solitaire race join LINK` takes both the server
(`wss://play.example.org/ws`) and the race code from it.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


class BadLink(ValueError):
    pass


@dataclass(frozen=True)
class RaceLink:
    server: str  # the WebSocket URL, ws(s)://HOST[:PORT][/PREFIX]/ws
    code: str  # as written in the link (the caller checks and upper-cases it)


def is_link(text: str) -> bool:
    return "://" in text or "/r/" in text


def parse(text: str) -> RaceLink:
    """The server and race code of a race link; BadLink if it is not one."""
    text = text.strip()
    if "://" not in text:
        text = "http://" + text  # host:port/r/CODE, as pasted without its scheme
    parts = urlsplit(text)
    scheme = SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.hostname:
        raise BadLink(f"{text!r} is not a race link (like https://HOST/r/CODE)")
    prefix, marker, code = parts.path.rstrip("/").rpartition("/r/")
    if not marker or not code or "/" in code:
        raise BadLink(f"{text!r} is not a race link: its path does not end in /r/CODE")
    return RaceLink(server=f"{scheme}://{parts.netloc}{prefix}/ws", code=code)


def race_link(base: str, code: str) -> str:
    """The link of race `code` on the server whose public address is `base`."""
    return f"{base.rstrip('/')}/r/{code}"


def only_here(base: str) -> bool:
    """Whether an address reaches this machine only (loopback): useless to a friend."""
    host = urlsplit(base).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
