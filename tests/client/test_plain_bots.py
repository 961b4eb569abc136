"""`--plain` mode, used the way a bot uses it: moves on stdin, JSON lines on stdout."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from client_deals import QUATORZE_SEED, QUATORZE_WIN
from client_harness import Bot
from support.server_proc import ServerFactory, ServerProcess


@pytest.fixture
def bots(tmp_path: Path) -> Iterator[list[Bot]]:
    started: list[Bot] = []
    yield started
    for bot in started:
        bot.kill()


def seat_host_and_guest(
    bots: list[Bot], tmp_path: Path, host_url: str, guest_url: str
) -> tuple[Bot, Bot, str]:
    """hostbot creates a Quatorze race through `host_url`, guestbot joins it through
    `guest_url`; returns once both have seen the full lobby: (host, guest, race code)."""
    host = Bot(tmp_path / "host", "--server", host_url, "--name", "hostbot",
               "race", "new", "quatorze", "--seed", str(QUATORZE_SEED))  # fmt: skip
    bots.append(host)
    code = host.next("created")["race"]
    guest = Bot(tmp_path / "guest", "--server", guest_url, "--name", "guestbot",
                "race", "join", code)  # fmt: skip
    bots.append(guest)
    lobby = guest.next("lobby")
    assert {p["name"] for p in lobby["players"]} == {"hostbot", "guestbot"}
    while len(host.next("lobby")["players"]) < 2:
        pass
    return host, guest, code


def test_two_bots_race_and_the_winner_checks_each_move_against_legal(
    server: ServerProcess, bots: list[Bot], tmp_path: Path
) -> None:
    host, guest, code = seat_host_and_guest(bots, tmp_path, server.ws_url, server.ws_url)
    # The guest's move waits for the start; the host starts the race.
    guest.send("resign")
    host.send("start")
    assert host.next("start")["race"] == code
    state = host.next("state")
    assert state["n"] == 0 and state["kind"] == "race" and state["race"] == code
    # An illegal move: the server's reason comes back, and no state changes.
    host.send("c0-c1")
    error = host.next("error")
    assert error["code"] == "illegal_move" and error["msg"]
    for n, move in enumerate(QUATORZE_WIN):
        assert move in state["legal"], (n, move, state["legal"])
        host.send(move)
        state = host.next("state")
        assert state["n"] == n + 1
    assert state["won"] and state["finished"] and state["score"] == 52
    assert state["legal"] == []
    for bot in (host, guest):
        result = bot.next("result", timeout=20)
        assert result["seed"] == QUATORZE_SEED
        ranks = [(s["rank"], s["name"], s["won"], s["resigned"]) for s in result["standings"]]
        assert ranks == [(1, "hostbot", True, False), (2, "guestbot", False, True)]
    # The guest saw the host's progress as it happened.
    progress = [m for m in guest.seen if m["t"] == "progress" and m["name"] == "hostbot"]
    assert [m["moves"] for m in progress][-1] == 26
    host.close_input()
    guest.close_input()
    assert host.wait() == 0 and guest.wait() == 0


def test_a_bot_reads_short_forms_and_is_told_when_a_line_is_not_a_move(
    server: ServerProcess, bots: list[Bot], tmp_path: Path
) -> None:
    host = Bot(tmp_path / "host", "--server", server.ws_url, "--name", "solo",
               "race", "new", "quatorze", "--seed", str(QUATORZE_SEED))  # fmt: skip
    bots.append(host)
    code = host.next("created")["race"]
    guest = Bot(tmp_path / "guest", "--server", server.ws_url, "race", "join", code)
    bots.append(guest)
    guest.next("lobby")
    host.send("start")
    host.next("state")
    host.send("c2")  # two pairs hold c2: nothing is sent
    notice = host.next("notice")
    assert "c2-c4" in notice["msg"] and "c2-c7" in notice["msg"]
    host.send("c0")  # one pair holds c0
    assert host.next("state")["n"] == 1
    host.send("what?")
    assert "not a move" in host.next("notice")["msg"]


def test_a_result_sent_while_the_client_was_away_is_fetched_after_reconnecting(
    servers: ServerFactory, bots: list[Bot], tmp_path: Path
) -> None:
    """The host wins, its server dies, the race ends elsewhere; back, the host still gets it."""
    first, second = servers.start(), servers.start()  # two servers on one store
    host, guest, code = seat_host_and_guest(bots, tmp_path, first.ws_url, second.ws_url)
    host.send("start")
    host.next("state")
    assert guest.next("state")["race"] == code
    for move in QUATORZE_WIN:
        host.send(move)
        state = host.next("state")
    assert state["finished"] and state["won"]
    # The host's game is over and acknowledged; the race waits for the guest. The host's
    # server dies; the guest, on the other server, resigns: the race ends, and its result
    # goes out while the host has no connection at all.
    first.kill()
    assert "Connection lost" in host.next("status")["msg"]
    guest.send("resign")
    sent = guest.next("result", timeout=20)
    assert [s["name"] for s in sent["standings"]] == ["hostbot", "guestbot"]
    # The host's server is back: the reconnected host finds its game gone from the welcome's
    # active games, asks for the race again, and prints the result the guest got.
    first.start()
    got = host.next("result", timeout=40)
    assert got == sent
    kinds = [m["t"] for m in host.seen]
    assert kinds[-2:] == ["lobby", "result"]
    assert any(m["t"] == "status" and "Reconnected" in m["msg"] for m in host.seen)
    host.close_input()
    guest.close_input()
    assert host.wait() == 0 and guest.wait() == 0
