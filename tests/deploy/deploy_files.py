"""The container files of the repository, read the way Docker reads them (shared by the deploy
tests: the static checks and the run of the server as the image runs it)."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


@dataclass
class Instruction:
    op: str
    args: str
    line: int

    def exec_form(self) -> list[str]:
        value = json.loads(self.args)
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), self.args
        return value


@dataclass
class Stage:
    base: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, op: str) -> list[Instruction]:
        return [i for i in self.instructions if i.op == op]

    def env(self) -> dict[str, str]:
        """ENV key=value pairs (the legacy `ENV key value` form is refused)."""
        env: dict[str, str] = {}
        for ins in self.all("ENV"):
            for word in shlex.split(ins.args):
                assert "=" in word, f"line {ins.line}: use ENV key=value"
                key, _, value = word.partition("=")
                env[key] = value
        return env

    def healthcheck(self) -> tuple[str, list[str]]:
        """The HEALTHCHECK's options and its command (exec form)."""
        (check,) = self.all("HEALTHCHECK")
        options, _, command = check.args.partition("CMD ")
        return options, Instruction("CMD", command, check.line).exec_form()


def parse_dockerfile(text: str) -> tuple[dict[str, str], list[Stage]]:
    """Global ARG defaults and the stages, with continuation lines joined and comments dropped."""
    instructions: list[Instruction] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if pending and line.startswith("#"):
            continue  # a comment inside a continued instruction
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        op, _, args = whole.partition(" ")
        instructions.append(Instruction(op.upper(), args.strip(), start))
    args_before: dict[str, str] = {}
    stages: list[Stage] = []
    for ins in instructions:
        if ins.op == "FROM":
            words = ins.args.split()
            base = re.sub(
                r"\$\{?(\w+)\}?", lambda m: args_before.get(m.group(1), m.group(0)), words[0]
            )
            name = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
            stages.append(Stage(base, name))
        elif not stages and ins.op == "ARG":
            key, _, value = ins.args.partition("=")
            args_before[key] = value
        elif stages:
            stages[-1].instructions.append(ins)
        else:
            raise AssertionError(f"line {ins.line}: {ins.op} before the first FROM")
    return args_before, stages


def image_stages() -> list[Stage]:
    return parse_dockerfile(DOCKERFILE.read_text())[1]
