"""The images the container tests run: the server's, built from deploy/Dockerfile as it is, on
a base made from Debian's packages, and stand-ins for the store and the balancer under the
names docker-compose.yml gives them.

No image registry is reachable here, so nothing is pulled:

- The base stands in for `python:3.11-slim-bookworm` (the Dockerfile's PYTHON_IMAGE): Debian
  bookworm with python3, python3-venv and python3-pip from debootstrap, and `python` linked to
  python3, as the official image has it.
- The store stands in for `valkey/valkey:8.1-alpine`: Debian's redis-server (bookworm has no
  valkey; its commands and files are Redis 7's), as `valkey-server` and `valkey-cli`.
- The balancer stands in for `haproxy:2.8-alpine`: Debian's haproxy (2.6) with wget for the
  compose file's health check.

The base and the stand-ins take a minute or two to make, so they are kept in podman's own
image store between runs, tagged with a hash of everything they are made from (the recipe's
source included): a change to any of it makes new ones, and an unchanged recipe reuses them.
The server's image is built on every run, from the checkout (podman's layer cache makes an
unchanged checkout quick).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import inspect
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from deploy_files import ROOT
from support.podman import Podman, PodmanError

SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
BASE_PACKAGES = ("python3", "python3-venv", "python3-pip")
STANDIN_PACKAGES = ("redis-server", "haproxy", "wget")
# CA certificates the host trusts beyond Debian's own (update-ca-certificates' folder).
HOST_CAS = Path("/usr/local/share/ca-certificates")
CACHE_REPOSITORY = "localhost/solitaire-race-test"
LOCK = Path("/var/tmp/solitaire-race-test-images.lock")
DEBOOTSTRAP_TIMEOUT_S = 900
DOCKER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@contextmanager
def images_lock() -> Iterator[None]:
    """One maker of cached images at a time on this machine (two test runs may overlap)."""
    with open(LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


def host_cas() -> list[Path]:
    return sorted(p for p in HOST_CAS.rglob("*.crt") if p.is_file()) if HOST_CAS.is_dir() else []


def inputs_hash(*parts: object) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(repr(part).encode())
    for ca in host_cas():
        digest.update(ca.read_bytes())
    return digest.hexdigest()[:16]


def debootstrap(root: Path, packages: tuple[str, ...]) -> None:
    done = subprocess.run(
        [
            "debootstrap", "--variant=minbase", f"--include={','.join(packages)}",
            SUITE, str(root), MIRROR,
        ],
        capture_output=True, text=True, timeout=DEBOOTSTRAP_TIMEOUT_S, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"debootstrap failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def trust_host_cas(root: Path) -> None:
    """The host's own CAs, trusted inside too. This sandbox reaches PyPI through a proxy that
    presents certificates of a CA only its hosts trust, and the Dockerfile's build stage runs
    pip; on a host without such CAs, or in a root without Debian's CA store (nothing there
    speaks TLS), this does nothing."""
    cas = host_cas()
    if not cas or not (root / "usr/sbin/update-ca-certificates").exists():
        return
    target = root / HOST_CAS.relative_to("/")
    target.mkdir(parents=True, exist_ok=True)
    for ca in cas:
        shutil.copy2(ca, target / ca.name)
    subprocess.run(
        ["chroot", str(root), "update-ca-certificates"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip


def tidy(root: Path) -> None:
    """Leave out what an image does not need: downloaded packages and package lists."""
    for folder in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for entry in (root / folder).glob("*"):
            if entry.is_file():
                entry.unlink()


def import_root(podman: Podman, root: Path, tag: str, changes: list[str]) -> None:
    tar = subprocess.Popen(
        ["tar", "--numeric-owner", "-C", str(root), "-c", "."],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
    )
    args = ["import"]
    for change in changes:
        args += ["--change", change]
    try:
        done = subprocess.run(
            [*podman.argv(*args), "-", tag],
            stdin=tar.stdout, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        assert tar.stdout is not None
        tar.stdout.close()
        tar.wait()
    if done.returncode != 0 or tar.returncode != 0:
        raise PodmanError(f"podman import {tag} failed:\n{done.stderr[-2000:]}")


def cached(podman: Podman, kind: str, inputs: str, make: Callable[[str], None]) -> str:
    """The image `kind` made from `inputs`: from podman's store if made before, else made now
    by `make(tag)`."""
    repository = f"{CACHE_REPOSITORY}/{kind}"
    tag = f"{repository}:{inputs}"
    with images_lock():
        if not podman.image_exists(tag):
            make(tag)
            # Ones made from other inputs are out of date: drop them (one in use stays).
            listed = podman.run(
                "images", "--filter", f"reference={repository}", "--format",
                "{{.Repository}}:{{.Tag}}",
            )  # fmt: skip
            stale = [ref for ref in listed.stdout.split() if ref != tag]
            if stale:
                podman.run("rmi", *stale, check=False)
    return tag


def debootstrapped(
    podman: Podman, kind: str, packages: tuple[str, ...], prepare: Callable[[Path], None],
    changes: list[str],
) -> str:  # fmt: skip
    """A Debian root with `packages`, given its last touches by `prepare`, as an image."""
    inputs = inputs_hash(SUITE, MIRROR, packages, changes, inspect.getsource(prepare))

    def make(tag: str) -> None:
        folder = Path(tempfile.mkdtemp(prefix=f"solitaire-{kind}-", dir="/var/tmp"))
        try:
            root = folder / "root"
            debootstrap(root, packages)
            trust_host_cas(root)
            prepare(root)
            tidy(root)
            import_root(
                podman, root, tag, [*changes, f"LABEL org.solitaire-race.test.inputs={inputs}"]
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    return cached(podman, kind, inputs, make)


def prepare_base(root: Path) -> None:
    # The official python images have `python`; Debian's python3 package does not.
    (root / "usr/bin/python").symlink_to("python3")


def base_image(podman: Podman) -> str:
    """The Dockerfile's PYTHON_IMAGE, made from Debian's packages."""
    return debootstrapped(
        podman, "base", BASE_PACKAGES, prepare_base,
        [f"ENV PATH={DOCKER_PATH}", 'CMD ["python3"]'],
    )  # fmt: skip


def prepare_standins(root: Path) -> None:
    # (Everything the stand-ins get is in this function: its source is part of their hash.)
    valkey_server = (
        "#!/bin/sh\n"
        # The valkey image's server takes connections from other containers without a
        # password (its build turns protected mode off): so does this stand-in's.
        'exec /usr/bin/redis-server "$@" --protected-mode no\n'
    )
    bin_dir = root / "usr/local/bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "valkey-server").write_text(valkey_server)
    (bin_dir / "valkey-server").chmod(0o755)
    (bin_dir / "valkey-cli").symlink_to("/usr/bin/redis-cli")
    (root / "data").mkdir(exist_ok=True)
    (root / "usr/local/etc/haproxy").mkdir(parents=True, exist_ok=True)


STORE_CONTAINERFILE = """FROM {root}
WORKDIR /data
VOLUME /data
EXPOSE 6379
CMD ["valkey-server"]
"""

BALANCER_CONTAINERFILE = """FROM {root}
USER haproxy
EXPOSE 8080
STOPSIGNAL SIGUSR1
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
"""


def build_from(podman: Podman, containerfile: str, tag: str) -> None:
    """An image from `containerfile` with an empty build context, in Docker's format."""
    with tempfile.TemporaryDirectory(prefix="solitaire-standin-") as context:
        (Path(context) / "Containerfile").write_text(containerfile)
        podman.run("build", "--format", "docker", "-t", tag, context)


