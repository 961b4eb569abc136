"""The `scale` profile's balancer for real: HAProxy with deploy/haproxy.cfg (only its
addresses changed, since there is no Docker DNS here) in front of three server instances on one
Redis, as docker-compose.yml runs them. Clients know only the balancer's address; each instance
is restarted in turn under a running race."""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
import yaml
from deploy_files import ROOT
from deploy_race import Player, RollingRestart, race_code, seat_and_start
from support.debian import debian_tool
from support.server_proc import ServerProcess, delete_namespace

from server.store.embedded import free_port
from server.store.keys import Keys

HAPROXY_CFG = ROOT / "deploy" / "haproxy.cfg"
GAME = "bakers_game"
PLAYERS = 4


def local_config(lb_port: int, backends: dict[str, int]) -> str:
    """deploy/haproxy.cfg with loopback addresses instead of compose service names."""
    text = HAPROXY_CFG.read_text()
    # Docker's DNS does not exist here: drop the resolvers section and its use.
    text = re.sub(r"^resolvers docker\n(?:[ \t]+.*\n)+", "", text, flags=re.M)
    text = text.replace(" resolvers docker init-addr last,libc,none", "")
    text, binds = re.subn(r"^(\s*bind\s+):8080\b", rf"\g<1>127.0.0.1:{lb_port}", text, flags=re.M)
    assert binds == 1

    def backend(match: re.Match[str]) -> str:
        return f"{match.group(1)}127.0.0.1:{backends[match.group(2)]}"

    text, servers = re.subn(r"^(\s*server\s+\S+\s+)(\S+):8765\b", backend, text, flags=re.M)
    assert servers == len(backends)
    return text


def http_status(url: str) -> int | None:
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return None


@pytest.fixture
def scaled(redis_url: str, redis_namespace: str, tmp_path: Path) -> Iterator[tuple[str, list]]:
    """Three instances named as in docker-compose.yml, behind HAProxy: (balancer URL, servers)."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    names = [n for n, s in compose["services"].items() if s.get("build")]
    servers = {n: ServerProcess(redis_url, redis_namespace, tmp_path / n) for n in names}
    haproxy = None
    try:
        for server in servers.values():
            server.start(timeout=60)
        lb_port = free_port()
        cfg = tmp_path / "haproxy.cfg"
        cfg.write_text(local_config(lb_port, {n: s.port for n, s in servers.items()}))
        log = open(tmp_path / "haproxy.log", "wb")  # noqa: SIM115
        with log:
            haproxy = subprocess.Popen(
                [debian_tool("haproxy", "haproxy"), "-f", str(cfg), "-db"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 30
        while http_status(f"http://127.0.0.1:{lb_port}/healthz") != 200:
            assert haproxy.poll() is None, (tmp_path / "haproxy.log").read_text()
            assert time.monotonic() < deadline, "the balancer never answered /healthz"
            time.sleep(0.1)
        yield f"ws://127.0.0.1:{lb_port}/ws", list(servers.values())
    finally:
        if haproxy is not None:
            haproxy.terminate()
            haproxy.wait(10)
        for server in servers.values():
            server.stop()
        delete_namespace(redis_url, redis_namespace)


def opened_connections(server: ServerProcess) -> float:
    with urllib.request.urlopen(server.http_url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    match = re.search(r"^solitaire_connections_opened_total (\S+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


async def test_rolling_restart_behind_haproxy(
    scaled: tuple[str, list[ServerProcess]], redis_url: str, redis_namespace: str
) -> None:
    lb_url, servers = scaled
    players = [Player(f"player{i}", [lb_url], rng=random.Random(30 + i)) for i in range(PLAYERS)]
    host, others = players[0], players[1:]
    restart = RollingRestart(players, servers)
    spread: list[float] = []

    def measure_spread() -> None:
        spread.extend(opened_connections(s) for s in servers)

    try:
        code = await race_code(host, GAME, seed=99)
        gids = await seat_and_start(host, others, code)
        await asyncio.gather(
            restart.run(before_first_stop=measure_spread),
            *(
                p.play(
                    gids[p.name], moves=60, pause_s=0.05, hold=restart.hold, allowed=restart.allowed
                )
                for p in players
            ),
        )
        finals = [await p.request({"t": "get", "gid": gids[p.name]}) for p in players]
        results = [
            await p.wait_for(lambda m: m["t"] == "result" and m["race"] == code) for p in players
        ]
    finally:
        for p in players:
            await p.close()

    # The balancer spread the players over the instances, and every instance drained cleanly.
    assert sum(1 for n in spread if n > 0) >= 2, spread
    assert restart.exit_codes == [0] * len(servers)
    assert restart.every_phase_had_a_move()
    assert [c for p in players for c in p.close_codes].count(1001) >= len(servers)
    # Every player finished through the balancer alone, and nothing acknowledged was lost.
    assert all(f["t"] == "state" and f["finished"] for f in finals)
    # ...and each was told the result, which ranks every seat by what the store holds.
    assert all(r == results[0] for r in results)
    standings = {s["player"]: s for s in results[0]["standings"]}
    assert set(standings) == {p.player for p in players}
    for p in players:
        assert standings[p.player]["moves"] == len(p.acked.get(gids[p.name], []))
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        keys = Keys(redis_namespace)
        for p, final in zip(players, finals, strict=True):
            acked = p.acked.get(gids[p.name], [])
            game = keys.game(gids[p.name])
            assert game is not None
            assert client.lrange(game.moves, 0, -1) == acked, p.name
            assert final["n"] == len(acked)
        assert client.hget(keys.race_meta(code), "result"), "the race was not closed"
    finally:
        client.close()
