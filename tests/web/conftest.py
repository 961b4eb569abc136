"""A real browser for the web client's tests: Playwright for Python driving Debian's
chromium through executable_path (installed as root when missing, as the other browser tests
do; nothing downloads a browser build), one browser process per test module, a fresh context
(its own storage: its own player) per page."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.debian import debian_tool
from web_player import DESKTOP

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api")
    chromium = debian_tool("chromium", "chromium")
    with sync_api.sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def pages(browser: Any) -> Iterator[Callable[..., Any]]:
    """New pages, each in a context of its own (its own localStorage: its own player). Any
    error the page's scripts throw fails the test."""
    contexts: list[Any] = []
    errors: list[str] = []

    def new_page(viewport: dict[str, int] | None = None, **options: Any) -> Any:
        context = browser.new_context(viewport=viewport or DESKTOP, **options)
        context.set_default_timeout(20_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("dialog", lambda d: d.accept())
        return page

    yield new_page
    for context in contexts:
        context.close()
    assert not errors, errors