def standin_images(podman: Podman) -> dict[str, str]:
    """The stand-in images: "store" and "balancer"."""
    root = debootstrapped(
        podman, "standins-root", STANDIN_PACKAGES, prepare_standins, [f"ENV PATH={DOCKER_PATH}"]
    )
    made = {}
    for kind, text in (("store", STORE_CONTAINERFILE), ("balancer", BALANCER_CONTAINERFILE)):
        containerfile = text.format(root=root)
        make = functools.partial(build_from, podman, containerfile)
        made[kind] = cached(podman, kind, inputs_hash(containerfile), make)
    return made


def server_image(podman: Podman, base: str, tag: str) -> str:
    """deploy/Dockerfile built from the checkout, as an operator would build it, on `base`:
    in Docker's image format, since the OCI format has no HEALTHCHECK."""
    podman.run(
        "build", "--format", "docker", "--build-arg", f"PYTHON_IMAGE={base}",
        "-f", str(ROOT / "deploy" / "Dockerfile"), "-t", tag, str(ROOT),
        timeout=900,
    )  # fmt: skip
    # Every change to the checkout leaves the last run's image untagged: drop those older than
    # a day, so that runs on one machine do not pile them up (recent ones are the layer cache).
    podman.run("image", "prune", "--force", "--filter", "until=24h", check=False)
    return tag


@dataclass(frozen=True)
class ContainerImages:
    """podman able to run containers here, and the images the container tests run."""

    podman: Podman
    base: str  # the Dockerfile's PYTHON_IMAGE
    server: str  # deploy/Dockerfile built from this checkout, tagged as the compose file names it
    standins: dict[str, str]  # "store" and "balancer"
