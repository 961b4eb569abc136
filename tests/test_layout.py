"""The project's layout and set-up commands, as DEVELOPERS.md fixes them."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    setup = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return [line.strip() for line in setup.splitlines() if line.startswith("    ")]


def test_readme_starts_with_exactly_two_setup_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2
    assert commands[0].endswith("solitaire-server")
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci.splitlines()


def test_console_scripts_point_at_importable_callables() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {"solitaire-server", "solitaire"}
    for target in scripts.values():
        module, func = target.split(":")
        out = subprocess.run(
            [sys.executable, "-c", f"import {module} as m; assert callable(m.{func})"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr


def test_every_runtime_dependency_is_explained_in_the_readme() -> None:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    readme = (ROOT / "README.md").read_text()
    for dep in deps:
        name = re.split(r"[<>=!~\[ ]", dep, maxsplit=1)[0]
        assert f"`{name}`" in readme, f"README does not say what {name} is for"


def test_benches_are_modules_of_one_package_without_path_edits() -> None:
    bench = ROOT / "bench"
    assert (bench / "__init__.py").exists()
    for script in sorted(bench.glob("*.py")):
        assert "sys.path" not in script.read_text(), f"{script.name} edits sys.path"
