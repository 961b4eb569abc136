"""Standings and leaderboards as text (expected lines written by hand)."""

from __future__ import annotations

import msgspec

from client_cli.panels import MAIN_WIDTH, leaderboard_lines, plain_text, result_lines
from client_cli.theme import Theme
from protocol import LeaderboardReply, RematchOffer, Result

PLAIN = Theme(unicode=True, colour=False)


def test_race_standings_with_the_seed() -> None:
    result = msgspec.convert({
        "race": "7K3M2P", "game": "bakers_game", "seed": 11982, "standings": [
            {"rank": 1, "player": "a", "name": "ann", "score": 52, "moves": 91,
             "time_ms": 301_000, "won": True, "resigned": False},
            {"rank": 2, "player": "b", "name": "bo", "score": 17, "moves": 40,
             "time_ms": 65_500, "won": False, "resigned": True},
        ]}, Result)  # fmt: skip
    assert plain_text(result_lines(result, "b", PLAIN)) == "\n".join([
        "Race 7K3M2P is over: Baker's Game",
        "Seed 11982 (replay the deal with it)",
        "",
        " #  Player                 Score Moves    Time",
        " 1  ann           won         52    91    5:01",
        " 2  bo            resigned    17    40    1:05",
        "",
        "Replays (lines 1-2):",
        "solitaire replay 7K3M2P:2",
        "",
        "Press Enter to leave, r for a rematch.",
    ])  # fmt: skip
    # Knowing the server's address, the result links one's own seat's replay page too (a
    # seat not in the standings, a spectator's, gets the winner's).
    lines = plain_text(result_lines(result, "x", PLAIN, web="http://game.example:8765"))
    assert lines.splitlines()[-5:-2] == [
        "Replays (lines 1-2):",
        "solitaire replay 7K3M2P:1",
        "http://game.example:8765/replay/7K3M2P:1",
    ]
    # Someone who was not in the race may look, not ask for a rematch.
    assert lines.splitlines()[-1] == "Press Enter to leave."
    # ann asked: the keys say where r goes; the summary left on the terminal has the
    # replay lines and no keys.
    offer = RematchOffer(race="7K3M2P", next="QX9ABC7K3M2P", player="a", name="ann")
    web = "http://game.example:8765"
    assert plain_text(result_lines(result, "b", PLAIN, web=web, offer=offer)[-6:]) == "\n".join([
        "Replays (lines 1-2):",
        "solitaire replay 7K3M2P:2",
        "http://game.example:8765/replay/7K3M2P:2",
        "",
        "ann asks for a rematch:",
        "press r to join race QX9ABC7K3M2P, Enter to leave.",
    ])  # fmt: skip
    assert plain_text(result_lines(result, "a", PLAIN, offer=offer)[-2:-1]) == (
        "You asked for a rematch:"
    )
    summary = result_lines(result, "b", PLAIN, web=web, offer=offer, keys=False)
    assert plain_text(summary[-5:]) == "\n".join([
        " 2  bo            resigned    17    40    1:05",
        "",
        "Replays (lines 1-2):",
        "solitaire replay 7K3M2P:2",
        "http://game.example:8765/replay/7K3M2P:2",
    ])  # fmt: skip


def test_race_standings_fit_the_panel_with_full_race_codes() -> None:
    """12-character codes (the server's) and 16 seats: no line is cut at the panel's edge."""
    seats = [
        {"rank": n, "player": f"p{n}", "name": f"player{n}", "score": 0, "moves": 0,
         "time_ms": 0, "won": False, "resigned": True}
        for n in range(1, 17)
    ]  # fmt: skip
    result = msgspec.convert(
        {"race": "RTS85LHUGEUZ", "game": "quatorze", "seed": 1, "standings": seats}, Result
    )
    offer = RematchOffer(race="RTS85LHUGEUZ", next="UVXLWY32LSAC", player="p1", name="player1")
    lines = result_lines(result, "p16", PLAIN, web="http://127.0.0.1:50075", offer=offer)
    text = plain_text(lines)
    assert "solitaire replay RTS85LHUGEUZ:16" in text and "(lines 1-16)" in text
    assert max(len(line) for line in text.splitlines()) <= MAIN_WIDTH


def test_daily_board_around_me_and_all_time_board() -> None:
    day = msgspec.convert({
        "game": "hopscotch", "date": "2026-11-28", "total": 40, "seed": 77,
        "entries": [
            {"rank": 11, "player": "x", "name": "xavier", "score": 48, "moves": 60,
             "time_ms": 100_000, "won": True},
            {"rank": 12, "player": "me", "name": "me", "score": 30, "moves": 70,
             "time_ms": 90_000, "won": False},
        ],
        "me": {"rank": 12, "player": "me", "name": "me", "score": 30, "moves": 70,
               "time_ms": 90_000, "won": False}}, LeaderboardReply)  # fmt: skip
    assert plain_text(leaderboard_lines(day, "me", PLAIN)) == "\n".join([
        "Daily Hopscotch, 2026-11-28: you are #12 of 40",
        "Seed 77 (the day is over)",
        "",
        " #    Player           Score Moves    Time",
        "   11 xavier       won    48    60    1:40",
        "▶  12 me                  30    70    1:30",
    ])  # fmt: skip
    ever = msgspec.convert({
        "game": "doublets", "date": "all", "total": 1,
        "entries": [{"rank": 1, "player": "x", "name": "xavier", "score": 96, "moves": 0,
                     "time_ms": 0, "won": False, "played": 3, "days_won": 1,
                     "best_streak": 2}]}, LeaderboardReply)  # fmt: skip
    assert plain_text(leaderboard_lines(ever, "me", Theme(unicode=False, colour=False))) == (
        "Daily Doublets, all time: 1 player\n"
        "\n"
        " #    Player       Score Played   Won Streak\n"
        "    1 xavier          96      3     1      2"
    )


def test_a_past_days_board_ends_with_its_par_and_winning_line() -> None:
    past = msgspec.convert({
        "game": "quatorze", "date": "2026-11-28", "total": 0, "seed": 5, "entries": [],
        "par": 3, "line": ["c0-c15", "c0-c2", "c0-c1"]}, LeaderboardReply)  # fmt: skip
    assert plain_text(leaderboard_lines(past, "me", PLAIN)) == "\n".join([
        "Daily Quatorze, 2026-11-28: 0 players",
        "Seed 5 (the day is over)",
        "",
        " #    Player           Score Moves    Time",
        "  (nobody yet)",
        "",
        "Par 3: a winning line found by the solver:",
        "c0-c15 c0-c2 c0-c1",
    ])  # fmt: skip


def test_a_resigned_attempt_says_so_on_the_board() -> None:
    """At equal score a resigned attempt ranks after one played out: the row says why."""
    day = msgspec.convert({
        "game": "quatorze", "date": "2026-11-28", "total": 2,
        "entries": [
            {"rank": 1, "player": "b", "name": "bea", "score": 8, "moves": 30,
             "time_ms": 600_000, "won": False},
            {"rank": 2, "player": "q", "name": "quin", "score": 8, "moves": 4,
             "time_ms": 5_000, "won": False, "resigned": True},
        ]}, LeaderboardReply)  # fmt: skip
    rows = plain_text(leaderboard_lines(day, "me", PLAIN)).splitlines()[-2:]
    assert rows == [
        "    1 bea                  8    30   10:00",
        "    2 quin                 8     4    0:05 resigned",
    ]
