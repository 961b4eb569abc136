"""What the client makes of server messages (no I/O), and its reconnection backoff."""

from __future__ import annotations

import random
from typing import Any

import msgspec

import engine
import protocol as p
from client_cli.connection import Backoff
from client_cli.game_session import GameSession, clock
from client_cli.messages import Welcomed

DECODER = p.MessageDecoder()


def read(message: dict[str, Any]) -> Any:
    """A message as the client reads it off the wire: through the protocol's decoder."""
    decoded = DECODER.decode(msgspec.msgpack.encode(message))
    assert isinstance(decoded, p.Message), decoded
    return decoded


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
    s.apply(read({"t": "created", "race": "ABCDEF", "game": "quatorze", "max_players": 8,
                  "time_limit_s": None}))  # fmt: skip
    assert s.phase == "lobby" and s.race == "ABCDEF"
    players = [{"player": "p1", "name": "ann"}, {"player": "p2", "name": "bo"}]
    s.apply(
        read({"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": "p1", "players": players})
    )
    assert [seat.name for seat in s.seats.values()] == ["ann", "bo"]
    s.apply(read({"t": "start", "race": "ABCDEF", "game": "quatorze", "starts_at_ms": 5}))
    assert s.phase == "playing"
    s.apply(read(state(0)))
    s.apply(read(state(3, finished=True, over=True)))
    assert s.phase == "finished" and s.seats["p1"].score == 6
    s.apply(read(progress("p2", "bo", 10, 5)))
    assert [seat.name for seat in s.standings_panel()] == ["bo", "ann"]
    s.apply(read({"t": "result", "race": "ABCDEF", "game": "quatorze", "seed": 1, "standings": []}))
    assert s.phase == "result" and s.result is not None and s.result.seed == 1


def test_stale_and_foreign_states_are_ignored() -> None:
    s = GameSession(kind="race", game="quatorze", race="ABCDEF")
    assert s.apply(read(state(4)))
    assert not s.apply(read(state(3)))  # older than what is shown
    assert not s.apply(read(state(9, gid="r.ABCDEF.p9")))  # someone else's seat
    assert not s.apply(read(state(5, race="ZZZZZZ")))  # another race
    assert not s.apply(read(progress("p2", "bo", 1, 1, race="ZZZZZZ")))
    assert s.state is not None and s.state.n == 4


def test_a_daily_takes_its_first_state_only_from_its_own_request() -> None:
    daily = {**state(0, gid="d.quatorze.2026-11-29.p1"), "kind": "daily", "date": "2026-11-29"}
    del daily["race"]
    s = GameSession(kind="daily", game="quatorze")
    # An unfinished daily of another day, listed in welcome.active, is not today's.
    assert not s.apply(read({**daily, "gid": "d.quatorze.2026-11-28.p1", "date": "2026-11-28"}))
    assert s.apply(read(daily), reply=True)
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
    s.apply(read({"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": "p1",
                  "players": [{"player": "p1", "name": "ann"}]}))  # fmt: skip
    assert s.behind_after_reconnect()  # away too long, the player has left the lobby
    s.apply(read({"t": "start", "race": "ABCDEF", "game": "quatorze", "starts_at_ms": 5}))
    s.apply(read(state(2)))
    assert s.behind_after_reconnect()  # the other seats' moves meanwhile were missed
    s.apply(read(state(3, finished=True, over=True)))
    assert s.behind_after_reconnect()  # and maybe the result
    result = {"t": "result", "race": "ABCDEF", "game": "quatorze", "seed": 1, "standings": []}
    assert s.apply(read(result))
    assert not s.behind_after_reconnect()
    assert not s.apply(read(dict(result)))  # the same result sent again is nothing new
    assert s.phase == "result"
    assert not GameSession(kind="daily", game="quatorze").behind_after_reconnect()


def test_ones_own_row_has_ones_name_and_the_lobby_names_every_seat() -> None:
    s = GameSession(kind="race", game="quatorze", race="ABCDEF")
    welcome = {"t": "welcome", "v": 1, "player": "p1", "name": "ann", "token": "x", "active": []}
    s.apply(Welcomed(read(welcome), reconnected=False))
    # Back in a race under way: one's own game comes first, from the welcome.
    s.apply(read(state(2)), reply=True)
    assert s.seats["p1"].name == "ann"
    seats = [{"player": "p2", "name": "bob"}, {"player": "p1", "name": "Ann"}]
    s.apply(read({"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": "p2",
                  "players": seats}))  # fmt: skip
    assert [(p.player, p.name) for p in s.standings_panel()] == [("p1", "Ann"), ("p2", "bob")]


def lobby(*players: tuple[str, str]) -> dict:
    return {"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": players[0][0],
            "players": [{"player": p, "name": n} for p, n in players]}  # fmt: skip


