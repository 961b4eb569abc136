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
        ({"SOLITAIRE_MAX_CONNECTIONS": "-1"}, "must be 0 (no limit) or more: '-1'"),
        ({"SOLITAIRE_TRUSTED_PROXIES": "10.0.0.1,proxy"}, "not an address or network: 'proxy'"),
        ({"SOLITAIRE_WORKERS": "-1"}, "SOLITAIRE_WORKERS (or --workers): 0 (one per core) to 256"),
        ({"SOLITAIRE_WORKERS": "many"}, "SOLITAIRE_WORKERS (or --workers): invalid int value"),
        ({"SOLITAIRE_PUBLIC_URL": "play.example.org"}, "not an http(s) or ws(s) URL with a host"),
        ({"SOLITAIRE_PUBLIC_URL": "ftp://play.example.org"}, "not an http(s) or ws(s) URL"),
        ({"SOLITAIRE_PUBLIC_URL": "https://h:99999"}, "not a port in 'https://h:99999'"),
    ],
)
def test_a_bad_environment_value_exits_2_naming_it(environ, says, capsys):
    with pytest.raises(SystemExit) as exited:
        Config.from_args([], environ)
    assert exited.value.code == 2
    assert says in capsys.readouterr().err


def test_admission_limits_take_zero_for_none_and_proxies_as_networks():
    cfg = Config.from_args(
        ["--max-new-players-per-address-per-hour", "0"],
        {
            "SOLITAIRE_TRUSTED_PROXIES": " 10.0.0.7, 172.16.0.0/12,fd00::/8 ,",
            "SOLITAIRE_MAX_NEW_PLAYERS_PER_ADDRESS_PER_DAY": "5",
        },
    )
    assert cfg.max_new_players_per_address_per_hour == 0
    assert cfg.max_new_players_per_address_per_day == 5
    assert cfg.trusted_proxies == ("10.0.0.7/32", "172.16.0.0/12", "fd00::/8")
    assert Config().max_connections_per_address == 100  # on by default


@pytest.mark.parametrize(
    ("given", "public"),
    [
        ("https://play.example.org/", "https://play.example.org"),
        ("wss://play.example.org/ws", "https://play.example.org"),
        ("ws://192.0.2.7:8765/ws", "http://192.0.2.7:8765"),
        ("http://[2001:db8::1]:8765/solitaire/", "http://[2001:db8::1]:8765/solitaire"),
    ],
)
def test_the_public_url_is_kept_as_the_http_address_of_the_pages(given, public):
    assert Config.from_args(["--public-url", given], {}).public_url == public
    assert Config.from_args([], {"SOLITAIRE_PUBLIC_URL": given}).public_url == public
    assert Config().public_url is None
