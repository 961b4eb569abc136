"""Two people in browsers and one in a terminal race Quatorze to a result, through the
pages' controls: a new race, its shared link, the lobby, the host's start; a move by click
(with the targets highlighted from the server's legal list), one by drag and drop, one typed;
an illegal move (the server's reason, nothing changed); a reload mid-race that resumes the
same game; a hostile name that stays text; the standings with replay links and rematch."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from support.server_proc import ServerProcess
from web_player import PHONE, WebPlayer

HOSTILE = "<img src=x onerror=f()>"  # 23 characters: names are at most 24


def cells(player: WebPlayer) -> dict[str, str]:
    """Each Quatorze cell's card (its accessible name), as the page shows it."""
    out = {}
    for node in player.page.locator('#board [data-pile^="c"]').all():
        code = node.get_attribute("data-pile")
        card = node.locator(".card").first
        out[code] = card.get_attribute("aria-label") or ""
    return out


def test_two_browsers_and_a_terminal_race_quatorze_to_a_result(
    server: ServerProcess, pages: Callable[..., Any], terminals: Callable[..., Any]
) -> None:
    base = server.http_url
    ann = WebPlayer(pages(), base).sign_in("ann")
    code = ann.new_race("quatorze")
    assert re.fullmatch(r"[2-9A-HJ-NP-Z]{12}", code)
    assert ann.page.url == f"{base}/r/{code}"

    # bob opens the shared link on a phone, names himself, and is seated.
    bob = WebPlayer(pages(viewport=PHONE), base).sign_in(HOSTILE, f"/r/{code}")
    bob.page.get_by_text("Waiting for ann to start the race").wait_for()
    assert not bob.button("Start").is_visible()
    # cat joins from the terminal client with the code.
    cat = terminals("cat", "--server", server.ws_url, "--name", "cat", "race", "join", code)
    cat.wait_for(r"Waiting for the host to start")
    seats = ann.page.locator("#lobby-seats li")
    seats.filter(has_text="cat").wait_for()
    assert seats.filter(has_text=HOSTILE).count() == 1  # the name as text
    assert ann.page.locator("#lobby-seats img").count() == 0
    ann.button("Start").click()
    for player in (ann, bob):
        player.page.locator("#board .card").first.wait_for()
        player.page.get_by_role("region", name="Opponents").wait_for()
    cat.wait_for(r"Moves\s+0")

    # The deal is the same for all: every player starts from the same cards and moves.
    start_cells = cells(ann)
    assert cells(bob) == start_cells
    first_legal = ann.legal()
    assert first_legal and bob.legal() == first_legal

    # ann: a click move. Picking the card highlights exactly where the legal list says it goes.
    a, b = first_legal[0].split("-")
    targets_of_a = {m.split("-")[1] if m.startswith(a + "-") else m.split("-")[0]
                    for m in first_legal if a in m.split("-")}  # fmt: skip
    ann.top_card(a).click()
    highlighted = {
        n.get_attribute("data-pile") for n in ann.page.locator("#board .pile.target").all()
    }
    assert highlighted == targets_of_a
    ann.top_card(b).click()
    ann.wait_moves(1)
    assert ann.pile(a).locator(".card").first.get_attribute("aria-label") != start_cells[a]

    # bob: a drag move, on the phone layout.
    c, d = first_legal[-1].split("-")
    bob.top_card(c).drag_to(bob.top_card(d))
    bob.wait_moves(1)

    # ann: a typed move.
    typed = ann.legal()[0]
    ann.type_move(typed)
    ann.wait_moves(2)

    # ann: an illegal move: the server's reason, and nothing changes.
    before = cells(ann)
    present = [k for k, v in before.items() if " of " in v]
    illegal = next(
        f"{x}-{y}" for x in present for y in present
        if x < y and f"{x}-{y}" not in ann.legal() and f"{y}-{x}" not in ann.legal()
    )  # fmt: skip
    ann.type_move(illegal)
    ann.page.locator("#notice.error").filter(has_text=illegal).wait_for()
    assert cells(ann) == before and ann.moves_count() == 2

    # cat plays a move in the terminal; the browsers' Opponents panels show it.
    cat.enter(first_legal[1] if len(first_legal) > 1 else first_legal[0])
    cat.wait_for(r"Moves\s+1")
    opponents = ann.page.get_by_role("region", name="Opponents")
    # Its row: player, score, moves, time, status.
    opponents.locator("tr", has_text="cat").locator("td:nth-child(3)", has_text="1").wait_for()
    assert opponents.locator("tr", has_text=HOSTILE).count() == 1

    # bob reloads mid-race: the same game, where he left it.
    bob_cells = cells(bob)
    bob.page.reload()
    bob.page.locator("#board .card").first.wait_for()
    bob.wait_moves(1)
    assert cells(bob) == bob_cells
    bob.page.get_by_role("region", name="Opponents").locator("tr", has_text="ann").wait_for()

    # Everybody finishes: two resign in the browsers, one in the terminal.
    ann.button("Resign").click()
    bob.button("Resign").click()
    cat.enter("resign")
    cat.wait_for(r"resign\? y/n>")
    cat.enter("y")
    for player in (ann, bob):
        result = player.page.get_by_role("region", name="Result")
        result.wait_for()
        rows = result.locator("tbody tr")
        assert rows.count() == 3
        names = {r.locator("td").nth(1).text_content() for r in rows.all()}
        assert names == {"ann", "cat", HOSTILE}
        links = [a.get_attribute("href") for a in result.get_by_role("link").all()]
        assert links == [f"/replay/{code}:{i}" for i in (1, 2, 3)]
        assert player.button("Rematch").is_visible()
    cat.wait_for(rf"Race {code} is over")
    assert ann.page.locator("img").count() == 0 and bob.page.locator("img").count() == 0
