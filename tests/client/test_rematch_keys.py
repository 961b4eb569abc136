"""Rematches with the real `solitaire` program against a real server: one key on the
standings asks for one (the asker's screen goes to the new lobby), and one key on the other
player's standings joins it; in `--plain` mode, the invitation is a JSON line and
`rematch` a line of input."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from client_deals import QUATORZE_SEED
from client_harness import Bot, Terminal
from support.server_proc import ServerProcess

CODE = re.compile(r"Race code\s+([2-9A-HJ-NP-Z]{12})")


def resign(player: Terminal) -> None:
    player.enter("resign")
    player.wait_for(r"Resign\? Your game in this race ends")
    player.enter("y")


def test_one_key_asks_for_a_rematch_and_one_key_joins_it(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice = terminals("alice", "--server", server.ws_url, "--name", "alice",
                      "race", "new", "quatorze", "--seed", str(QUATORZE_SEED),
                      "--time-limit", "600")  # fmt: skip
    old = alice.wait_for(CODE.pattern).group(1)
    bob = terminals("bob", "race", "join", old, "--server", server.ws_url, "--name", "bob")
    bob.wait_for(r"Waiting for the host to start")
    alice.wait_for(r"^  bob\s+│")
    alice.enter()
    for player in (alice, bob):
        player.wait_for(r"Moves\s+0")
        resign(player)
    for player in (alice, bob):
        player.wait_for(rf"Race {old} is over")
        player.wait_for(r"Press Enter to leave, r for a rematch\.")
    # bob presses r, and only r: he is the host of a new race, in its lobby.
    bob.keys("r")
    new = bob.wait_for(CODE.pattern).group(1)
    assert new != old
    screen = bob.wait_for(r"Press Enter to start the race\.").string
    assert "bob (host) (you)" in screen and f"/r/{new}" in screen
    assert "time limit: 600 s" in screen
    # alice's standings say who asks and where; r takes her there.
    screen = alice.wait_for(rf"bob asks for a rematch: press r to join race {new}\.").string
    # On the standings too, where they stay whatever the line under the board says next.
    assert f"Race {old} is over" in screen and "bob asks for a rematch:" in screen
    assert f"press r to join race {new}, Enter to leave." in screen
    alice.keys("r")
    screen = alice.wait_for(r"Waiting for the host to start").string
    assert new in screen and "alice (you)" in screen and "bob (host)" in screen
    bob.wait_for(r"^  alice\s+│")
    # The rematch is a race like the first: bob starts it, both play the new deal.
    bob.enter()
    for player in (alice, bob):
        screen = player.wait_for(r"Moves\s+0").string
        assert f"race {new}" in screen
    for player in (alice, bob):
        resign(player)
    for player in (alice, bob):
        player.wait_for(rf"Race {new} is over")
    # The standings of the rematch, with a seed of its own, and its replays' web page (the
    # rematch keeps the server's address).
    screen = alice.wait_for(rf"{re.escape(server.http_url)}/replay/{new}:\d").string
    seed = re.search(r"Seed (\d+)", screen)
    assert seed is not None and seed.group(1) != str(QUATORZE_SEED)
    assert f"solitaire replay {new}:" in screen
    alice.enter()
    after = alice.wait_for(r"\[exited 0\]").string
    assert f"Race {new} is over" in after
    # Left on the terminal: the standings and their replay lines, not the keys.
    assert f"solitaire replay {new}:" in after and "Press Enter" not in after


@pytest.fixture
def bots() -> Iterator[list[Bot]]:
    started: list[Bot] = []
    yield started
    for bot in started:
        bot.kill()


def test_plain_mode_prints_the_invitation_and_takes_a_rematch_line(
    server: ServerProcess, bots: list[Bot], tmp_path: Path
) -> None:
    host = Bot(tmp_path / "host", "--server", server.ws_url, "--name", "hostbot",
               "race", "new", "doublets", "--max-players", "3")  # fmt: skip
    bots.append(host)
    old = host.next("created")["race"]
    guest = Bot(tmp_path / "guest", "--server", server.ws_url, "--name", "guestbot",
                "race", "join", old)  # fmt: skip
    bots.append(guest)
    guest.next("lobby")
    while len(host.next("lobby")["players"]) < 2:
        pass
    host.send("start")
    guest.next("state")
    for bot in (host, guest):
        bot.send("resign")
    for bot in (host, guest):
        assert bot.next("result")["race"] == old
    # The result does not end a race's session: the guest asks for a rematch.
    guest.send("rematch")
    created = guest.next("created")
    new = created["race"]
    assert new != old and created["max_players"] == 3
    lobby = guest.next("lobby")
    assert lobby["race"] == new and lobby["host"] == lobby["players"][0]["player"]
    offer = host.next("rematch")
    assert offer["race"] == old and offer["next"] == new and offer["name"] == "guestbot"
    host.send("rematch")  # joins the race offered
    assert [p["name"] for p in host.next("lobby")["players"]] == ["guestbot", "hostbot"]
    assert [p["name"] for p in guest.next("lobby")["players"]] == ["guestbot", "hostbot"]
    # The rematch's host starts it; the first race's host plays in it.
    guest.send("start")
    assert host.next("start")["race"] == new
    assert host.next("state")["race"] == new
    for bot in (host, guest):
        bot.close_input()
        assert bot.wait() == 0
