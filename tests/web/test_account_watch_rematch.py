"""The rest of a racer's page: recovery codes that `solitaire account` reads and writes (the
token is in the browser's storage, never in a URL); a race's link opened once the race runs
watches it (every seat's board, no controls); the standings' rematch for both players; the
day's and all-time leaderboards."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from support.server_proc import ServerProcess
from web_player import WebPlayer

from client_cli.commands.account import decode_code, encode_code


def test_recovery_codes_go_both_ways_with_the_terminal_client(
    server: ServerProcess, pages: Callable[..., Any]
) -> None:
    page = pages()
    ann = WebPlayer(page, server.http_url).sign_in("ann")
    token = page.evaluate("localStorage.getItem('solitaire-race.token')")
    ann.button("Export account").click()
    code = page.get_by_role("textbox", name="Recovery code to copy").input_value()
    assert decode_code(code) == (server.ws_url, token, "ann")
    assert token not in page.url

    # A code from the terminal client makes a fresh browser that player.
    other = pages()
    other.goto(server.http_url + "/play")
    other.get_by_text("Already have a player?").click()
    other.get_by_role("textbox", name="Recovery code", exact=True).fill(
        encode_code(server.ws_url, token, "ann")
    )
    WebPlayer(other, server.http_url).button("Import").click()
    other.get_by_text("Playing as ann").wait_for()
    assert other.evaluate("localStorage.getItem('solitaire-race.token')") == token
    # A code for another server is refused, and nothing changes.
    page.get_by_role("textbox", name="Import a recovery code").fill(
        encode_code("ws://elsewhere.example:8765/ws", "x" * 43, "eve")
    )
    ann.button("Import").click()
    page.locator("#notice.error").filter(has_text="elsewhere.example:8765").wait_for()
    assert page.evaluate("localStorage.getItem('solitaire-race.token')") == token


def test_a_running_races_link_watches_and_the_players_rematch(
    server: ServerProcess, pages: Callable[..., Any]
) -> None:
    base = server.http_url
    ann = WebPlayer(pages(), base).sign_in("ann")
    code = ann.new_race("doublets")
    bob = WebPlayer(pages(), base).sign_in("bob", f"/r/{code}")
    bob.page.get_by_text("Waiting for ann").wait_for()
    ann.button("Start").click()
    ann.page.locator("#board .card").first.wait_for()

    eve = WebPlayer(pages(), base).sign_in("eve", f"/r/{code}")
    eve.page.get_by_text(f"Watching Doublets · race {code}").wait_for()
    eve.page.get_by_role("region", name="ann's board").locator(".card").first.wait_for()
    eve.page.get_by_role("region", name="bob's board").locator(".card").first.wait_for()
    assert eve.page.locator("#view-watch button").count() == 0  # nothing to play there
    ann.type_move(ann.legal()[0])
    ann.wait_moves(1)
    eve.page.get_by_role("region", name="ann's board").get_by_text("moves 1").wait_for()

    for player in (ann, bob):
        player.button("Resign").click()
    for player in (ann, bob, eve):
        player.page.get_by_text(re.compile(r"(wins the race|The race is over)")).first.wait_for()
    bob.button("Rematch").click()
    bob.button("Start").wait_for()
    ann.page.get_by_text("bob asked for a rematch").wait_for()
    ann.button("Take your seat").click()
    bob.page.locator("#lobby-seats li", has_text="ann").wait_for()
    assert bob.page.url != f"{base}/r/{code}" and "/r/" in bob.page.url


def test_the_leaderboards(server: ServerProcess, pages: Callable[..., Any]) -> None:
    page = pages()
    ann = WebPlayer(page, server.http_url).sign_in("ann")
    page.locator("#boards-game").select_option("hopscotch")
    ann.button("Show leaderboard").click()
    page.get_by_text(re.compile(r"Hopscotch · daily \d{4}-\d\d-\d\d")).wait_for(timeout=60_000)
    assert (
        page.get_by_role("link", name="This board as a page")
        .get_attribute("href")
        .startswith("/leaderboard/hopscotch/")
    )
    page.goto(server.http_url + "/play")
    page.locator("#boards-game").select_option("hopscotch")
    page.locator("#boards-date").select_option("all")
    ann.button("Show leaderboard").click()
    page.get_by_text("Hopscotch · all time").wait_for()
