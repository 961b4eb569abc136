"""A challenge (an asynchronous race) in browsers: created from the page, played at once,
the page saying the race stays open; then played later from its /r/CODE link by a friend
who races the first run as a ghost, to the result. Every WebSocket frame each page
receives is scanned: no seed and no other seat's board before the result."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec
from support.server_proc import ServerProcess
from web_player import WebPlayer


def record_frames(page: Any) -> list[dict[str, Any]]:
    """Every message the page's WebSockets receive, decoded, in order."""
    seen: list[dict[str, Any]] = []

    def on_socket(ws: Any) -> None:
        def on_frame(payload: Any) -> None:
            if isinstance(payload, bytes | bytearray):
                seen.append(msgspec.msgpack.decode(bytes(payload)))

        ws.on("framereceived", on_frame)

    page.on("websocket", on_socket)
    return seen


def leaks(frames: list[dict[str, Any]], own: str) -> list[dict[str, Any]]:
    bad = []
    for m in frames:
        t = m.get("t")
        if t == "result":
            break
        other = t == "state" and m.get("kind") == "race" and m.get("gid") != own
        if "seed" in m or t == "seat" or other or (t == "progress" and not m.get("ghost")):
            bad.append(m)
    return bad


def test_a_challenge_created_in_one_browser_and_raced_later_in_another(
    server: ServerProcess, pages: Callable[..., Any]
) -> None:
    base = server.http_url
    ann_page = pages()
    ann_frames = record_frames(ann_page)
    ann = WebPlayer(ann_page, base).sign_in("ann")
    ann.page.locator("#create-game").select_option("quatorze")
    ann.page.locator("#create-seats").fill("2")
    ann.page.locator("#create-async").check()
    ann.button("New race").click()
    # No lobby to wait in: her own run is dealt at once, on /r/CODE.
    ann.page.locator("#board .card").first.wait_for()
    ann.page.wait_for_url(re.compile(r"/r/[2-9A-HJ-NP-Z]{12}$"))
    code = ann.page.url.rsplit("/r/", 1)[1]
    for i in range(3):
        ann.type_move(ann.legal()[0])
        ann.wait_moves(i + 1)
    ann.page.once("dialog", lambda d: d.accept())
    ann.button("Resign").click()
    ann.page.get_by_text(re.compile(r"The race is still open until \d{4}-\d\d-\d\d")).wait_for()

    bob_page = pages()
    bob_frames = record_frames(bob_page)
    bob = WebPlayer(bob_page, base).sign_in("bob", f"/r/{code}")
    bob.page.locator("#board .card").first.wait_for()
    # ann's run is bob's ghost in the opponents panel.
    rows = bob.page.locator("#opponents-rows tr")
    rows.filter(has_text="ann").filter(has_text="ghost").wait_for()
    rows.filter(has_text="ann").filter(has_text=re.compile(r"ghost, finished")).wait_for()
    bob.type_move(bob.legal()[0])
    bob.wait_moves(1)
    bob.page.once("dialog", lambda d: d.accept())
    bob.button("Resign").click()
    bob.page.locator("#result-rows tr").nth(1).wait_for()
    ann.page.locator("#result-rows tr").nth(1).wait_for()  # ann's page, still open, hears it
    assert {m["t"] for m in bob_frames} >= {"start", "state", "progress", "result"}
    bob_gid = next(m["gid"] for m in bob_frames if m.get("t") == "state")
    ann_gid = next(m["gid"] for m in ann_frames if m.get("t") == "state" and m.get("race"))
    assert leaks(bob_frames, bob_gid) == []
    assert leaks(ann_frames, ann_gid) == []
    # ann's home page lists the challenge, closed, with both seats' standings.
    ann.page.goto(f"{base}/play")
    listed = ann.page.get_by_role("region", name="Your challenges")
    listed.get_by_text(re.compile(rf"Quatorze {code} · 2/2 seats · closed")).wait_for()
    assert listed.locator("ol li").count() == 2
