"""What the client makes of server messages (no I/O), and its reconnection backoff."""

from __future__ import annotations

import random

import engine
from client_cli.connection import Backoff
from client_cli.session import GameSession, clock


def state(n: int, gid: str = "r.ABCDEF.p1", **extra: object) -> dict:
    game = engine.new_game("quatorze", 1)
    return {"t": "state", "gid": gid, "kind": "race", "game": "quatorze", "n": n,
            "view": game.view(), "score": 2 * n, "won": False, "over": False,
            "finished": False, "elapsed_ms": 1000 * n, "race": "ABCDEF", **extra}  # fmt: skip


def progress(player: str, name: str, score: int, moves: int, **extra: object) -> dict:
    return {"t": "progress", "race": "ABCDEF", "player": player, "name": name, "score": score,
            "moves": moves, "won": False, "over": False, "finished": False,
            "elapsed_ms": 0, **extra}  # fmt: skip


def test_a_race_goes_from_lobby_to_play_to_result() -> None:
    s = GameSession(kind="race", game="quatorze", me="p1")
    s.apply({"t": "created", "race": "ABCDEF", "game": "quatorze", "max_players": 8,
             "time_limit_s": None})  # fmt: skip
    assert s.phase == "lobby" and s.race == "ABCDEF"
    players = [{"player": "p1", "name": "ann"}, {"player": "p2", "name": "bo"}]
    s.apply({"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": "p1", "players": players})
    assert [seat.name for seat in s.seats.values()] == ["ann", "bo"]
    s.apply({"t": "start", "race": "ABCDEF", "game": "quatorze", "starts_at_ms": 5})
    assert s.phase == "playing"
    s.apply(state(0))
    s.apply(state(3, finished=True, over=True))
    assert s.phase == "finished" and s.seats["p1"].score == 6
    s.apply(progress("p2", "bo", 10, 5))
    assert [seat.name for seat in s.standings_panel()] == ["bo", "ann"]
    s.apply({"t": "result", "race": "ABCDEF", "game": "quatorze", "seed": 1, "standings": []})
    assert s.phase == "result" and s.result is not None and s.result.seed == 1


def test_stale_and_foreign_states_are_ignored() -> None:
    s = GameSession(kind="race", game="quatorze", race="ABCDEF")
    assert s.apply(state(4))
    assert not s.apply(state(3))  # older than what is shown
    assert not s.apply(state(9, gid="r.ABCDEF.p9"))  # someone else's seat
    assert not s.apply(state(5, race="ZZZZZZ"))  # another race
    assert not s.apply(progress("p2", "bo", 1, 1, race="ZZZZZZ"))
    assert s.state is not None and s.state.n == 4


def test_a_daily_takes_its_first_state_only_from_its_own_request() -> None:
    daily = {**state(0, gid="d.quatorze.2026-11-29.p1"), "kind": "daily", "date": "2026-11-29"}
    del daily["race"]
    s = GameSession(kind="daily", game="quatorze")
    # An unfinished daily of another day, listed in welcome.active, is not today's.
    assert not s.apply({**daily, "gid": "d.quatorze.2026-11-28.p1", "date": "2026-11-28"})
    assert s.apply(daily, reply=True)
    assert s.state is not None and s.state.date == "2026-11-29"


def test_clock_format() -> None:
    assert clock(0) == "0:00"
    assert clock(83_999) == "1:23"
    assert clock(3_600_000 + 62_000) == "1:01:02"


def test_backoff_doubles_to_a_cap_with_jitter() -> None:
    backoff = Backoff(first=0.5, cap=10.0, rng=random.Random(1))
    delays = [backoff.next_delay() for _ in range(8)]
    bases = [0.5, 1, 2, 4, 8, 10, 10, 10]
    for delay, base in zip(delays, bases, strict=True):
        assert 0.8 * base <= delay <= 1.2 * base
    backoff.reset()
    assert backoff.next_delay() <= 0.6


def test_after_a_reconnect_a_race_not_over_joins_again_to_catch_up() -> None:
    s = GameSession(kind="race", game="quatorze", me="p1", race="ABCDEF")
    assert not s.behind_after_reconnect()  # not even in the lobby yet
    s.apply({"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": "p1",
             "players": [{"player": "p1", "name": "ann"}]})  # fmt: skip
    assert s.behind_after_reconnect()  # away too long, the player has left the lobby
    s.apply({"t": "start", "race": "ABCDEF", "game": "quatorze", "starts_at_ms": 5})
    s.apply(state(2))
    assert s.behind_after_reconnect()  # the other seats' moves meanwhile were missed
    s.apply(state(3, finished=True, over=True))
    assert s.behind_after_reconnect()  # and maybe the result
    result = {"t": "result", "race": "ABCDEF", "game": "quatorze", "seed": 1, "standings": []}
    assert s.apply(result)
    assert not s.behind_after_reconnect()
    assert not s.apply(dict(result))  # the same result sent again is nothing new
    assert s.phase == "result"
    assert not GameSession(kind="daily", game="quatorze").behind_after_reconnect()


def test_ones_own_row_has_ones_name_and_the_lobby_names_every_seat() -> None:
    s = GameSession(kind="race", game="quatorze", race="ABCDEF")
    s.apply({"t": "welcome", "v": 1, "player": "p1", "name": "ann", "token": "x"})
    # Back in a race under way: one's own game comes first, from the welcome.
    s.apply(state(2), reply=True)
    assert s.seats["p1"].name == "ann"
    seats = [{"player": "p2", "name": "bob"}, {"player": "p1", "name": "Ann"}]
    s.apply({"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": "p2", "players": seats})
    assert [(p.player, p.name) for p in s.standings_panel()] == [("p1", "Ann"), ("p2", "bob")]
