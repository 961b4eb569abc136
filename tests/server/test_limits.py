"""The protocol's field limits are the running server's: its flags and environment set them,
its request decoder checks them, and limits that do not fit together stop it at start-up."""

from __future__ import annotations

import os
import subprocess
from typing import Annotated, Any

import msgspec
import pytest
from msgspec import Meta
from support.server_proc import server_command
from support.ws_client import Client

import protocol as p


def msgspec_says(annotation: Any, value: Any, field: str) -> str:
    """msgspec's own message for `value` in a field of type `annotation`: what the decoder's
    checks of the running limits must read like."""
    cls = msgspec.defstruct("Probe", [(field, annotation)])
    with pytest.raises(msgspec.ValidationError) as err:
        msgspec.msgpack.decode(msgspec.msgpack.encode({field: value}), type=cls)
    return str(err.value)


async def connected(url: str, name: str) -> Client:
    c = await Client.connect(url)
    assert (await c.hello(name))["t"] == "welcome"
    return c


# ------------------------------------------------------------ the decoder alone


def frame(**fields: object) -> bytes:
    return msgspec.msgpack.encode(fields)


def test_decoder_checks_the_limits_it_is_given():
    small = p.RequestDecoder(
        p.Limits(max_players=4, default_max_players=3, name_max_chars=8, max_moves_per_game=10)
    )
    bad = small.decode(frame(t="create", game="doublets", max_players=5, id=3))
    assert bad == p.BadFrame(
        "bad create: " + msgspec_says(Annotated[int, Meta(ge=2, le=4)] | None, 5, "max_players"),
        3,
        "create",
    )
    assert bad.msg == "bad create: Expected `int` <= 4 - at `$.max_players`"
    ok = small.decode(frame(t="create", game="doublets", max_players=4))
    assert isinstance(ok, p.Create) and ok.max_players == 4
    low = small.decode(frame(t="create", game="doublets", max_players=1, id=4))
    assert isinstance(low, p.BadFrame) and low.msg.endswith("`int` >= 2 - at `$.max_players`")

    long_name = small.decode(frame(t="hello", v=1, name="n" * 9, id=5))
    assert isinstance(long_name, p.BadFrame) and long_name.re == 5
    assert long_name.msg == "bad hello: " + msgspec_says(
        Annotated[str, Meta(min_length=1, max_length=8)], "n" * 9, "name"
    )
    assert isinstance(small.decode(frame(t="hello", v=1, name="é" * 8)), p.Hello)

    many = small.decode(frame(t="move", gid="g", n=11, m="deal", id=6))
    assert isinstance(many, p.BadFrame) and many.msg == "bad move: " + msgspec_says(
        Annotated[int, Meta(ge=0, le=10)], 11, "n"
    )
    assert isinstance(small.decode(frame(t="move", gid="g", n=10, m="deal")), p.Move)

    # The host and the bots must fit in the running default when max_players is absent.
    bots = small.decode(frame(t="create", game="doublets", bots=3, id=7))
    assert isinstance(bots, p.BadFrame) and bots.re == 7
    assert bots.msg == "bad create: 3 bots and the host do not fit in max_players 3"
    assert isinstance(small.decode(frame(t="create", game="doublets", bots=2)), p.Create)


def test_decoder_with_larger_limits_accepts_more_than_the_defaults():
    default = p.RequestDecoder(p.DEFAULT_LIMITS)
    large = p.RequestDecoder(p.Limits(max_players=32, name_max_chars=40, max_time_limit_s=9000))
    for fields in (
        {"t": "create", "game": "doublets", "max_players": 20, "bots": 19},
        {"t": "create", "game": "doublets", "time_limit_s": 8000},
        {"t": "hello", "v": 1, "name": "n" * 40},
    ):
        assert isinstance(default.decode(frame(**fields)), p.BadFrame), fields
        assert not isinstance(large.decode(frame(**fields)), p.BadFrame), fields
    bots = large.decode(frame(t="create", game="doublets", max_players=32, bots=32))
    assert isinstance(bots, p.BadFrame) and bots.msg.endswith("`int` <= 31 - at `$.bots`")


# ------------------------------------------------------------ real servers


