"""What the client says to a person, with the real `solitaire` program in real terminals
against a real server: ranked play explains why there is no hint or undo, examples are
the game's own moves, the panel offers `deal` only where there is one, cards in the
server's reasons are spelled as the board shows them, the help fits the screen, and bad
race options are refused in words."""

from __future__ import annotations

import re
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from client_deals import QUATORZE_SEED
from client_harness import SOLITAIRE, Terminal, race_of_two
from support.server_proc import ServerProcess
from support.ws_client import Client

from client_cli.messages import ServerError


def notice(screen: str) -> str:
    """The notice lines (the two lines above the move line), joined."""
    return " ".join(screen.splitlines()[21:23]).strip()


def test_ranked_play_explains_and_gives_the_games_own_examples(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, _bob, _code = race_of_two(terminals, server, "quatorze", QUATORZE_SEED)
    alice.enter("hint")
    screen = alice.wait_for(r"Hint works only in practice games").string
    assert "races and dailies are ranked, so there is no undo or hint" in notice(screen)
    alice.enter("u")
    alice.wait_for(r"Undo works only in practice games")
    alice.enter("what?")
    screen = alice.wait_for(r"'what\?' is not a move \(e\.g\. c3-c8\)").string
    assert "t3-f" not in screen and "w-r2" not in screen
    # Quatorze has no deal: the panel does not offer one, and `d` says so.
    assert "Tab: legal moves" in screen and "d: deal" not in screen
    alice.enter("d")
    alice.wait_for(r"This game has no deal; its moves look like c3-c8\.")
    # The help is the game's, and all of it is on the screen (two lines of 80 columns).
    alice.enter("help")
    screen = alice.wait_for(r"Moves: c3-c8 removes the pair").string
    shown = notice(screen)
    assert shown.endswith("Commands: resign, quit."), screen
    assert "t3-f" not in shown and "deal" not in shown
    alice.wait_for(r"Moves\s+0")


def test_the_servers_reasons_spell_cards_as_the_board_does(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, _bob, _code = race_of_two(terminals, server, "bakers_game", 1)
    # Deal 1 (checked by hand in test_boards.py): t7's top is 10♣, t0's is 6♠. The server
    # says "TC does not go on 6S"; the board shows those cards as 10♣ and 6♠.
    screen = alice.wait_for(r"\[10♣\]").string
    assert "[ 6♠]" in screen and "d: deal" not in screen
    alice.enter("t7-t0")
    screen = alice.wait_for(r"Illegal move t7-t0: 10♣ does not go on 6♠").string
    assert "TC" not in notice(screen) and "6S" not in notice(screen)


def test_the_resign_of_a_race_is_asked_first_and_can_be_called_off(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice, bob, _code = race_of_two(terminals, server, "quatorze", QUATORZE_SEED)
    alice.enter("resign")
    alice.wait_for(r"Resign\? Your game in this race ends with the score it has now")
    alice.wait_for(r"^resign\? y/n>")
    alice.enter("n")
    alice.wait_for(r"Not resigned: play on\.")
    alice.wait_for(r"^move>")
    alice.enter("c0")  # still playing: the only pair of c0 is played
    alice.wait_for(r"Moves\s+1")
    bob.wait_for(r"│.{2}alice\s+2\s+1")


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"XDG_CONFIG_HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run([SOLITAIRE, *args], capture_output=True, text=True, env=env,
                          timeout=30, stdin=subprocess.DEVNULL)  # fmt: skip


@pytest.mark.parametrize(
    ("option", "said"),
    [
        (["--time-limit", "5"], "a time limit is 30 to 7200 seconds (2 hours); 5 is too short"),
        (["--time-limit", "9000"], "9000 is too long"),
        (["--time-limit", "ten"], "'ten' is not a whole number of seconds"),
        (["--max-players", "1"], "a race seats 2 to 16 players, not 1"),
        (["--bots", "20"], "a race has 0 to 15 bots, not 20"),
        (["--bots", "8"], "8 bots and you need 9 seats, and the race has 8"),
        (["--seed", "0"], "a deal number is 1 to 2147483647"),
    ],
)
def test_bad_race_options_are_refused_in_words(
    server: ServerProcess, tmp_path: Path, option: list[str], said: str
) -> None:
    out = run_cli(tmp_path, "--plain", "--server", server.ws_url, "race", "new", "quatorze",
                  *option)  # fmt: skip
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert said in out.stderr, out.stderr
    assert "Expected" not in out.stderr and "$." not in out.stderr
    assert out.stdout == ""  # refused before anything was sent: no race was made


async def test_the_servers_validation_text_is_said_in_words(server: ServerProcess) -> None:
    """Should the server's limits ever differ from the client's, its refusal still reads
    as words: the texts here are the real server's."""
    from client_cli.failures import in_words

    async with Client.connect(server.ws_url) as client:
        await client.hello("ann")
        short = await client.request({"t": "create", "game": "quatorze", "time_limit_s": 5})
        crowd = await client.request({"t": "create", "game": "quatorze", "max_players": 99})
    assert "Expected" in short["msg"]  # the raw text this is about
    assert in_words(ServerError(short["code"], short["msg"])) == (
        "the server refused: the time limit (--time-limit, in seconds) must be at least 30"
    )
    assert in_words(ServerError(crowd["code"], crowd["msg"])) == (
        "the server refused: the number of players (--max-players) must be at most 16"
    )
    # Anything else is passed on as the server said it.
    assert in_words(ServerError("race_full", "race 7K3M2P is full")) == (
        "race 7K3M2P is full (race_full)"
    )


def test_the_help_of_each_game_fits_two_lines_of_80_columns() -> None:
    from client_cli.moves import help_text

    for game in ("doublets", "quatorze", "bakers_game", "hopscotch"):
        for practice in (False, True):
            text = help_text(game, practice)
            assert len(textwrap.wrap(text, 80)) <= 2, text
            assert ("undo (u), hint (i)" in text) == practice
    assert "deal (d)" in help_text("doublets") and "deal" not in help_text("bakers_game")
    assert re.search(r"w-f2, w-r1, r1-f0", help_text("hopscotch"))
