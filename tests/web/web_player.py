"""A person at the web client: what they do through the page (by accessible names, the way
a screen reader or a keyboard reaches the controls) and what they read on it."""

from __future__ import annotations

import re
from typing import Any

PHONE = {"width": 360, "height": 740}
DESKTOP = {"width": 1280, "height": 900}
CARD = re.compile(r"^(ace|[2-9]|10|jack|queen|king) of (clubs|diamonds|hearts|spades)$")


class WebPlayer:
    def __init__(self, page: Any, base: str) -> None:
        self.page = page
        self.base = base

    def sign_in(self, name: str, path: str = "/play") -> WebPlayer:
        self.page.goto(self.base + path)
        self.page.get_by_role("textbox", name="Name", exact=True).fill(name)
        self.page.get_by_role("button", name="Play", exact=True).click()
        self.page.get_by_text(f"Playing as {name}").wait_for()
        return self

    def button(self, name: str) -> Any:
        return self.page.get_by_role("button", name=name, exact=True)

    def new_race(self, game: str) -> str:
        self.page.locator("#create-game").select_option(game)
        self.button("New race").click()
        self.button("Copy link").wait_for()
        link = self.page.get_by_role("textbox", name="Race link").input_value()
        return link.rsplit("/r/", 1)[1]

    def legal(self) -> list[str]:
        text = self.page.locator("#legal-moves").text_content() or ""
        return text.removeprefix("Legal moves: ").split() if text.startswith("Legal") else []

    def moves_count(self) -> int:
        text = self.page.locator("#game-score").text_content() or ""
        found = re.search(r"moves (\d+)", text)
        assert found, text
        return int(found.group(1))

    def wait_moves(self, n: int) -> None:
        self.page.locator("#game-score").filter(has_text=re.compile(rf"moves {n}$")).wait_for()

    def pile(self, code: str) -> Any:
        return self.page.locator(f'#board [data-pile="{code}"]')

    def top_card(self, code: str) -> Any:
        """The button of the card on top of pile `code`."""
        return self.pile(code).get_by_role("button")

    def card_name(self, code: str) -> str:
        name = self.top_card(code).get_attribute("aria-label") or ""
        assert CARD.match(name), name
        return name

    def type_move(self, move: str) -> None:
        self.page.get_by_role("textbox", name="Move", exact=True).fill(move)
        self.page.get_by_role("textbox", name="Move", exact=True).press("Enter")

    def notice(self) -> str:
        return self.page.locator("#notice").text_content() or ""
