"""What stays on the terminal once a game's screen has closed: the standings, the daily's
board and its share text, or how to carry on."""

from __future__ import annotations

from client_cli.game_kind import GameKind
from client_cli.game_session import GameSession
from client_cli.panels import leaderboard_lines, plain_text, result_lines
from client_cli.share import share_text
from client_cli.theme import Theme

SHARE_INTRO = "Share your result (no spoilers):"


def daily_share(session: GameSession, unicode: bool) -> str | None:
    """A finished daily's share text, with the player's rank on the board just fetched."""
    board = session.leaderboard
    if (
        session.kind is not GameKind.DAILY
        or board is None
        or board.me is None
        or board.date == "all"
    ):
        return None
    return share_text(board.game, board.date, board.me, board.total, session.scores, unicode)


def summary(session: GameSession, theme: Theme) -> str:
    """What stays on the terminal after the play screen closes."""
    plain = Theme(unicode=theme.unicode, colour=False)
    if session.result is not None:
        result, me, web = session.result, session.me, session.web
        notes = session.finish_notes()
        lines = result_lines(result, me, plain, session.time_up, web, keys=False, notes=notes)
        return plain_text(lines)
    if session.leaderboard is not None:
        board = plain_text(leaderboard_lines(session.leaderboard, session.me, plain))
        share = daily_share(session, theme.unicode)
        return board if share is None else f"{board}\n\n{SHARE_INTRO}\n{share}"
    state = session.state
    if session.kind is GameKind.RACE and session.race:
        if state is not None and not state.finished:
            return (
                f"Left race {session.race}; your game stays open.\n"
                f"Carry on with: solitaire race join {session.race}"
            )
        return f"Left race {session.race}."
    if session.kind is GameKind.PRACTICE:
        if state is not None and state.seed is not None:
            again = f"solitaire practice {session.game} --seed {state.seed}"
            text = f"Practice deal {state.seed}; play it again with: {again}"
            if state.finished:
                text += f"\nReplay this game with: solitaire replay {state.gid}"
            return text
        return "Bye."
    if state is not None and not state.finished:
        return f"Your daily attempt stays open.\nCarry on with: solitaire daily {session.game}"
    return "Bye."
