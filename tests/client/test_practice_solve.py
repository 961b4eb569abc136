"""`solitaire practice` (undo and hints, on the play screen and in --plain) and
`solitaire solve`, driven as a user would, against a real server."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from client_harness import SOLITAIRE, Bot, Terminal
from support.server_proc import ServerFactory, ServerProcess

import engine
from client_cli.practice_deals import told, winnable_deal
from engine.solve import solve

SEED = 2  # a Baker's Game deal the solver wins


def test_practice_on_the_play_screen_hint_then_undo(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    term = terminals("pat", "--server", server.ws_url, "--name", "pat",
                     "practice", "bakers_game", "--seed", str(SEED))  # fmt: skip
    term.wait_for(rf"practice {SEED}")
    term.wait_for(r"Moves\s+0\b")
    start_screen = term.screen()
    term.enter("hint")
    hint = term.wait_for(r"Hint: (\S+) \(([a-z ]+)\)")
    move = hint.group(1)
    assert move in engine.new_game("bakers_game", SEED).legal_moves()
    term.enter(move)
    term.wait_for(r"Moves\s+1\b")
    term.wait_for(rf"Played {re.escape(move)}")
    term.enter("u")
    term.wait_for(r"Move taken back")
    screen = term.wait_for(r"Moves\s+0\b").string

    def board(text: str) -> list[str]:  # the cards left of the side panel, not the clock
        return [row.split("│")[0] for row in text.splitlines()[1:18]]

    assert board(screen) == board(start_screen)
    term.enter("quit")
    term.wait_for(rf"solitaire practice bakers_game --seed {SEED}")


def test_practice_in_plain_mode_moves_hints_and_undoes(
    server: ServerProcess, tmp_path: Path
) -> None:
    bot = Bot(tmp_path / "plain", "--server", server.ws_url, "--name", "plainp",
              "practice", "quatorze", "--seed", "7")  # fmt: skip
    try:
        first = bot.next("state")
        assert first["kind"] == "practice" and first["seed"] == 7 and first["n"] == 0
        bot.send("hint")
        hint = bot.next("hint")
        assert hint["move"] in first["legal"] and hint["verdict"] == "won"
        bot.send(hint["move"])
        after = bot.next("state")
        assert after["n"] == 1
        bot.send("undo")
        undone = bot.next("state")
        assert undone["n"] == 0 and undone["view"] == first["view"]
        bot.close_input()
        assert bot.wait() == 0
    finally:
        bot.kill()


def test_solve_prints_a_line_that_wins_on_the_engine() -> None:
    for game, seed in (("bakers_game", SEED), ("quatorze", 5), ("doublets", 3)):
        out = subprocess.run([SOLITAIRE, "--plain", "solve", game, str(seed), "--budget-s", "20"],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
        assert out.returncode == 0, out.stderr
        answer = json.loads(out.stdout)
        assert answer["verdict"] == "won" and answer["par"] == len(answer["moves"])
        assert answer["nodes"] > 0 and answer["seconds"] >= 0
        assert engine.replay(game, seed, answer["moves"]).won
        text = subprocess.run([SOLITAIRE, "solve", game, str(seed), "--budget-s", "20"],
                              capture_output=True, text=True, timeout=60).stdout  # fmt: skip
        assert text.startswith(f"{game} deal {seed}: won\n")
        assert re.search(r"searched \d+ positions in [\d.]+ s", text)
        count = int(re.search(r"winning line, (\d+) moves:", text).group(1))
        printed = text.split("moves:\n", 1)[1].split()
        assert len(printed) == count and engine.replay(game, seed, printed).won
    # A proven loss (fc-solve agrees on Microsoft deal 10, tests/solve/) prints no line.
    text = subprocess.run([SOLITAIRE, "solve", "bakers_game", "10"], capture_output=True,
                          text=True, timeout=60).stdout  # fmt: skip
    assert "proven unwinnable" in text and "winning line" not in text
    bad = subprocess.run([SOLITAIRE, "solve", "bakers_game", "0"], capture_output=True, text=True)
    assert bad.returncode == 2 and "1 to 2147483647" in bad.stderr


def test_race_new_with_bots_in_plain_mode(servers: ServerFactory, tmp_path: Path) -> None:
    server = servers.start(env={"SOLITAIRE_BOT_THINK_SCALE": "0.01"})
    bot = Bot(tmp_path / "host", "--server", server.ws_url, "--name", "hostess",
              "race", "new", "quatorze", "--bots", "2", "--bot-strength", "hard",
              "--max-players", "3")  # fmt: skip
    try:
        lobby = bot.next("lobby")
        names = sorted(p["name"] for p in lobby["players"])
        assert len(names) == 3 and names[:2] == ["Ada (bot)", "Bram (bot)"], names
        bot.send("start")
        bot.next("state")
        bot.send("resign")
        result = bot.next("result", timeout=60)
        by_name = {s["name"]: s for s in result["standings"]}
        assert by_name["Ada (bot)"]["won"] and by_name["Bram (bot)"]["won"]
        assert by_name["hostess"]["rank"] == 3 and by_name["hostess"]["resigned"]
        bot.close_input()
        assert bot.wait() == 0
    finally:
        bot.kill()


def test_a_practice_deal_is_one_the_solver_wins_unless_any_deal_is_asked(
    server: ServerProcess, tmp_path: Path
) -> None:
    """Without --seed the deal is winnable: the solver wins it (a search of its own here,
    with the client's bound), and the client says so; --any-deal takes a deal unsearched."""
    from client_cli.practice_deals import BUDGET_NODES, BUDGET_S

    for run in range(3):
        bot = Bot(tmp_path / f"p{run}", "--server", server.ws_url, "--name", f"pr{run}",
                  "practice", "bakers_game")  # fmt: skip
        try:
            state = bot.next("state")
            notice = bot.next("notice")
            seed = state["seed"]
            assert notice["msg"].startswith(f"Deal {seed} is winnable: the solver won it.")
            result = solve("bakers_game", seed, budget_nodes=BUDGET_NODES, budget_s=BUDGET_S)
            assert result.verdict == "won"
        finally:
            bot.kill()
    bot = Bot(tmp_path / "any", "--server", server.ws_url, "--name", "anyd",
              "practice", "bakers_game", "--any-deal")  # fmt: skip
    try:
        assert bot.next("state")["kind"] == "practice"
        assert not any(m.get("t") == "notice" and "winnable" in m["msg"] for m in bot.seen)
    finally:
        bot.kill()


def test_the_deal_picker_skips_a_deal_the_solver_proves_unwinnable() -> None:
    # Baker's Game 500082800: the solver proves it unwinnable within 0.05 s.
    assert solve("bakers_game", 500082800, budget_s=1.0).verdict == "unwinnable"
    picked = winnable_deal("bakers_game", 500082800)
    assert picked.proven and picked.seed != 500082800 and picked.tried >= 2
    assert solve("bakers_game", picked.seed, budget_s=1.0).verdict == "won"
    # When nothing is won within the bound the first deal is dealt, and said unproven.
    unproven = winnable_deal("bakers_game", 500082800, budget_nodes=1, max_candidates=2)
    assert (unproven.seed, unproven.proven, unproven.tried) == (500082800, False, 2)
    assert "proven winnable" in told(unproven) and "no deal of 2 tried" in told(unproven)
