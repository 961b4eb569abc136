"""Another machine on this one: a network namespace with its own loopback and its own
address, linked to this one by a veth pair (needs root and `ip`; `unavailable()` says why
not, for a skip).

    with Machine.linked() as other:
        other.address            # 10.x.y.2: how this namespace reaches it
        other.peer               # 10.x.y.1: how it reaches this namespace
        other.command(["solitaire", ...])   # argv that runs inside it

Nothing inside the namespace reaches this machine's loopback (127.0.0.1 there is its own),
so a program in it finds a server here only at `peer`, and the other way round.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, timeout=30)


def unavailable() -> str | None:
    """Why no namespace can be made here (None: one can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    name = f"srprobe{uuid.uuid4().hex[:6]}"
    try:
        _ip("netns", "add", name)
    except subprocess.CalledProcessError as exc:
        return f"cannot make a network namespace: {exc.stderr.decode(errors='replace').strip()}"
    _ip("netns", "del", name)
    return None


@dataclass(frozen=True)
class Machine:
    name: str
    address: str
    peer: str

    def command(self, argv: list[str]) -> list[str]:
        return ["ip", "netns", "exec", self.name, *argv]

    @classmethod
    @contextlib.contextmanager
    def linked(cls) -> Iterator[Machine]:
        tag = uuid.uuid4().hex[:8]
        name, here, there = f"sr{tag}", f"vh{tag}", f"vt{tag}"
        # A /30 of its own, so that tests running at once never share addresses.
        net = f"10.{random.randrange(200, 250)}.{random.randrange(256)}.{random.randrange(64) * 4}"
        base = net.rsplit(".", 1)[0] + "."
        last = int(net.rsplit(".", 1)[1])
        peer, address = f"{base}{last + 1}", f"{base}{last + 2}"
        _ip("netns", "add", name)
        try:
            _ip("link", "add", here, "type", "veth", "peer", "name", there)
            _ip("link", "set", there, "netns", name)
            _ip("addr", "add", f"{peer}/30", "dev", here)
            _ip("link", "set", here, "up")
            _ip("-n", name, "addr", "add", f"{address}/30", "dev", there)
            _ip("-n", name, "link", "set", there, "up")
            _ip("-n", name, "link", "set", "lo", "up")
            yield cls(name, address, peer)
        finally:
            with contextlib.suppress(subprocess.CalledProcessError):
                _ip("link", "del", here)  # takes its peer in the namespace with it
            with contextlib.suppress(subprocess.CalledProcessError):
                _ip("netns", "del", name)
