"""Settings from flags and the environment: each converted once, bad ones refused plainly."""

from __future__ import annotations

import pytest

from server.config import Config


def test_flags_and_environment_give_the_same_values():
    flags = Config.from_args(["--redis-cluster", "1", "--burst", "5", "--rate", "2.5"], {})
    env = Config.from_args(
        [], {"SOLITAIRE_REDIS_CLUSTER": "1", "SOLITAIRE_BURST": "5", "SOLITAIRE_RATE": "2.5"}
    )
    assert flags == env
    assert (flags.redis_cluster, flags.burst, flags.rate) == (True, 5, 2.5)
    assert Config.from_args(["--burst", "9"], {"SOLITAIRE_BURST": "5"}).burst == 9  # flag wins


@pytest.mark.parametrize(
    ("environ", "says"),
    [
        ({"SOLITAIRE_BURST": "many"}, "SOLITAIRE_BURST (or --burst): invalid int value: 'many'"),
        ({"SOLITAIRE_BURST": "0"}, "SOLITAIRE_BURST (or --burst): must be positive: '0'"),
        ({"SOLITAIRE_REDIS_CLUSTER": "maybe"}, "not a boolean: 'maybe'"),
        ({"SOLITAIRE_WORKERS": "-1"}, "SOLITAIRE_WORKERS (or --workers): 0 (one per core) to 256"),
        ({"SOLITAIRE_WORKERS": "many"}, "SOLITAIRE_WORKERS (or --workers): invalid int value"),
    ],
)
def test_a_bad_environment_value_exits_2_naming_it(environ, says, capsys):
    with pytest.raises(SystemExit) as exited:
        Config.from_args([], environ)
    assert exited.value.code == 2
    assert says in capsys.readouterr().err