def test_seats_not_heard_from_since_the_deal_have_the_deals_score() -> None:
    s = GameSession(kind="race", game="quatorze", me="p1", my_name="ann")
    s.apply(read(lobby(("p1", "ann"), ("p2", "bo"))))
    s.apply(read({"t": "start", "race": "ABCDEF", "game": "quatorze", "starts_at_ms": 5}))
    s.apply(read({**state(0), "score": 1}))  # as Doublets deals: one card on the foundation
    assert [(x.name, x.score, x.moves) for x in s.standings_panel()] == [
        ("ann", 1, 0), ("bo", 1, 0)]  # fmt: skip
    s.apply(read(progress("p2", "bo", 3, 2)))
    s.apply(read({**state(1), "score": 2}))
    assert (s.seats["p2"].score, s.seats["p1"].score) == (3, 2)


def test_a_lobby_heard_during_play_names_seats_without_guessing_their_figures() -> None:
    """Coming back to a race under way: the welcome brings one's own game, `join` the lobby."""
    s = GameSession(kind="race", game="quatorze", me="p1", my_name="ann", race="ABCDEF")
    s.apply(read(state(3)))
    s.apply(read(lobby(("p1", "ann"), ("p2", "bo"))))
    assert (s.seats["p1"].name, s.seats["p1"].score, s.seats["p1"].moves) == ("ann", 6, 3)
    assert (s.seats["p2"].name, s.seats["p2"].score, s.seats["p2"].moves) == ("bo", None, None)
    assert s.remaining_ms() is None  # no time limit known yet
    # What a server may send next: the race's start and where every seat is.
    s.apply(read({"t": "start", "race": "ABCDEF", "game": "quatorze", "starts_at_ms": 1000,
                  "ends_at_ms": 601_000}))  # fmt: skip
    s.apply(read(progress("p2", "bo", 4, 2)))
    assert (s.seats["p2"].score, s.seats["p2"].moves) == (4, 2)
    assert s.limit_ms() == 600_000 and s.remaining_ms() is not None
    assert s.phase == "playing"


def test_a_result_while_ones_game_is_open_means_times_up() -> None:
    s = GameSession(kind="race", game="quatorze", me="p1", race="ABCDEF")
    s.apply(read({"t": "start", "race": "ABCDEF", "game": "quatorze", "starts_at_ms": 0,
                  "ends_at_ms": 30_000}))  # fmt: skip
    s.apply(read(state(0)))
    assert not s.time_up and s.remaining_ms() is not None
    standing = {"rank": 1, "player": "p1", "name": "ann", "score": 0, "moves": 0,
                "time_ms": 30_000, "won": False, "resigned": False}  # fmt: skip
    s.apply(read({"t": "result", "race": "ABCDEF", "game": "quatorze", "seed": 1,
                  "standings": [standing]}))  # fmt: skip
    assert s.time_up and s.out_of_time()
    assert (s.elapsed_ms(), s.remaining_ms()) == (30_000, 0)
    # A game that ended by itself before the result is no time-up.
    done = GameSession(kind="race", game="quatorze", me="p1", race="ABCDEF")
    done.apply(read(state(0)))
    done.apply(read(state(1, finished=True, over=True)))
    done.apply(read({"t": "result", "race": "ABCDEF", "game": "quatorze", "seed": 1,
                     "standings": [standing]}))  # fmt: skip
    assert not done.time_up


def test_each_message_says_the_phase_it_entered() -> None:
    s = GameSession(kind="race", game="quatorze", me="p1", race="ABCDEF")
    players = [{"player": "p1", "name": "ann"}]
    lobby = read({"t": "lobby", "race": "ABCDEF", "game": "quatorze", "host": "p1",
                  "players": players})  # fmt: skip
    assert s.apply(lobby).entered == "lobby"
    assert s.apply(lobby).entered is None  # still in the lobby: nothing entered
    assert s.apply(read(state(0))).entered == "playing"
    assert s.apply(read(state(1))).entered is None
    # A lobby heard once the race runs (as after joining again) does not go back to it.
    assert s.apply(lobby) and s.phase == "playing"
    assert s.apply(read(state(2, finished=True, over=True))).entered == "finished"
    result = {"t": "result", "race": "ABCDEF", "game": "quatorze", "seed": 1, "standings": []}
    assert s.apply(read(result)).entered == "result"
    assert s.apply(read(state(2, finished=True, over=True))).entered is None


def test_a_practice_games_end_taken_back_plays_on() -> None:
    practice = {**state(0, gid="p.quatorze.n1.p1"), "kind": "practice"}
    del practice["race"]
    s = GameSession(kind="practice", game="quatorze")
    assert s.apply(read(practice), reply=True).entered == "playing"
    assert s.apply(read({**practice, "n": 4, "over": True, "finished": True})).entered == (
        "finished"
    )
    # The undo's reply: the position before the last move, open again.
    assert s.apply(read({**practice, "n": 3}), reply=True).entered == "playing"


def test_a_daily_is_done_once_its_rank_is_in_and_only_then() -> None:
    daily = {**state(0, gid="d.quatorze.2026-11-29.p1"), "kind": "daily", "date": "2026-11-29"}
    del daily["race"]
    s = GameSession(kind="daily", game="quatorze")
    s.apply(read(daily), reply=True)
    # A daily's finished state with n below the shown one's is not taken: the same n then.
    assert s.apply(read({**daily, "over": True, "finished": True})).entered == "finished"
    assert s.ranked().entered == "done"
    assert s.apply(read({**daily, "n": 1})).entered is None and s.phase == "done"
