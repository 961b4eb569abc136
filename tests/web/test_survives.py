"""The web client survives what the terminal client survives: the server killed mid-race
(SIGKILL) and started again; the page says plainly that it is offline, a move made meanwhile
is shown as pending, and once the page is back the move is sent (the same n: the protocol's
retransmission rule) and acknowledged; a reload afterwards shows the same game."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from support.server_proc import ServerFactory
from web_player import WebPlayer


def test_a_server_restart_mid_race_keeps_the_game_and_sends_pending_moves(
    servers: ServerFactory, pages: Callable[..., Any]
) -> None:
    server = servers.start()
    base = server.http_url
    ann = WebPlayer(pages(), base).sign_in("ann")
    code = ann.new_race("quatorze")
    bob = WebPlayer(pages(), base).sign_in("bob", f"/r/{code}")
    bob.page.get_by_text("Waiting for ann").wait_for()
    ann.button("Start").click()
    ann.page.locator("#board .card").first.wait_for()
    ann.type_move(ann.legal()[0])
    ann.wait_moves(1)
    offline_move = ann.legal()[0]

    server.kill()
    banner = ann.page.locator("#offline")
    banner.filter(has_text="Offline").wait_for()
    assert banner.get_attribute("role") == "status"
    ann.type_move(offline_move)
    pending = ann.page.locator("#pending")
    pending.filter(has_text=f"Pending: {offline_move} (sent once reconnected)").wait_for()
    assert ann.moves_count() == 1  # nothing is shown as played before the server says so

    server.start()
    ann.wait_moves(2)
    banner.wait_for(state="hidden")
    assert (pending.text_content() or "") == ""
    # bob's page came back too, and heard of ann's move.
    bob.page.locator("#offline").wait_for(state="hidden")
    row = bob.page.get_by_role("region", name="Opponents").locator("tr", has_text="ann")
    row.locator("td:nth-child(3)", has_text="2").wait_for()

    ann.page.reload()
    ann.page.locator("#board .card").first.wait_for()
    ann.wait_moves(2)
    assert "Log in" not in (ann.page.text_content("body") or "")
