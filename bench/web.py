#!/usr/bin/env python3
"""Benchmark of the browser client (Playwright driving Debian's chromium), same run as its
baseline, the terminal client's move as a player makes it.

    .venv/bin/python -m bench.web [--moves 200] [--loads 20]

Prints:

- the page's weight: every script and stylesheet /play loads (the MessagePack codec
  included), uncompressed and gzipped as served; the budget is 150 KB uncompressed;
- navigation to the first board drawn: a reload of a page whose game is in progress (the
  token in the browser's storage), from the navigation's start to the first card of the
  board in the DOM, `--loads` times: p50 and p99;
- a click move to the board redrawn with the server's acknowledgement: `--moves` moves of a
  Baker's Game practice deal, each two clicks in the page (the card, then the pile) timed in
  the page itself from the first click until the move count shown has gone up (the reply's
  state is in the page's DOM, board included) and its style and layout computed (forced
  then; the paint that follows, at the display's next frame, is not counted), p50 and p99;
- its baseline, the terminal client's move as a player makes it, in the same run: the move
  typed and Enter on the client's own play screen (bench/terminal_screen.py: its
  connection, game session and prompt_toolkit screen, drawn into memory) until the screen
  has been drawn again with the server's acknowledgement, the same kind of moves on a deal
  of its own, its moves alternating with the browser's so that the machine's load weighs on
  both alike, and the ratio of the two (target: the browser within 1.5x). Like for like: both
  clients' whole work for a move, from the player's input to the acknowledged state laid
  out (the terminal's drawing of its screen, the browser's style and layout; neither the
  terminal emulator's paint nor the browser's);
- beside it, what the baseline was before: the terminal client's connection alone
  (client_cli.connection.Connection, request to reply, nothing taken in or drawn), and the
  browser's ratio to it;
- where the difference goes: a bare round trip of each client (a request that writes
  nothing, nothing drawn), the browser's from a socket of the page's own.

The server (bench/race_server.py) runs on a valkey-server of the bench's own in a temporary
directory (or REDIS_URL if set), with the per-connection rate limit lifted so that neither
client waits for it. Percentiles: bench/figures.py.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import re
import shutil
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from playwright.sync_api import sync_playwright

import engine
import protocol as p
from bench.figures import percentile
from bench.race_server import RaceServer, run_on_redis, running_race_server
from bench.terminal_screen import TerminalScreen
from client_cli.connection import Connection

T = TypeVar("T")

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # fmt: skip
GAME = "bakers_game"
# A deal that `shuttle` can play on for hundreds of moves (a card back and forth between a
# column and a free cell, after a few opening moves). On a deal that it plays out in six
# moves, the page was loaded again every six moves to deal the next, and each first move on
# a freshly loaded page (code not yet compiled, styles not yet computed) weighed on the
# browser's figure, while the terminal's process stays warm: not what a player racing one
# deal in an open page meets.
SEED = 7
BUDGET = 150 * 1024

# One move in the page: click the card, then the pile; resolves with the milliseconds until
# the move count shown is one more (the server's state drawn).
CLICK_MOVE = """
async ([src, dst]) => {
  const score = document.querySelector("#game-score");
  const before = Number(score.textContent.match(/moves (\\d+)/)[1]);
  const t0 = performance.now();
  const done = new Promise((resolve) => {
    const seen = new MutationObserver(() => {
      const m = score.textContent.match(/moves (\\d+)/);
      if (m && Number(m[1]) === before + 1) {
        seen.disconnect();
        // Style and layout of the new state, forced now: part of drawing it, as the
        // terminal's baseline includes drawing its screen (the paint, at the display's next
        // frame, stays out, as the terminal emulator's does).
        void document.documentElement.getBoundingClientRect();
        resolve(performance.now() - t0);
      }
    });
    seen.observe(score, { childList: true, characterData: true, subtree: true });
  });
  document.querySelector(`#board [data-pile="${src}"] button`).click();
  document.querySelector(`#board [data-pile="${dst}"] button`).click();
  return await done;
}
"""


# The page's bare WebSocket round trip: a request that writes nothing (an all-time board of
# one row), on a socket of its own, nothing drawn; resolves with the milliseconds of each.
BARE_ROUND_TRIPS = """
async (n) => {
  const { encode, decode } = globalThis.MessagePack;
  const ws = new WebSocket(`ws://${location.host}/ws`);
  ws.binaryType = "arraybuffer";
  await new Promise((resolve) => (ws.onopen = resolve));
  let answer;
  ws.onmessage = (e) => answer(decode(new Uint8Array(e.data)));
  const ask = (m) => new Promise((resolve) => { answer = resolve; ws.send(encode(m)); });
  await ask({ t: "hello", v: 1, name: "bare" + Math.random().toString(36).slice(2, 8), id: 0 });
  const out = [];
  for (let i = 1; i <= n; i++) {
    const t0 = performance.now();
    await ask({ t: "leaderboard", game: "quatorze", date: "all", limit: 1, id: i });
    out.push(performance.now() - t0);
  }
  ws.close();
  return out;
}
"""
BOARD = p.Leaderboard(game="quatorze", date="all", limit=1)


def shuttle(legal: list[str]) -> str:
    """A move between columns and free cells (never to a foundation: the game goes on)."""
    moves = [m for m in legal if "-" in m and m.split("-")[1][0] in "rt"]
    return moves[len(moves) // 2] if moves else legal[0]


def page_weight(base: str) -> tuple[int, int, list[str]]:
    html = urllib.request.urlopen(base + "/play").read().decode()
    assets = re.findall(r'(?:src|href)="(/play/[^"]+\.(?:js|css))"', html)
    queue = [a for a in assets if a.endswith(".js")]
    while queue:
        path = queue.pop()
        text = urllib.request.urlopen(base + path).read().decode()
        for imported in re.findall(r'from "\./([^"]+)"', text):
            full = str(Path(path).parent / imported)
            if full not in assets:
                assets.append(full)
                queue.append(full)
    raw = zipped = 0
    for asset in assets:
        body = urllib.request.urlopen(base + asset).read()
        raw += len(body)
        zipped += len(gzip.compress(body, 9))
    return raw, zipped, assets


class Terminal:
    """The terminal client's connection, on an event loop of its own thread (Playwright's
    sync API holds this thread's), playing one move at a time when asked."""

    def __init__(self, url: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.conn = Connection(url, f"cli{uuid.uuid4().hex[:6]}", None)
        self.state: p.State | None = None
        self.screen = self.call(self._screen(url))
        self.call(self._open())

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    async def _screen(self, url: str) -> TerminalScreen:
        return TerminalScreen(url, GAME)  # built in the loop that runs it

    async def _open(self) -> None:
        await self.conn.open()
        await self._deal()
        await self.screen.open(SEED)

    async def _deal(self) -> None:
        state = await self.conn.request(p.Practice(game=GAME, seed=SEED))
        assert isinstance(state, p.State)
        self.state = state

    async def _move(self) -> float:
        assert self.state is not None
        legal = sorted(engine.legal_moves_from_view(self.state.view))
        if self.state.finished or not legal:  # the deal played out: deal it again
            await self._deal()
            assert self.state is not None
            legal = sorted(engine.legal_moves_from_view(self.state.view))
        move = shuttle(legal)
        t0 = time.perf_counter()
        reply = await self.conn.request(p.Move(gid=self.state.gid, n=self.state.n, m=move))
        elapsed = (time.perf_counter() - t0) * 1000
        assert isinstance(reply, p.State)
        self.state = reply
        return elapsed

    def move(self) -> float:
        return self.call(self._move())

    async def _screen_move(self) -> float:
        legal = self.screen.legal()
        if self.screen.state.finished or not legal:  # the deal played out: deal it again
            await self.screen.deal(SEED)
            legal = self.screen.legal()
        return await self.screen.move(shuttle(legal))

    def screen_move(self) -> float:
        """A move typed on the terminal client's play screen, until it is redrawn."""
        return self.call(self._screen_move())

    async def _bare(self) -> float:
        t0 = time.perf_counter()
        await self.conn.request(BOARD)
        return (time.perf_counter() - t0) * 1000

    def bare(self) -> float:
        return self.call(self._bare())

    def close(self) -> None:
        self.call(self.screen.close())
        self.call(self.conn.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()


def figures(base: str, ws_url: str, moves: int, loads: int) -> tuple[list[float], ...]:
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is missing: apt-get install chromium")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(base + "/play")
        page.get_by_role("textbox", name="Name", exact=True).fill(f"web{uuid.uuid4().hex[:6]}")
        page.get_by_role("button", name="Play", exact=True).click()
        page.get_by_text("Playing as").wait_for()

        def new_game() -> None:
            page.goto(base + "/play")
            page.locator("#practice-game").select_option(GAME)
            page.locator("#practice-seed").fill(str(SEED))
            page.get_by_role("button", name="Practice", exact=True).click()
            page.locator("#board .card").first.wait_for()

        new_game()

        first_board: list[float] = []
        for _ in range(loads):
            page.reload(wait_until="commit")
            page.locator("#board .card").first.wait_for()
            # From the navigation's start (the page's time origin) to now, in the page.
            first_board.append(page.evaluate("performance.now()"))

        # The two clients' moves alternate, so that the machine's load weighs on both alike.
        terminal = Terminal(ws_url)
        clicks: list[float] = []
        round_trips: list[float] = []
        screens: list[float] = []
        for _ in range(moves):
            round_trips.append(terminal.move())
            screens.append(terminal.screen_move())
            text = page.locator("#legal-moves").text_content() or ""
            if not text.startswith("Legal moves: "):  # the deal played out: deal it again
                new_game()
                text = page.locator("#legal-moves").text_content() or ""
            move = shuttle(text.removeprefix("Legal moves: ").split())
            src, dst = move.split("-")
            if dst == "f":  # the foundation of the card's suit
                card = page.locator(f'#board [data-pile="{src}"] .card').last
                dst = "f" + (card.get_attribute("data-card") or "??")[1]
            clicks.append(page.evaluate(CLICK_MOVE, [src, dst]))
        bare_page = page.evaluate(BARE_ROUND_TRIPS, moves)
        bare_terminal = [terminal.bare() for _ in range(moves)]
        terminal.close()
        browser.close()
    return first_board, clicks, screens, round_trips, bare_page, bare_terminal


def measure(args: argparse.Namespace, server: RaceServer) -> None:
    raw, zipped, assets = page_weight(server.page())
    first_board, clicks, screens, terminal, bare_page, bare_terminal = figures(
        server.page(), server.url, args.moves, args.loads
    )
    print(f"page weight: {len(assets)} files of JS and CSS, {raw / 1024:.1f} KB uncompressed "
          f"(budget {BUDGET // 1024} KB: {'within' if raw < BUDGET else 'OVER'}), "
          f"{zipped / 1024:.1f} KB gzipped")  # fmt: skip
    f50, f99 = percentile(first_board, 0.5), percentile(first_board, 0.99)
    print(f"navigation to first board drawn ({len(first_board)} reloads): "
          f"p50 {f50:.0f} ms, p99 {f99:.0f} ms")  # fmt: skip
    b50, b99 = percentile(clicks, 0.5), percentile(clicks, 0.99)
    s50, s99 = percentile(screens, 0.5), percentile(screens, 0.99)
    t50, t99 = percentile(terminal, 0.5), percentile(terminal, 0.99)
    print(f"click move to board redrawn with the ack ({len(clicks)} moves): "
          f"p50 {b50:.2f} ms, p99 {b99:.2f} ms")  # fmt: skip
    print(f"terminal client's move, typed to screen redrawn with the ack ({len(screens)} moves, "
          f"baseline): p50 {s50:.2f} ms, p99 {s99:.2f} ms")  # fmt: skip
    print(f"ratio browser / terminal: p50 {b50 / s50:.2f}x, p99 {b99 / s99:.2f}x (target <= 1.5x)")
    print(f"terminal client's connection alone, request to reply ({len(terminal)} moves): "
          f"p50 {t50:.2f} ms, p99 {t99:.2f} ms; browser / it: p50 {b50 / t50:.2f}x, "
          f"p99 {b99 / t99:.2f}x")  # fmt: skip
    w50, c50 = percentile(bare_page, 0.5), percentile(bare_terminal, 0.5)
    print(f"where it goes: a bare WebSocket round trip (a request that writes nothing, nothing "
          f"drawn): the page's p50 {w50:.2f} ms, the terminal client's p50 {c50:.2f} ms; "
          f"the browser's own transport adds {w50 - c50:.2f} ms to every round trip")  # fmt: skip


async def bench(args: argparse.Namespace, redis_url: str) -> None:
    async with running_race_server(redis_url) as server:
        # Playwright's sync API wants a thread without an event loop.
        await asyncio.to_thread(measure, args, server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--loads", type=int, default=20)
    run_on_redis(bench, parser.parse_args())


if __name__ == "__main__":
    main()
