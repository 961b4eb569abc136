"""The server's image for real: deploy/Dockerfile as it is, built by podman on a base made from
Debian's packages (podman_images.py), run as `docker run --init -v VOLUME:/data` runs it (the
embedded store in the volume): a race between two clients, the daily, /healthz, and the image's
own HEALTHCHECK; then the container is killed with SIGKILL and a new one started on the same
volume finds every move it had acknowledged.

Where podman cannot be installed or run (not root, no namespaces) the tests skip with the
reason. Health checks are run by the test (`podman healthcheck run`): podman schedules them
with systemd timers, and this sandbox has no systemd.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from deploy_files import image_stages
from deploy_race import Player, race_code, seat_and_start
from podman_compose import http_status
from podman_images import ContainerImages

import engine
from server.store.embedded import free_port

pytestmark = pytest.mark.timeout(900)

GAME = "bakers_game"
MOVES_BEFORE_KILL = 6
START_TIMEOUT_S = 90.0
# Exit status of a container whose init was killed by SIGKILL (128 + 9).
KILLED = 137


@dataclass
class Container:
    images: ContainerImages
    volume: str
    port: int
    name: str = ""

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def run(self) -> None:
        """A new container on the volume, as deploy/README.md runs the image (`docker run -d
        --init -p 8765:8765 -v solitaire-data:/data solitaire-race`), on loopback only."""
        self.name = f"solitaire-test-{uuid.uuid4().hex[:8]}"
        self.images.podman.run(
            "run", "-d", "--init", "--name", self.name,
            "-p", f"127.0.0.1:{self.port}:8765", "-v", f"{self.volume}:/data",
            self.images.server,
        )  # fmt: skip

    def state(self, field: str) -> str:
        return self.images.podman.inspect(self.name, "{{.State." + field + "}}")

    def wait_healthy(self) -> None:
        """Run the image's HEALTHCHECK until it passes and podman calls the container healthy."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (self.images.podman.healthcheck(self.name) and self.health() == "healthy"):
            if self.state("Running") != "true" or time.monotonic() > deadline:
                raise AssertionError(f"never healthy ({self.health()}):\n{self.logs()}")
            time.sleep(0.5)

    def health(self) -> str:
        return self.state("Health.Status")

    def logs(self) -> str:
        done = self.images.podman.run("logs", "--tail", "60", self.name, check=False)
        return done.stdout + done.stderr

    def remove(self) -> None:
        if self.name:
            self.images.podman.run("rm", "-f", "-t", "10", self.name, check=False)


@pytest.fixture
def volume(container_images: ContainerImages) -> Iterator[str]:
    name = f"solitaire-test-{uuid.uuid4().hex[:8]}"
    container_images.podman.run("volume", "create", name)
    try:
        yield name
    finally:
        container_images.podman.run("volume", "rm", "-f", name, check=False)


def test_the_image_is_the_dockerfiles_in_dockers_format(container_images: ContainerImages) -> None:
    """Docker's image format keeps the HEALTHCHECK (the OCI format would drop it), and the image
    has the Dockerfile's user, entry point and health check."""
    podman, image = container_images.podman, container_images.server
    inspect = json.loads(podman.run("image", "inspect", image).stdout)[0]
    assert inspect["ManifestType"] == "application/vnd.docker.distribution.manifest.v2+json"
    final = image_stages()[-1]
    _options, probe = final.healthcheck()
    assert inspect["Healthcheck"]["Test"] == ["CMD", *probe]
    assert inspect["Healthcheck"]["Interval"] == 10 * 10**9  # --interval=10s, in ns
    assert inspect["User"] == final.all("USER")[-1].args
    (entry,) = final.all("ENTRYPOINT")
    assert inspect["Config"]["Entrypoint"] == entry.exec_form()
    # Built on the base the test made, whose interpreter the venv points at.
    venv_python = podman.run(
        "run", "--rm", "--entrypoint", "readlink", image, "-f", "/opt/solitaire/bin/python"
    ).stdout.strip()
    assert venv_python.startswith("/usr/bin/python3"), venv_python


