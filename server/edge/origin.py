"""Which web pages may open a WebSocket to this server: the `Origin` check of the handshake.

A browser sends `Origin` with every WebSocket handshake, and lets any page open one to any
server: without this check a foreign page a player visits could drive that player's session
(the browser client keeps its token in the page's own storage, but a page of ours is not
the only one that could be open). Allowed: the server's own origin (the one whose host is
the request's `Host`, by either scheme, as a TLS proxy in front changes it), and those
listed in `allowed_origins`. Clients that are not browsers (the terminal client, bots)
send no `Origin` at all and are not concerned.
"""

from __future__ import annotations

from server.config import normalise_origin


def origin_allowed(origin: str | None, host: str | None, allowed: tuple[str, ...]) -> bool:
    """Whether a handshake with this `Origin` (None: absent) and `Host` may go on."""
    if origin is None:
        return True  # not a browser: nothing in a page can send a handshake without it
    try:
        origin = normalise_origin(origin)
    except ValueError:
        return False  # "null" (a sandboxed or file: page), or anything malformed
    if origin in allowed:
        return True
    if not host:
        return False
    scheme = origin.split("://", 1)[0]
    try:
        own = normalise_origin(f"{scheme}://{host}")
    except ValueError:
        return False
    return origin == own
