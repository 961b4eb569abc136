"""The daily's share text and its picture (expected lines written by hand)."""

from __future__ import annotations

from client_cli.share import progress, share_text
from protocol import Entry


def test_the_picture_is_cards_home_per_tenth_of_the_moves() -> None:
    # 20 moves: two per tenth. Cards home: 1 in the 2nd tenth, 4 in the 5th, 2 in the last.
    scores = {n: 0 for n in range(21)}
    for n in range(3, 21):
        scores[n] = 1
    for n in range(9, 21):
        scores[n] = 5
    scores[20] = 7
    assert progress(scores, 20) == "▁▃▁▁█▁▁▁▁▅"
    assert progress(scores, 20, unicode=False) == "_:__#____="
    # Cards the deal itself sends home (Doublets' foundation, Baker's Game's auto-play) are
    # not the player's progress: only what each tenth adds counts.
    assert progress({n: 2 for n in range(11)}, 10) == "▁" * 10


def test_a_resumed_attempt_shows_what_it_did_not_see_as_unknown() -> None:
    # The client came back at move 6 of 10: the first tenths happened elsewhere.
    scores = {6: 3, 7: 3, 8: 4, 9: 4, 10: 6}
    assert progress(scores, 10) == "??????▁▅▁█"
    assert progress({}, 10) == ""  # nothing seen: no picture at all


def test_the_share_text_tells_no_card_move_or_deal() -> None:
    me = Entry(rank=3, player="5f0c", name="ann", score=52, moves=26, time_ms=83_400, won=True)
    # A pair a move: 26 moves make tenths of 3 and of 2 moves (6 and 4 cards home).
    scores = {n: 2 * n for n in range(27)}
    assert share_text("quatorze", "2026-11-29", me, 17, scores) == (
        "solitaire-race · Quatorze daily 2026-11-29\n"
        "Won ✓ · 52/52 · 26 moves · 1:23 · #3 of 17\n"
        "█▆█▆██▆█▆█"
    )
    lost = Entry(rank=9, player="5f0c", name="ann", score=11, moves=130, time_ms=3_723_000,
                 won=False)  # fmt: skip
    assert share_text("bakers_game", "2026-11-30", lost, 9, unicode=False) == (
        "solitaire-race - Baker's Game daily 2026-11-30\n"
        "Not won - 11/52 - 130 moves - 1:02:03 - #9 of 9"
    )


def test_one_move_is_one_move_not_one_moves() -> None:
    quick = Entry(rank=1, player="5f0c", name="ann", score=2, moves=1, time_ms=4_000, won=False)
    text = share_text("quatorze", "2026-11-29", quick, 1, unicode=False)
    assert " - 1 move - " in text and "moves" not in text
