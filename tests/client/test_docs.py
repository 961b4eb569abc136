"""The documentation stands alone: it points at no file outside the repository, and the
rules it points players to are in docs/games/, one page per game."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import engine

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted([ROOT / "README.md", ROOT / "deploy" / "README.md", *ROOT.glob("docs/**/*.md")])
# The project's private notes: never named, never linked, from what a reader gets.
OUTSIDE = re.compile(r"RULES\.md|PROTOCOL\.md|ARCHITECTURE\.md|\.\./shared|shared notes")


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_page_points_outside_the_repository(page: Path) -> None:
    text = page.read_text()
    assert not OUTSIDE.search(text), OUTSIDE.search(text)
    # Every relative link leads to a file that is there.
    for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", text):
        assert (page.parent / target).exists(), (page, target)


@pytest.mark.parametrize("game", engine.GAMES)
def test_each_game_has_its_rules_page(game: str) -> None:
    text = (ROOT / "docs" / "games" / f"{game}.md").read_text()
    for section in ("## Piles", "## Deal", "## Moves", "## Score and end"):
        assert section in text, (game, section)
    assert f"`{game}`" in text.splitlines()[0]


def test_the_games_page_says_how_deals_are_made_and_how_rules_differ() -> None:
    text = (ROOT / "docs" / "games" / "README.md").read_text()
    assert "214013" in text and "2531011" in text  # the shuffle, written out
    assert "t0: JD KD 2S 4C 3S 6D 6S" in text  # and a deal to check it by
    assert "## Differences from AisleRiot" in text
    client = (ROOT / "docs" / "client.md").read_text()
    assert "games/README.md" in client
