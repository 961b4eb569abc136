"""Headless Chromium (Debian's `chromium`) for looking at pages as a person would.

`ensure_chromium()` installs the package when it is missing and we are root (as in CI), and
otherwise skips the calling test with the reason. `rendered_page()` loads a URL, lets the
browser build the DOM, and returns what a visitor sees: the text of each table row, the links
(text and target), the headings, and whether any <script> element made it into the page.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from support.debian import debian_tool

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
TIMEOUT_S = 90


def ensure_chromium() -> str:
    """The chromium binary; installed from Debian's package when missing and root, else a skip."""
    return debian_tool("chromium", "chromium")


def _run(binary: str, args: list[str]) -> str:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        done = subprocess.run(
            [binary, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@dataclass
class SeenPage:
    title: str = ""
    headings: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)  # body rows' cell texts
    links: list[tuple[str, str]] = field(default_factory=list)  # (text, href)
    pre: list[str] = field(default_factory=list)  # the text of each <pre>, as laid out
    scripts: int = 0
    bold: int = 0
    text: str = ""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = SeenPage()
        self._stack: list[str] = []
        self._cell: list[str] | None = None
        self._row: list[str] | None = None
        self._link: tuple[str, list[str]] | None = None
        self._heading: list[str] | None = None
        self._title: list[str] | None = None
        self._pre: list[str] | None = None
        self._in_tbody = False
        self._texts: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.page.scripts += 1
        elif tag == "b":
            self.page.bold += 1
        elif tag == "tbody":
            self._in_tbody = True
        elif tag == "tr" and self._in_tbody:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []
        elif tag == "a":
            self._link = (dict(attrs).get("href") or "", [])
        elif tag == "h1":
            self._heading = []
        elif tag == "title":
            self._title = []
        elif tag == "pre":
            self._pre = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "tbody":
            self._in_tbody = False
        elif tag == "tr" and self._row is not None:
            self.page.rows.append(self._row)
            self._row = None
        elif tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "a" and self._link is not None:
            href, parts = self._link
            self.page.links.append((" ".join("".join(parts).split()), href))
            self._link = None
        elif tag == "h1" and self._heading is not None:
            self.page.headings.append(" ".join("".join(self._heading).split()))
            self._heading = None
        elif tag == "pre" and self._pre is not None:
            self.page.pre.append("".join(self._pre))
            self._pre = None
        elif tag == "title" and self._title is not None:
            self.page.title = " ".join("".join(self._title).split())
            self._title = None

    def handle_data(self, data: str) -> None:
        for buf in (self._cell, self._heading, self._title, self._pre):
            if buf is not None:
                buf.append(data)
        if self._link is not None:
            self._link[1].append(data)
        if self._title is None:
            self._texts.append(data)


def rendered_page(binary: str, url: str) -> SeenPage:
    """What the browser built from `url`, read from its DOM (--dump-dom)."""
    dom = _run(binary, ["--dump-dom", url])
    reader = _Reader()
    reader.feed(dom)
    reader.close()
    reader.page.text = " ".join(" ".join(reader._texts).split())
    return reader.page


def screenshot(binary: str, url: str, path: Path, size: str = "1000,900") -> Path:
    _run(binary, [f"--screenshot={path}", f"--window-size={size}", url])
    return path
