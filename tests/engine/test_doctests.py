"""The examples in the engine's docstrings are run, so that the documented API stays true.

pytest's own --doctest-modules would need engine/ among the collected paths; running
doctest over every module of the package from here keeps `pytest tests/engine` enough.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import engine

MODULES = sorted(
    [engine.__name__]
    + [info.name for info in pkgutil.walk_packages(engine.__path__, prefix=f"{engine.__name__}.")]
)

# The public API: each of these modules must carry examples, not merely pass with none.
DOCUMENTED = {"engine", "engine.errors", "engine.game", "engine.registry", "engine.views"}


def test_the_documented_modules_exist() -> None:
    assert set(MODULES) >= DOCUMENTED


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_a_module_hold(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {name}"
    if name in DOCUMENTED:
        assert result.attempted > 0, f"{name} has no examples"