async def test_max_players_flag_bounds_create_and_the_seats(servers):
    server = servers.start(args=["--max-players", "4"])
    clients = [await connected(server.ws_url, f"p{i}") for i in range(5)]
    host = clients[0]
    try:
        refused = await host.request({"t": "create", "game": "doublets", "max_players": 5})
        assert refused["t"] == "error" and refused["code"] == "bad_request", refused
        assert refused["msg"] == "bad create: Expected `int` <= 4 - at `$.max_players`"
        assert "re" in refused
        # With no max_players the race gets the running default, which follows the maximum.
        implicit = await host.request({"t": "create", "game": "doublets"})
        assert implicit["t"] == "created" and implicit["max_players"] == 4, implicit

        created = await host.request({"t": "create", "game": "doublets", "max_players": 4})
        assert created["t"] == "created" and created["max_players"] == 4, created
        code = created["race"]
        for c in clients[1:4]:
            lobby = await c.request({"t": "join", "race": code})
            assert lobby["t"] == "lobby", lobby
        assert len(lobby["players"]) == 4
        fifth = await clients[4].request({"t": "join", "race": code})
        assert fifth["t"] == "error" and fifth["code"] == "race_full", fifth
    finally:
        for c in clients:
            await c.close()


async def test_default_server_takes_sixteen_players_and_no_more(server):
    host = await connected(server.ws_url, "host")
    try:
        created = await host.request({"t": "create", "game": "doublets", "max_players": 16})
        assert created["t"] == "created" and created["max_players"] == 16, created
        implicit = await host.request({"t": "create", "game": "doublets"})
        assert implicit["max_players"] == 8, implicit
        refused = await host.request({"t": "create", "game": "doublets", "max_players": 17})
        assert refused["code"] == "bad_request"
        assert refused["msg"] == "bad create: Expected `int` <= 16 - at `$.max_players`"
    finally:
        await host.close()


async def test_name_time_and_move_limits_follow_flags_and_environment(servers):
    server = servers.start(
        env={"SOLITAIRE_NAME_MAX_CHARS": "8", "SOLITAIRE_DEFAULT_MAX_PLAYERS": "3"},
        args=["--min-time-limit-s", "60", "--max-time-limit-s", "600",
              "--max-moves-per-game", "3"],
    )  # fmt: skip
    c = await Client.connect(server.ws_url)
    try:
        long = await c.hello("n" * 9)
        assert long["code"] == "bad_request"
        assert long["msg"] == "bad hello: Expected `str` of length <= 8 - at `$.name`"
        assert (await c.hello("é" * 8))["t"] == "welcome"

        for limit, expected in ((59, "`int` >= 60"), (601, "`int` <= 600")):
            r = await c.request({"t": "create", "game": "doublets", "time_limit_s": limit})
            assert r["code"] == "bad_request", r
            assert r["msg"] == f"bad create: Expected {expected} - at `$.time_limit_s`"
        for limit in (60, 600):
            r = await c.request({"t": "create", "game": "doublets", "time_limit_s": limit})
            assert r["t"] == "created" and r["time_limit_s"] == limit, r
            assert r["max_players"] == 3

        bots = await c.request({"t": "create", "game": "doublets", "bots": 3})
        assert bots["code"] == "bad_request"
        assert bots["msg"] == "bad create: 3 bots and the host do not fit in max_players 3"

        move = {"t": "move", "gid": "r.AAAAAA.nobody", "m": "deal"}
        too_many = await c.request({**move, "n": 4})
        assert too_many["code"] == "bad_request"
        assert too_many["msg"] == "bad move: Expected `int` <= 3 - at `$.n`"
        assert (await c.request({**move, "n": 3}))["code"] == "not_found"
    finally:
        await c.close()


def start_failing(
    args: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the server with settings that must stop it before it touches any store."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SOLITAIRE_")}
    clean.pop("REDIS_URL", None)
    return subprocess.run(
        [*server_command(), "--port", "0", *args],
        env={**clean, **(env or {})},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("args", "env", "says"),
    [
        (["--max-players", "4", "--default-max-players", "5"], {},
         "--default-max-players 5 is more than --max-players 4"),
        (["--max-players", "6"], {"SOLITAIRE_DEFAULT_MAX_PLAYERS": "7"},
         "--default-max-players 7 is more than --max-players 6"),
        (["--max-players", "1"], {}, "min_players 2 is more than --max-players 1"),
        (["--min-time-limit-s", "700", "--max-time-limit-s", "600"], {},
         "--min-time-limit-s 700 is more than --max-time-limit-s 600"),
        (["--max-time-limit-s", "20"], {},
         "--min-time-limit-s 30 is more than --max-time-limit-s 20"),
        (["--name-max-chars", "0"], {}, "--name-max-chars: must be positive: '0'"),
        (["--max-moves-per-game", "lots"], {}, "--max-moves-per-game: invalid"),
    ],
    ids=["default over max", "from environment", "max under min", "time min over max",
         "time max under default min", "zero name", "not a number"],
)  # fmt: skip
def test_limits_that_do_not_fit_together_stop_the_server_with_code_2(args, env, says):
    out = start_failing(args, env)
    assert out.returncode == 2, out
    assert says in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
