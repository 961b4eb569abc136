"""Plain HTTP on the WebSocket port, through websockets' process_request hook.

    GET /                                 302 to /leaderboard
    GET /healthz                          200 "ok" when the store answers, else 503 saying why
    GET /metrics                          Prometheus text format (this process's counters)
    GET /leaderboard                      302 to today's board of the first game
    GET /leaderboard.json                 302 to that board's .json
    GET /leaderboard/GAME                 302 to today's board of GAME
    GET /leaderboard/GAME/DATE            the board as a static HTML page (DATE: YYYY-MM-DD or all)
    GET /leaderboard/GAME/DATE.json       the same board as JSON, the `leaderboard` message's fields
    GET /replay/ID?n=K                    a finished game after K moves (ID: a gid, or RACE:SEAT)
    GET /replay/ID.json                   its deal, moves and result, the `replay` message's fields
    GET /race/CODE                        a race as its spectators see it (reloads itself while on)
    GET /ratings/GAME                     a game's ratings (quick races) as an HTML page
    GET /ratings/GAME.json                the same as JSON, the `ratings` message's fields
    GET /debug/memory[?baseline=1]        with --debug-memory only: memory report (server/memory.py)
    GET /play, /r/CODE, /play/PATH        the browser client (server/edge/webclient.py)

The WebSocket handshake itself is refused (403) when it comes from a web page of another
origin than the server's own or those allowed (server/edge/origin.py).

Any other path except the WebSocket endpoint is 404. Unknown games, malformed dates and days
that have not begun are 404 with a short plain-text reason; so are unknown replays (and every
practice game: nobody is known on the web), while a game not yet shown (its race running, its
day not over) is 403. Unknown races are 404 too, and a race that takes no spectators is 403.
`/leaderboard.json` redirects rather than answering itself, so that the board has one address
and its caching is the board's own.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import http
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

import msgspec
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

import engine
import protocol as p
from server.edge import pages
from server.edge.origin import origin_allowed
from server.edge.pages import replay_page
from server.edge.pages.race import render_race
from server.edge.pages.ratings import render_ratings
from server.edge.webclient import WebClient
from server.metrics import Metrics
from server.play.replays import parse_ref, replay_message

if TYPE_CHECKING:
    from server.daily.service import DailyService
    from server.play.quick import Quick
    from server.play.replays import Replays
    from server.play.spectators import Spectating

log = logging.getLogger(__name__)


def _limit(query: dict[str, list[str]], most: int) -> int | Response:
    """A board page's `limit` (1 to `most`, `most` when absent), or the 400 that refuses it."""
    if "limit" not in query:
        return most
    try:
        limit = int(query["limit"][0])
    except ValueError:
        limit = 0
    if not 1 <= limit <= most:
        return text(400, f"limit must be 1 to {most}")
    return limit


def _response(
    status: int, body: bytes, content_type: str, extra: dict[str, str] | None = None
) -> Response:
    code = http.HTTPStatus(status)
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    for name, value in (extra or {}).items():
        headers[name] = value
    return Response(code.value, code.phrase, headers, body)


def text(status: int, message: str) -> Response:
    return _response(status, (message + "\n").encode(), "text/plain; charset=utf-8")


# Pages carry no script and load nothing: forbid both, so that even a bug in escaping a
# player's name could not run anything in a visitor's browser.
PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


