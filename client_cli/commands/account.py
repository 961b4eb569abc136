"""`solitaire account export` and `solitaire account import CODE`: one player on two machines.

The recovery code holds the server's URL, the player's token and name in one pasteable
string ("sr1." + URL-safe base64 of a JSON object). The token is what proves who you are,
so the code is a password.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import getpass
import json
import os
import sys

from client_cli.commands import Subcommands, add_command
from client_cli.commands.context import UsageError
from client_cli.config import DEFAULT_SERVER, MAX_NAME, Config, normalise_server

PREFIX = "sr1."
MAX_TOKEN = 128


def register(subparsers: Subcommands) -> None:
    account = add_command(
        subparsers,
        "account",
        help="move your player to another machine (recovery code)",
        description="Your player lives in this machine's settings file as a token per server: "
        "a new settings file is a new player. 'export' prints a recovery code; 'import CODE' on "
        "another machine (or after reinstalling) makes it the same player again.\n\n"
        "The code is a password: anyone who has it plays as you. Do not post it anywhere.",
    )
    actions = account.add_subparsers(dest="account_action", metavar="ACTION", required=True)
    export = add_command(
        actions,
        "export",
        help="print the recovery code of your player on the server",
        description="Print the recovery code of your player on the server (--server, else the "
        "saved one, else the default): the server's URL, your token and your name, in one "
        "string to paste into 'solitaire account import' elsewhere. The code is a password.",
        epilog="example: solitaire account export --server play.example.org:8765",
    )
    export.set_defaults(func=run_export)
    imp = add_command(
        actions,
        "import",
        help="become the player of a recovery code on this machine",
        description="Store the player of a recovery code (from 'solitaire account export') in "
        "this machine's settings: its token for its server, which becomes the saved server, "
        "and its name. Without CODE (or with '-') the code is read from the terminal without "
        "echo, or from stdin, so that it stays out of the shell's history.",
        epilog="example: solitaire account import sr1.eyJzZXJ2ZXIiOi...",
    )
    imp.add_argument("code", nargs="?", default="-", metavar="CODE",
                     help="the recovery code (default: read it)")  # fmt: skip
    imp.add_argument("--force", action="store_true",
                     help="replace the player this machine already has on that server")  # fmt: skip
    imp.set_defaults(func=run_import)


def encode_code(server: str, token: str, name: str) -> str:
    raw = json.dumps({"server": server, "token": token, "name": name}, separators=(",", ":"))
    return PREFIX + base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_code(code: str) -> tuple[str, str, str]:
    """(server, token, name) of a recovery code; UsageError if it is not one."""
    code = "".join(code.split())  # pasted across lines
    if not code.startswith(PREFIX):
        raise UsageError(f"not a recovery code: it starts with {PREFIX!r}")
    body = code[len(PREFIX) :]
    try:
        data = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, ValueError) as exc:
        raise UsageError("not a recovery code: it is damaged (copy all of it)") from exc
    if not isinstance(data, dict):
        raise UsageError("not a recovery code: it is damaged (copy all of it)")
    server, token, name = data.get("server"), data.get("token"), data.get("name")
    if not isinstance(server, str) or not isinstance(token, str) or not isinstance(name, str):
        raise UsageError("not a recovery code: it lacks the server, token or name")
    try:
        server = normalise_server(server)
    except ValueError as exc:
        raise UsageError(f"the recovery code's server is not usable: {exc}") from exc
    if not 1 <= len(token) <= MAX_TOKEN or not token.isprintable() or " " in token:
        raise UsageError("the recovery code's token is malformed")
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise UsageError("the recovery code's name is malformed")
    return server, token, name


def run_export(args: argparse.Namespace) -> int:
    config = Config.load()
    server = _server(args, config)
    token = config.token_for(server)
    if token is None:
        raise UsageError(
            f"this machine has no player on {server} yet (play once first, or name the "
            "server with --server)"
        )
    print(encode_code(server, token, config.name))
    print(
        f"The recovery code of {config.name} on {server}. It is a password: anyone who has it "
        "plays as you.\nOn the other machine: solitaire account import (then paste it)",
        file=sys.stderr,
    )
    return 0


def run_import(args: argparse.Namespace) -> int:
    code = args.code
    if code == "-":
        code = _read_code()
    server, token, name = decode_code(code)
    config = Config.load()
    held = config.token_for(server)
    if held is not None and held != token and not args.force:
        raise UsageError(
            f"this machine already has a player on {server}; importing would lose it. Keep a "
            "copy of its code ('solitaire account export') and run again with --force"
        )
    config.tokens[server] = token
    config.server = server
    config.name = name
    config.save()
    print(f"You are {name} on {server} on this machine now (saved in {config.path}).")
    return 0


def _server(args: argparse.Namespace, config: Config) -> str:
    server = args.server or os.environ.get("SOLITAIRE_SERVER") or config.server or DEFAULT_SERVER
    try:
        return normalise_server(server)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc


def _read_code() -> str:
    if sys.stdin.isatty():
        return getpass.getpass("Recovery code (not shown): ")
    return sys.stdin.read()
