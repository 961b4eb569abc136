"""The daily challenge in the browser: "deal it now?" first (declining deals nothing), then
the attempt; at its end the share text, the same lines the terminal client writes for that
board entry, and its copy button. Practice with hint and undo, played with the keyboard
alone. The phone layout: every board fits 360 pixels without scrolling sideways."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
from collections.abc import Callable
from typing import Any

import pytest
from support.server_proc import ServerProcess
from support.ws_client import Client
from web_player import PHONE, WebPlayer

from client_cli.share import share_text
from protocol import Entry


def off_loop(coro: Any) -> Any:
    """Runs a coroutine to its end in a thread of its own: Playwright's sync API holds an
    event loop in this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


async def _daily_status(url: str, token: str, game: str) -> str:
    async with Client.connect(url) as c:
        await c.hello("ann", token=token)
        return (await c.request({"t": "daily", "game": game}, timeout=60))["status"]


def test_the_daily_asks_first_then_ends_with_its_share_text(
    server: ServerProcess, pages: Callable[..., Any]
) -> None:
    page = pages(permissions=["clipboard-read", "clipboard-write"])
    ann = WebPlayer(page, server.http_url).sign_in("ann")
    token = page.evaluate("localStorage.getItem('solitaire-race.token')")
    assert token and token not in page.url

    page.locator("#daily-game").select_option("quatorze")
    ann.button("Daily challenge").click()
    page.get_by_text("Deal it now?").wait_for(timeout=60_000)
    ann.button("Not now").click()
    ann.button("New race").wait_for()
    assert off_loop(_daily_status(server.ws_url, token, "quatorze")) == "not_started"

    ann.button("Daily challenge").click()
    ann.button("Deal it now").click()
    page.locator("#board .card").first.wait_for()
    assert "daily" in (page.locator("#game-title").text_content() or "")
    scores = {
        0: int(re.search(r"score (\d+)", page.locator("#game-score").text_content()).group(1))
    }
    for n in (1, 2):
        ann.type_move(ann.legal()[0])
        ann.wait_moves(n)
        scores[n] = int(
            re.search(r"score (\d+)", page.locator("#game-score").text_content()).group(1)
        )
    ann.button("Resign").click()
    share = page.get_by_role("region", name="Share your result")
    share.wait_for()
    text = page.locator("#share-text").text_content()
    assert off_loop(_daily_status(server.ws_url, token, "quatorze")) == "finished"

    date = re.search(r"daily (\d{4}-\d\d-\d\d)", page.locator("#game-title").text_content()).group(
        1
    )
    board = off_loop(_board(server.ws_url, token, date))
    mine = Entry(**{k: v for k, v in board["me"].items() if k in Entry.__struct_fields__})
    assert text == share_text("quatorze", date, mine, board["total"], scores)
    assert text.startswith(f"solitaire-race · Quatorze daily {date}\nNot won · ")

    ann.button("Copy share text").click()
    page.get_by_text("Copied").wait_for()
    assert page.evaluate("navigator.clipboard.readText()") == text


async def _board(url: str, token: str, date: str) -> dict[str, Any]:
    async with Client.connect(url) as c:
        await c.hello("ann", token=token)
        return await c.request(
            {"t": "leaderboard", "game": "quatorze", "date": date, "around_me": True}
        )


def test_practice_with_the_keyboard_alone_and_hint_and_undo(
    server: ServerProcess, pages: Callable[..., Any]
) -> None:
    page = pages()
    ann = WebPlayer(page, server.http_url).sign_in("kim")
    page.locator("#practice-game").select_option("bakers_game")
    ann.button("Practice").focus()
    page.keyboard.press("Enter")
    page.locator("#board .card").first.wait_for()
    start = ann.moves_count()
    move = next(m for m in ann.legal() if m.split("-")[1][0] in "rt")
    src, dst = move.split("-")
    ann.top_card(src).focus()
    page.keyboard.press("Enter")  # picks the card
    assert ann.pile(src).get_attribute("class").split().count("selected") == 1
    assert "target" in (ann.pile(dst).get_attribute("class") or "")
    ann.top_card(dst).focus()
    page.keyboard.press("Space")  # puts it there
    ann.wait_moves(start + 1)
    # "/" takes the keyboard to the Move box.
    page.locator("body").focus()
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "move-input"
    page.keyboard.press("Escape")

    ann.button("Undo").click()
    ann.wait_moves(start)
    ann.button("Hint").click()
    hint = page.locator("#notice").filter(has_text=re.compile(r"^Hint: \S+"))
    hint.wait_for(timeout=60_000)
    hinted = re.search(r"Hint: (\S+)", hint.text_content()).group(1)
    assert hinted in ann.legal()


@pytest.mark.parametrize("game", ["quatorze", "doublets", "bakers_game", "hopscotch"])
def test_every_board_fits_a_phone(
    server: ServerProcess, pages: Callable[..., Any], game: str
) -> None:
    page = pages(viewport=PHONE, has_touch=True, is_mobile=True)
    player = WebPlayer(page, server.http_url).sign_in("pat")
    page.locator("#practice-game").select_option(game)
    player.button("Practice").tap()
    page.locator("#board .card").first.wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for card in page.locator("#board .card").all():
        box = card.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        name = card.get_attribute("aria-label") or ""
        assert re.fullmatch(
            r"(ace|[2-9]|10|jack|queen|king) of \w+|.*face-down cards?|.*, empty", name
        ), name
    # A tap move on the phone (tap the card, then where it goes).
    legal = player.legal()
    if any("-" in m for m in legal):
        src, dst = next(m for m in legal if "-" in m).split("-")
        dst = (
            f"f{player.pile(src).locator('.card').last.get_attribute('data-card')[1]}"
            if dst == "f" and game == "bakers_game"
            else dst
        )
        before = player.moves_count()
        player.top_card(src).tap()
        player.pile(dst).get_by_role("button").tap()
        player.wait_moves(before + 1)
    else:
        before = player.moves_count()
        player.pile("s").get_by_role("button").tap()
        player.wait_moves(before + 1)
