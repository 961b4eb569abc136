"""`solitaire`: the terminal client of solitaire-race."""

from __future__ import annotations

import argparse
import sys

from client_cli.commands import add_common_options, register_all, wrap
from client_cli.commands.context import UsageError
from client_cli.config import ConfigError, config_path


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="solitaire",
        description=wrap(
            "Race your friends on the same solitaire deal, play the daily challenge "
            "and read the leaderboards. Games: doublets, quatorze, bakers_game, hopscotch."
        ),
        epilog=f"Settings (server, name, token) are kept in {config_path()}.\n"
        "Run 'solitaire COMMAND --help' for each command's options.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_common_options(parser, defaults=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register_all(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (UsageError, ConfigError) as exc:
        print(f"solitaire: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
