"""Building the run-time context of a command from its arguments and the config file."""

from __future__ import annotations

import argparse
import logging
import os
import sys

from client_cli.config import DEFAULT_SERVER, MAX_NAME, Config, normalise_server, valid_name
from client_cli.context import Context
from client_cli.theme import Theme


class UsageError(Exception):
    pass


def build_context(args: argparse.Namespace) -> Context:
    if args.log_file:
        logging.basicConfig(
            filename=args.log_file,
            level=logging.DEBUG,
            format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        )
    else:
        logging.getLogger().addHandler(logging.NullHandler())
    config = Config.load()
    changed = False
    # A --server is saved only once a session with it has succeeded (Context.opened), so
    # that a mistyped address does not stick to every later command.
    env = os.environ.get("SOLITAIRE_SERVER")
    if args.server:
        server, source = args.server, "option"
    elif env:
        server, source = env, "env"
    elif config.server:
        server, source = config.server, "saved"
    else:
        server, source = DEFAULT_SERVER, "default"
    try:
        server = normalise_server(server)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    name = config.name
    if args.name is not None:
        name = args.name.strip()
        if not valid_name(name):
            raise UsageError(f"a name is 1 to {MAX_NAME} printable characters")
        if name != config.name or not config.name_saved:
            config.name, changed = name, True
    elif not config.name_saved and sys.stdin.isatty() and not args.plain:
        # A first run in a terminal: the name others will see is the player's choice, not
        # whatever the login happens to be (scripts and --plain keep the login name).
        name = ask_name(config.name)
        config.name, changed = name, True
    if changed:
        config.save()
    theme = Theme.from_options(ascii_only=args.ascii, no_colour=args.no_color)
    return Context(
        config=config,
        server=server,
        name=name,
        theme=theme,
        plain=args.plain,
        server_source=source,
    )


def ask_name(suggestion: str) -> str:
    """The player's name, asked on the terminal; Enter takes the suggestion."""
    print("Other players see you by a name, kept in your settings (change it with --name).")
    while True:
        try:
            answer = input(f"Your name [{suggestion}]: ").strip()
        except EOFError:
            answer = ""
        name = answer or suggestion
        if valid_name(name):
            return name
        print(f"A name is 1 to {MAX_NAME} printable characters.")
