"""The browser's "Quick race" button: a browser player waits in the queue (the page counts
the time), is matched with a player of the terminal protocol, sees the quick race's lobby
start by itself, plays it on the usual board and reads their rating change with the result.
Leaving the queue from the page takes the player out of the store's queue."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any

import redis
from support.server_proc import ServerProcess
from support.ws_client import Client
from web_player import WebPlayer

from server.store.keys import Keys


def in_thread(coro: Any) -> concurrent.futures.Future[Any]:
    """Run a coroutine in a thread of its own (Playwright's sync API holds this one's loop)."""
    out: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def run() -> None:
        try:
            out.set_result(asyncio.run(coro))
        except BaseException as exc:
            out.set_exception(exc)

    threading.Thread(target=run, daemon=True).start()
    return out


async def queue_and_resign(url: str, game: str) -> dict[str, Any]:
    """A second player queues, is matched, resigns at once: their result."""
    async with Client.connect(url) as c:
        await c.hello("bob")
        assert (await c.request({"t": "queue", "game": game}))["t"] == "queued"
        matched = await c.next("matched", timeout=30)
        state = await c.next("state", race=matched["race"], timeout=30)
        await c.request({"t": "resign", "gid": state["gid"]})
        return await c.next("result", race=matched["race"], timeout=60)


def test_a_quick_race_from_the_button(server: ServerProcess, pages: Callable[..., Any]) -> None:
    page = pages()
    ann = WebPlayer(page, server.http_url).sign_in("ann")
    page.locator("#quick-game").select_option("doublets")
    ann.button("Quick race").click()
    page.get_by_text("Waiting for a Doublets race at rating 1500").wait_for()
    page.locator("#quick-wait").filter(has_text="0:01").wait_for()
    bob = in_thread(queue_and_resign(server.ws_url, "doublets"))
    page.get_by_text("It starts by itself").wait_for(timeout=30_000)
    assert not ann.button("Copy link").is_visible()  # nobody else may join it
    assert not ann.button("Start").is_visible()  # it starts by itself
    page.locator("#board .card").first.wait_for(timeout=30_000)
    ann.button("Resign").click()
    page.get_by_role("region", name="Result").wait_for(timeout=60_000)
    result = bob.result(timeout=60)
    ratings = result["rating"]
    assert len(ratings) == 2 and all(r["before"] == 1500 for r in ratings.values())
    afters = sorted(r["after"] for r in ratings.values())
    assert any(f"1500 → {a}" in ann.notice() for a in afters)


def test_leaving_the_queue_from_the_page(
    server: ServerProcess, pages: Callable[..., Any], redis_url: str, redis_namespace: str
) -> None:
    page = pages()
    ann = WebPlayer(page, server.http_url).sign_in("ann")
    ann.button("Quick race").click()
    page.get_by_text("Waiting for a").wait_for()
    r = redis.Redis.from_url(redis_url)
    entries = Keys(redis_namespace).queue_entries()
    assert r.hlen(entries) == 1
    ann.button("Leave the queue").click()
    ann.button("Quick race").wait_for()
    page.locator("#quick-wait").wait_for(state="hidden")
    assert r.hlen(entries) == 0