async def play_some(player: Player, gid: str, moves: int) -> None:
    """Up to `moves` random legal moves (fewer if the game has none left)."""
    for _ in range(moves):
        state = player.states[gid]
        legal = [] if state["finished"] else engine.legal_moves_from_view(state["view"])
        if not legal:
            return
        await player.move(gid, player.rng.choice(sorted(legal)))


async def finish(player: Player, gid: str) -> dict[str, Any]:
    state = player.states[gid]
    if not state["finished"]:
        state = await player.request({"t": "resign", "gid": gid})
        assert state["t"] == "state" and state["finished"], state
    return state


async def test_race_daily_and_sigkill_on_the_image(
    container_images: ContainerImages, volume: str
) -> None:
    first = Container(container_images, volume, free_port())
    second = Container(container_images, volume, first.port)
    host = Player("host", [first.ws_url], rng=random.Random(27))
    guest = Player("guest", [first.ws_url], rng=random.Random(28))
    daily = Player("daily", [first.ws_url], rng=random.Random(29))
    players = [host, guest, daily]
    try:
        first.run()
        first.wait_healthy()
        assert http_status(first.http_url + "/healthz") == 200

        # A race between two clients, and a daily attempt, all under way.
        code = await race_code(host, GAME, seed=2701)
        gids = await seat_and_start(host, [guest], code)
        await asyncio.gather(
            *(play_some(p, gids[p.name], MOVES_BEFORE_KILL) for p in (host, guest))
        )
        attempt = await daily.request({"t": "daily", "game": GAME, "confirm": True})
        assert attempt["t"] == "state" and attempt["kind"] == "daily", attempt
        gids["daily"] = attempt["gid"]
        await play_some(daily, gids["daily"], MOVES_BEFORE_KILL)
        seen = {p.name: dict(p.states[gids[p.name]]) for p in players}
        assert all(p.acked.get(gids[p.name]) for p in players), "no move was made"
        for p in players:
            await p.close()

        # SIGKILL: no drain, no goodbye; the init and everything under it die at once.
        container_images.podman.run("kill", "--signal", "KILL", first.name)
        deadline = time.monotonic() + 30
        while first.state("Running") == "true":
            assert time.monotonic() < deadline, "the container outlived SIGKILL"
            time.sleep(0.2)
        assert first.state("ExitCode") == str(KILLED)
        first.remove()

        # A new container on the same volume: every acknowledged move is there.
        second.run()
        second.wait_healthy()
        for p in players:
            gid = gids[p.name]
            state = await p.request({"t": "get", "gid": gid})
            assert state["t"] == "state", state
            assert state["n"] == len(p.acked[gid]) == seen[p.name]["n"], p.name
            assert state["view"] == seen[p.name]["view"], p.name

        # ...and play goes on: the race to its result, the daily to its leaderboard.
        await asyncio.gather(*(play_some(p, gids[p.name], 2) for p in players))
        for p in players:
            await finish(p, gids[p.name])
        result = await host.wait_for(lambda m: m["t"] == "result" and m["race"] == code)
        standings = {s["player"]: s for s in result["standings"]}
        assert set(standings) == {host.player, guest.player}
        for p in (host, guest):
            assert standings[p.player]["moves"] == len(p.acked[gids[p.name]]), p.name
        url = f"{second.http_url}/leaderboard/{GAME}/{attempt['date']}.json"
        with urllib.request.urlopen(url, timeout=10) as r:
            board = json.loads(r.read())
        mine = [e for e in board["entries"] if e["player"] == daily.player]
        assert len(mine) == 1 and mine[0]["moves"] == len(daily.acked[gids["daily"]]), board
    finally:
        for p in players:
            await p.close()
        first.remove()
        second.remove()
