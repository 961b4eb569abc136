"""Fixtures of the deploy tests: a local Redis Cluster of real valkey-server processes
(bench/local_cluster.py, which `python -m bench.capacity --cluster` uses too), and the
container images (podman_images.py) for the tests that run the server's image.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from deploy_files import ROOT
from podman_images import ContainerImages, base_image, server_image, standin_images
from support.podman import podman_engine

from bench.local_cluster import LocalRedisCluster


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRedisCluster]:
    with LocalRedisCluster(root=tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def container_images() -> Iterator[ContainerImages]:
    """Made once per run (the base and the stand-ins come from podman's store when an earlier
    run made them from the same inputs); a skip with the reason where podman cannot run."""
    engine = podman_engine()
    base = base_image(engine)
    engine = engine.able_to_run(base)
    try:
        compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
        tag = compose["services"]["server"]["image"]
        yield ContainerImages(engine, base, server_image(engine, base, tag), standin_images(engine))
    finally:
        engine.forget_runtime_wrapper()
