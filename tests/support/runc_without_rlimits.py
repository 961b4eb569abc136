"""An OCI runtime for podman that is runc with the container's rlimits left out.

    python runc_without_rlimits.py /usr/bin/runc [runc's global options] COMMAND [options]

Why: this test sandbox refuses `setrlimit` to a container's init, so runc fails every
`create` with "error setting rlimits for ready process" (and every `exec` the same way),
although nothing is wrong with the container. That is the sandbox's, not the project's: on a
normal host podman's own runc does fine. The wrapper deletes `process.rlimits` from the spec
runc is about to read (the bundle's config.json for `create` and `run`, the --process file
for `exec`) and then becomes runc with the arguments it was given.

It runs once per container operation, so it imports only the standard library.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# runc's subcommands whose spec holds a process, and where that spec is.
BUNDLE_COMMANDS = ("create", "run")


def option(args: list[str], name: str) -> str | None:
    """The value of `--name VALUE` or `--name=VALUE` in args."""
    for i, arg in enumerate(args):
        if arg == name and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(name + "="):
            return arg.partition("=")[2]
    return None


def subcommand(args: list[str]) -> tuple[str | None, list[str]]:
    """runc's subcommand and the arguments after it (global options come before it)."""
    for i, arg in enumerate(args):
        if not arg.startswith("-") and (i == 0 or not _takes_value(args[i - 1])):
            return arg, args[i + 1 :]
    return None, []


def _takes_value(flag: str) -> bool:
    # runc's global options that take a separate value (podman passes these).
    return flag in ("--root", "--log", "--log-format", "--criu")


def drop_rlimits(spec_path: Path) -> None:
    spec = json.loads(spec_path.read_text())
    # config.json holds the process under "process"; exec's --process file is the process.
    process = spec.get("process", spec) if "ociVersion" in spec else spec
    if isinstance(process, dict) and process.pop("rlimits", None) is not None:
        spec_path.write_text(json.dumps(spec))


def main(argv: list[str]) -> None:
    runc, args = argv[0], argv[1:]
    command, rest = subcommand(args)
    if command in BUNDLE_COMMANDS:
        bundle = Path(option(rest, "--bundle") or option(rest, "-b") or ".")
        drop_rlimits(bundle / "config.json")
    elif command == "exec":
        process = option(rest, "--process") or option(rest, "-p")
        if process:
            drop_rlimits(Path(process))
    os.execv(runc, [runc, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
