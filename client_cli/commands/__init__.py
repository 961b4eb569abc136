"""The `solitaire` subcommands, registered from this one list.

A subcommand is a module with `register(subparsers)`, which adds its parser
(through `add_command`, so it takes the common options) and sets `func` to a
callable taking the parsed arguments and returning the exit status. To add
one (e.g. `solitaire solve`), write the module and name it here.
"""

from __future__ import annotations

import argparse
import importlib
import textwrap
from typing import Any, TypeAlias

from client_cli.config import MAX_NAME

SUBCOMMAND_MODULES: tuple[str, ...] = (
    "client_cli.commands.race",
    "client_cli.commands.quick",
    "client_cli.commands.challenge",
    "client_cli.commands.watch",
    "client_cli.commands.daily",
    "client_cli.commands.leaderboard",
    "client_cli.commands.ratings",
    "client_cli.commands.stats",
    "client_cli.commands.practice",
    "client_cli.commands.solve",
    "client_cli.commands.account",
    "client_cli.commands.replay",
)

# What `ArgumentParser.add_subparsers()` returns (argparse names it only privately).
# A string: the class takes no type argument at run time.
Subcommands: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def register_all(subparsers: Subcommands) -> None:
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(name).register(subparsers)


def add_common_options(parser: argparse.ArgumentParser, defaults: bool) -> None:
    """Options every command takes, before or after the subcommand's name.

    On subcommands the defaults are suppressed so that `solitaire --plain race ...`
    is not undone by the subcommand's own (unset) copy of the option."""

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    parser.add_argument(
        "--server",
        metavar="URL",
        default=default(None),
        help="server to use, e.g. ws://host:8765/ws or host:8765 (saved once a session "
        "with it succeeds; default: $SOLITAIRE_SERVER, else the saved one, else "
        "ws://127.0.0.1:8765/ws)",
    )
    parser.add_argument(
        "--name",
        default=default(None),
        help=f"your name as others see it, 1 to {MAX_NAME} characters (remembered)",
    )
    parser.add_argument(
        "--plain",
        action="store_true",
        default=default(False),
        help="no screen: read move strings from stdin, write one JSON object per line",
    )
    parser.add_argument(
        "--ascii",
        action="store_true",
        default=default(False),
        help="letters instead of suit symbols (C D H S) for terminals without them",
    )
    parser.add_argument(
        "--no-color",
        action="store_true",
        default=default(False),
        help="no colours (also when the NO_COLOR environment variable is set)",
    )
    parser.add_argument(
        "--log-file",
        metavar="PATH",
        default=default(None),
        help="write a debug log of the connection and messages to PATH",
    )


def add_command(subparsers: Subcommands, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
    if "description" in kwargs:
        kwargs["description"] = wrap(kwargs["description"])
    parser: argparse.ArgumentParser = subparsers.add_parser(name, **kwargs)
    add_common_options(parser, defaults=False)
    return parser


def wrap(text: str, width: int = 78) -> str:
    """Fill each one-line paragraph; paragraphs already broken into lines stay as they are."""
    return "\n\n".join(
        p if "\n" in p.strip() else textwrap.fill(p, width) for p in text.split("\n\n")
    )


GAME_ALIASES = {
    "doublets": "doublets",
    "quatorze": "quatorze",
    "bakers_game": "bakers_game",
    "bakers-game": "bakers_game",
    "bakersgame": "bakers_game",
    "bakers": "bakers_game",
    "baker's game": "bakers_game",
    "baker's-game": "bakers_game",
    "hopscotch": "hopscotch",
}
GAME_CHOICES = "doublets, quatorze, bakers_game, hopscotch"


def game_arg(text: str) -> str:
    """argparse type for a game id; accepts a few natural spellings of Baker's Game."""
    game = GAME_ALIASES.get(text.strip().lower())
    if game is None:
        raise argparse.ArgumentTypeError(f"unknown game {text!r}; choose from {GAME_CHOICES}")
    return game