class HttpRoutes:
    """The process_request hook: answers HTTP paths, lets `ws_path` go on to the handshake."""

    def __init__(
        self,
        *,
        health: Callable[[], Awaitable[bool]],
        metrics: Metrics,
        store_problem: Callable[[], str] | None = None,
        daily: DailyService | None = None,
        replays: Replays | None = None,
        races: Spectating | None = None,
        quick: Quick | None = None,
        on_scrape: Callable[[], Awaitable[None]] | None = None,
        memory_report: Callable[[bool], dict[str, Any]] | None = None,
        ws_path: str = "/ws",
        web: WebClient | None = None,
        allowed_origins: tuple[str, ...] = (),
    ) -> None:
        self.health = health
        self.metrics = metrics
        self.store_problem = store_problem
        self.daily = daily
        self.replays = replays
        self.races = races
        self.quick = quick
        self.on_scrape = on_scrape
        self.memory_report = memory_report
        self.ws_path = ws_path
        self.web = web
        self.allowed_origins = allowed_origins
        self._json = msgspec.json.Encoder()

    async def __call__(self, connection: Any, request: Request) -> Response | None:
        url = urlsplit(request.path)
        headers = request.headers
        if url.path == self.ws_path:
            origin = headers.get("Origin")
            if origin_allowed(origin, headers.get("Host"), self.allowed_origins):
                return None
            log.info(
                "WebSocket handshake from origin %r refused", origin[:200] if origin else origin
            )
            response = text(403, "this server does not take WebSocket connections from that page")
            self.metrics.http_requests.labels("403").inc()
            return response
        try:
            if self.web is not None and self.web.serves(url.path):
                response = self.web.respond(url.path, headers)
            else:
                response = await self.route(url.path, parse_qs(url.query))
        except Exception:
            log.exception("HTTP %s failed", url.path)
            response = text(500, "internal error")
        self.metrics.http_requests.labels(str(response.status_code)).inc()
        return response

    async def route(self, path: str, query: dict[str, list[str]]) -> Response:
        if path == "/healthz":
            problem = self.store_problem() if self.store_problem is not None else ""
            if problem:  # the embedded store's watch knows more than a failed PING would say
                return text(503, f"store unavailable: {problem}")
            if await self.health():
                return text(200, "ok")
            return text(503, "store unreachable")
        if path == "/metrics":
            start = time.perf_counter()
            if await self.health():
                rtt = time.perf_counter() - start
                self.metrics.redis_ping.set(rtt)
                self.metrics.redis_latency.observe(rtt)
            if self.on_scrape is not None:
                await self.on_scrape()
            return _response(200, self.metrics.render(), CONTENT_TYPE_LATEST)
        if path == "/debug/memory" and self.memory_report is not None:
            # Blocks the loop for as long as the snapshot takes: only with --debug-memory.
            report = self.memory_report(query.get("baseline") == ["1"])
            return _response(200, self._json.encode(report), "application/json")
        if path == "/":
            return _redirect("/leaderboard")
        if path == "/leaderboard.json":
            daily = self.daily
            if daily is None:
                return text(404, "leaderboards are not served here")
            board = pages.leaderboard_path(daily.games[0], daily.today().isoformat())
            return _redirect(board + ".json")
        if path == "/leaderboard" or path.startswith("/leaderboard/"):
            return await self.leaderboard(path, query)
        if path.startswith("/replay/"):
            return await self.replay(unquote(path[len("/replay/") :]), query)
        if path.startswith("/race/"):
            return await self.race(path)
        if path.startswith("/ratings/"):
            return await self.ratings(unquote(path[len("/ratings/") :]).rstrip("/"), query)
        return text(404, "not found")

    async def ratings(self, game: str, query: dict[str, list[str]]) -> Response:
        if self.quick is None or self.daily is None:
            return text(404, "ratings are not served here")
        as_json = game.endswith(".json")
        if as_json:
            game = game[: -len(".json")]
        if game not in engine.GAMES:
            return text(404, f"unknown game {game!r}; games are {', '.join(sorted(engine.GAMES))}")
        limit = _limit(query, self.quick.config.leaderboard_max_rows)
        if isinstance(limit, Response):
            return limit
        board = await self.quick.board(game, limit, None)
        cache = {"Cache-Control": "public, max-age=5"}
        if as_json:
            return _response(200, self._json.encode(board), "application/json", cache)
        html = render_ratings(board, games=self.daily.games, today=self.daily.today())
        headers = {**cache, "Content-Security-Policy": PAGE_CSP}
        return _response(200, html.encode(), "text/html; charset=utf-8", headers)

    async def race(self, path: str) -> Response:
        """A race's page: what its spectators see, read afresh on every request."""
        if self.races is None:
            return text(404, "races are not served here")
        code = unquote(path[len("/race/") :]).rstrip("/")
        if not code or "/" in code:
            return text(404, "not found")
        try:
            messages, now_ms = await self.races.page(code)
        except p.Refused as refused:
            return text(403 if refused.code == p.NO_SPECTATORS else 404, refused.message)
        html = render_race(messages, now_ms)
        return _response(
            200,
            html.encode(),
            "text/html; charset=utf-8",
            {"Cache-Control": "no-store", "Content-Security-Policy": PAGE_CSP},
        )

    async def leaderboard(self, path: str, query: dict[str, list[str]]) -> Response:
        daily = self.daily
        if daily is None:
            return text(404, "leaderboards are not served here")
        parts = [unquote(p) for p in path.split("/")[2:]]
        if parts and parts[-1] == "":
            parts.pop()
        if not parts:
            return _redirect(pages.leaderboard_path(daily.games[0], daily.today().isoformat()))
        game = parts[0]
        if game not in daily.games:
            return text(404, f"unknown game {game!r}; games are {', '.join(daily.games)}")
        if len(parts) == 1:
            return _redirect(pages.leaderboard_path(game, daily.today().isoformat()))
        if len(parts) != 2:
            return text(404, "not found")
        date, as_json = parts[1], False
        if date.endswith(".json"):
            date, as_json = date[: -len(".json")], True
        limit = _limit(query, daily.boards.max_rows)
        if isinstance(limit, Response):
            return limit
        try:
            board, deal = await daily.find_board(game, date, limit=limit)
        except p.Refused as refused:
            return text(404, refused.message)
        today = daily.today()
        # Past days change only for the few seconds after midnight while open attempts close.
        cache = "public, max-age=60" if deal is not None else "public, max-age=5"
        if as_json:
            self.metrics.leaderboard_requests.labels("json").inc()
            body = self._json.encode(daily.leaderboard_message(board, deal))
            return _response(200, body, "application/json", {"Cache-Control": cache})
        self.metrics.leaderboard_requests.labels("html").inc()
        replays = self.replays
        html = pages.render_leaderboard(
            board,
            games=daily.games,
            today=today,
            seed=deal.seed if deal is not None else None,
            par=deal.par if deal is not None else None,
            line=deal.line if deal is not None and deal.proven else None,
            replays=deal is not None
            and replays is not None
            and replays.linkable(dt.date.fromisoformat(board.date)),
        )
        return _response(
            200,
            html.encode(),
            "text/html; charset=utf-8",
            {"Cache-Control": cache, "Content-Security-Policy": PAGE_CSP},
        )

    async def replay(self, ident: str, query: dict[str, list[str]]) -> Response:
        replays = self.replays
        if replays is None:
            return text(404, "replays are not served here")
        as_json = ident.endswith(".json")
        if as_json:
            ident = ident[: -len(".json")]
        try:
            gid, race, seat = parse_ref(ident)
            game = await replays.find(gid, race, seat)  # nobody is known on the web
        except p.Refused as refused:
            status = {p.NOT_OVER: 403, p.BAD_REQUEST: 400}.get(refused.code, 404)
            return text(status, refused.message)
        # A game shown never changes again (a daily past its day is closed as it stood).
        cache = {"Cache-Control": "public, max-age=300"}
        last = game.record.n
        if as_json:
            message = replay_message(game, await replays.moves(game))
            return _response(200, self._json.encode(message), "application/json", cache)
        n = 0
        if "n" in query:
            try:
                n = int(query["n"][0])
            except ValueError:
                n = -1
            if not 0 <= n <= last:
                return text(400, f"n must be 0 to {last}: the moves played before the board")
        # Only the moves the page lists are read, and the engine replays from a position
        # kept on the way: a long game's page costs about what a short one's does.
        lo, hi = max(0, n - replay_page.MOVES_AROUND), min(last, n + replay_page.MOVES_AROUND)
        message = replay_message(game, await replays.moves(game, lo, hi), lo)
        position = await replays.position(game, n)
        html = replay_page.render_replay(message, n, engine.render_text(position.view()))
        headers = {**cache, "Content-Security-Policy": replay_page.REPLAY_CSP}
        return _response(200, html.encode(), "text/html; charset=utf-8", headers)


def _redirect(location: str) -> Response:
    return _response(
        302, f"see {location}\n".encode(), "text/plain; charset=utf-8", {"Location": location}
    )
