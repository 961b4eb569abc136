"""docker-compose.yml brought up for real, both profiles, by Debian's docker-compose on podman
(podman_compose.py): the server's image built from deploy/Dockerfile, the store and the
balancer stand-ins from Debian's packages (podman_images.py) under the names the file gives.

- The default profile: the server and its store, healthy, a race between two clients on the
  published port, every acknowledged move in the store's container.
- `scale`: three instances behind the balancer; players who know only the balancer's address
  land on different instances; the busiest one is stopped mid-race and the race goes on to its
  result, nothing acknowledged lost.

Where podman cannot be installed or run the tests skip with the reason.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml
from deploy_race import Player, race_code, seat_and_start
from podman_compose import (
    COMPOSE_FILE,
    ApiService,
    ComposeProject,
    HealthChecks,
    compose_files,
    http_status,
    port_is_free,
)
from podman_images import ContainerImages

from server.config import Config
from server.store.keys import Keys

pytestmark = pytest.mark.timeout(900)

GAME = "bakers_game"
# Moves each player may make before the instance is stopped, and then after.
PER_PHASE = 3
# Which stand-in each image-only service of the compose file gets.
STANDIN_FOR = {"redis": "store", "lb": "balancer"}
# One server process per container (the documented SOLITAIRE_WORKERS setting): three
# instances of a worker per core would be six processes on this two-core machine, and each
# instance's /metrics then speaks for all of its connections.
HOST_ENV = {"SOLITAIRE_WORKERS": "1"}
# How long HAProxy keeps a server's address when its resolvers time out (`hold timeout`, 30 s
# by default), before putting the server in maintenance.
DNS_HOLD_S = 30


def compose_file() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE_FILE.read_text())


def instances() -> list[str]:
    """The server services (those built from deploy/Dockerfile), in file order."""
    return [n for n, s in compose_file()["services"].items() if s.get("build")]


def in_profile(service: dict[str, Any], profiles: list[str]) -> bool:
    return not service.get("profiles") or bool(set(service["profiles"]) & set(profiles))


def published(profiles: list[str]) -> dict[str, int]:
    """The host port each service of these profiles publishes (its first), in the files
    that profile is run with."""
    ports = {}
    services = compose_file()["services"]
    for extra in compose_files(profiles)[1:]:  # an override's ports add to the service's
        for name, service in yaml.safe_load(extra.read_text())["services"].items():
            merged = services.setdefault(name, {})
            merged["ports"] = [*merged.get("ports", []), *service.get("ports", [])]
    for name, service in services.items():
        if in_profile(service, profiles) and service.get("ports"):
            ports[name] = int(str(service["ports"][0]).split(":")[-2])
    return ports


@pytest.fixture(scope="module")
def compose_api(
    container_images: ContainerImages, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiService]:
    """podman's API for docker-compose, with the stand-ins tagged as the compose file names
    the images they stand in for (untagged again at the end)."""
    podman = container_images.podman
    tagged = []
    for service, kind in STANDIN_FOR.items():
        name = compose_file()["services"][service]["image"]
        podman.run("tag", container_images.standins[kind], name)
        tagged.append((container_images.standins[kind], name))
    api = ApiService(podman, tmp_path_factory.mktemp("podman-api")).start()
    try:
        yield api
    finally:
        api.stop()
        for image, name in tagged:
            podman.run("untag", image, name, check=False)


@pytest.fixture
def project_name() -> str:
    return f"solitairetest{uuid.uuid4().hex[:8]}"


def bring_up(
    images: ContainerImages, api: ApiService, name: str, profiles: list[str]
) -> ComposeProject:
    """The project (not yet up); a skip if a port it publishes is taken on this host."""
    taken = {s: p for s, p in published(profiles).items() if not port_is_free(p)}
    if taken:
        pytest.skip(f"the compose file publishes ports in use on this host: {taken}")
    return ComposeProject(images.podman, api, name, profiles, HOST_ENV)


def store_moves(project: ComposeProject, gid: str) -> list[str]:
    """A game's moves as the store's container holds them."""
    game = Keys(Config().namespace).game(gid)
    assert game is not None
    done = project.podman.run(
        "exec", project.container("redis"), "valkey-cli", "LRANGE", game.moves, "0", "-1"
    )
    return done.stdout.split()


async def finish_race(players: list[Player], gids: dict[str, str], code: str) -> dict[str, Any]:
    finals = [await p.request({"t": "get", "gid": gids[p.name]}) for p in players]
    assert all(f["t"] == "state" and f["finished"] for f in finals), finals
    results = [
        await p.wait_for(lambda m: m["t"] == "result" and m["race"] == code) for p in players
    ]
    assert all(r == results[0] for r in results)
    return results[0]


def assert_nothing_lost(
    project: ComposeProject, players: list[Player], gids: dict[str, str], result: dict[str, Any]
) -> None:
    standings = {s["player"]: s for s in result["standings"]}
    assert set(standings) == {p.player for p in players}
    for p in players:
        acked = p.acked.get(gids[p.name], [])
        assert standings[p.player]["moves"] == len(acked), p.name
        assert store_moves(project, gids[p.name]) == acked, p.name


async def test_compose_default_profile(
    container_images: ContainerImages, compose_api: ApiService, project_name: str
) -> None:
    project = bring_up(container_images, compose_api, project_name, [])
    port = published([])["server"]
    podman = container_images.podman
    players = [Player(n, [f"ws://127.0.0.1:{port}/ws"], rng=random.Random(i)) for i, n in
               enumerate(("host", "guest"))]  # fmt: skip
    with HealthChecks(podman, project_name):
        try:
            project.up(healthy=["redis", "server"])
            assert http_status(f"http://127.0.0.1:{port}/healthz") == 200
            # The server container as the file describes it: the init in front of it (PID
            # 1), a read-only root, the image's unprivileged user.
            server = project.container("server")
            pid1 = podman.run("exec", server, "cat", "/proc/1/cmdline").stdout.split("\0")
            assert podman.inspect(server, "{{.HostConfig.Init}}") == "true"
            assert pid1[0] != "solitaire-server" and "solitaire-server" in pid1[1:], pid1
            assert podman.inspect(server, "{{.HostConfig.ReadonlyRootfs}}") == "true"
            assert podman.run("exec", server, "id", "-u").stdout.strip() == "10001"

            host, guest = players
            code = await race_code(host, GAME, seed=2702)
            gids = await seat_and_start(host, [guest], code)
            hold = asyncio.Event()
            hold.set()  # each makes its moves, then resigns
            await asyncio.gather(
                *(p.play(gids[p.name], moves=PER_PHASE * 2, pause_s=0, hold=hold) for p in players)
            )
            result = await finish_race(players, gids, code)
            assert any(p.acked.get(gids[p.name]) for p in players), "no move was made"
            assert_nothing_lost(project, players, gids, result)
        finally:
            for p in players:
                await p.close()
            project.down()


def open_connections(project: ComposeProject, service: str) -> int:
    """The WebSocket connections the instance holds (its /metrics, read inside its container:
    only the first instance publishes a port)."""
    probe = (
        "import urllib.request;"
        "print(urllib.request.urlopen('http://127.0.0.1:8765/metrics',timeout=5).read().decode())"
    )
    text = project.podman.run("exec", project.container(service), "python", "-c", probe).stdout
    match = re.search(r"^solitaire_connections (\S+)$", text, re.M)
    assert match, text[:500]
    return int(float(match.group(1)))


@dataclass
class StopMidRace:
    """Once every player has a move acknowledged, stop the instance holding the most players
    (`docker-compose stop`: SIGTERM, drain), then let the race go on."""

    project: ComposeProject
    players: list[Player]
    hold: asyncio.Event = field(default_factory=asyncio.Event)
    spread: dict[str, int] = field(default_factory=dict)
    stopped: str = ""
    stopped_at: float = 0.0

    def allowed(self) -> int:
        return PER_PHASE * (2 if self.stopped_at else 1)

    async def _until(self, done: Any, what: str) -> None:
        deadline = time.monotonic() + 60
        while not done():
            assert time.monotonic() < deadline, what
            await asyncio.sleep(0.05)

    async def run(self) -> None:
        await self._until(
            lambda: all(p.ack_times for p in self.players), "a player never had a move acked"
        )
        for service in instances():
            self.spread[service] = await asyncio.to_thread(open_connections, self.project, service)
        self.stopped = max(self.spread, key=lambda s: self.spread[s])
        self.stopped_at = time.monotonic()
        await asyncio.to_thread(self.project.compose, "stop", "--timeout", "30", self.stopped)
        await self._until(self.moved_since_the_stop, "no move was acknowledged after the stop")
        self.hold.set()

    def moved_since_the_stop(self) -> bool:
        return any(t > self.stopped_at for p in self.closed_by_the_stop() for t in p.ack_times)

    def closed_by_the_stop(self) -> list[Player]:
        """The players the stopped instance closed with 1001 (going away)."""
        return [p for p in self.players if 1001 in p.close_codes]


async def test_compose_scale_profile_race_survives_a_stopped_instance(
    container_images: ContainerImages, compose_api: ApiService, project_name: str
) -> None:
    project = bring_up(container_images, compose_api, project_name, ["scale"])
    lb_port = published(["scale"])["lb"]
    lb_url = f"ws://127.0.0.1:{lb_port}/ws"
    players = [Player(f"player{i}", [lb_url], rng=random.Random(270 + i)) for i in range(4)]
    servers = instances()
    with HealthChecks(container_images.podman, project_name):
        try:
            project.up(healthy=["redis", *servers, "lb"])
            lb_up_at = time.monotonic()
            assert http_status(f"http://127.0.0.1:{lb_port}/healthz") == 200
            host, others = players[0], players[1:]
            code = await race_code(host, GAME, seed=2703)
            gids = await seat_and_start(host, others, code)
            conductor = StopMidRace(project, players)

            async def play(p: Player) -> None:
                await p.play(
                    gids[p.name], moves=PER_PHASE * 2, pause_s=0.05,
                    hold=conductor.hold, allowed=conductor.allowed,
                )  # fmt: skip

            await asyncio.gather(conductor.run(), *(play(p) for p in players))
            result = await finish_race(players, gids, code)

            # Through the balancer alone, the players were spread over the instances...
            assert sum(conductor.spread.values()) == len(players), conductor.spread
            assert sum(1 for n in conductor.spread.values() if n) >= 2, conductor.spread
            # ...the stopped one drained (exit 0) and closed its players with 1001, who came
            # back through the balancer to the others and raced on...
            stopped = project.container(conductor.stopped)
            assert project.podman.inspect(stopped, "{{.State.Running}}") == "false"
            assert project.podman.inspect(stopped, "{{.State.ExitCode}}") == "0"
            assert len(conductor.closed_by_the_stop()) == conductor.spread[conductor.stopped]
            # ...and the result counts every acknowledged move, all of them in the store.
            assert_nothing_lost(project, players, gids, result)

            # The balancer keeps finding the running instances through the engine's DNS (its
            # `resolvers` section), past the time it holds an address that no longer resolves
            # (the stopped instance's name, gone from the DNS, may go into maintenance).
            await asyncio.sleep(max(0.0, lb_up_at + DNS_HOLD_S + 5 - time.monotonic()))
            lb_log = project.podman.run("logs", project.container("lb")).stderr
            for service in servers:
                if service != conductor.stopped:
                    line = rf"solitaire_servers/{re.escape(service)} .*DNS"
                    assert not re.search(line, lb_log), lb_log[-2000:]
            assert http_status(f"http://127.0.0.1:{lb_port}/healthz") == 200
        finally:
            for p in players:
                await p.close()
            project.down()
