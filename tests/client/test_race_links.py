"""Racing friends on other machines: the server's public URL, the race link the host
shares, `solitaire race join LINK`, and wss:// through a TLS proxy. The real client against
real servers; "another machine" is a network namespace where one can be made."""

from __future__ import annotations

import re
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from client_harness import RACE_CODE, Bot, Terminal
from support import netns
from support.server_proc import ServerFactory, ServerProcess, free_port
from support.tls_proxy import TlsProxy, self_signed


def saved(home: Path) -> dict:
    return tomllib.loads((home / "solitaire-race" / "config.toml").read_text())


def race_through_a_link(host: Bot, friend_home: Path, **friend: object) -> tuple[str, Bot]:
    """The host's `race new` prints its link; the friend joins with the link alone (no
    --server); the host starts. Returns the link and the friend's client."""
    created = host.next("created")
    link = host.next("link")
    assert link["race"] == created["race"]
    guest = Bot(friend_home, "--name", "bob", "race", "join", link["url"], **friend)  # type: ignore[arg-type]
    lobby = guest.next("lobby")
    assert {p["name"] for p in lobby["players"]} == {"ann", "bob"}
    host.next("lobby")
    host.send("start")
    for player in (host, guest):
        state = player.next("state")
        assert state["kind"] == "race" and state["race"] == created["race"]
    return link["url"], guest


def test_race_new_prints_the_link_and_join_takes_the_server_from_it(
    servers: ServerFactory, tmp_path: Path
) -> None:
    port = free_port()
    public = f"http://127.0.0.1:{port}"
    server = ServerProcess(servers.redis_url, servers.namespace, servers.data_dir, port=port,
                           env={"SOLITAIRE_PUBLIC_URL": public + "/"})  # fmt: skip
    servers.servers.append(server)
    server.start()
    host = Bot(tmp_path / "ann", "--server", server.ws_url, "--name", "ann",
               "race", "new", "quatorze", "--seed", "7")  # fmt: skip
    try:
        link, guest = race_through_a_link(host, tmp_path / "bob")
        assert re.fullmatch(rf"{re.escape(public)}/r/[2-9A-HJ-NP-Z]{{12}}", link)
        # The link's server is saved once it answered, with the friend's player.
        assert saved(tmp_path / "bob")["server"] == server.ws_url
        assert server.ws_url in saved(tmp_path / "bob")["tokens"]
        guest.kill()
    finally:
        host.kill()
    # A link that is not one is refused before connecting, and says what a link is.
    bad = Bot(tmp_path / "cy", "race", "join", f"{public}/race/ABC")
    assert bad.wait() == 2
    assert "/r/CODE" in bad.proc.stderr.read()


def test_the_server_says_where_players_connect(servers: ServerFactory) -> None:
    behind = servers.start(env={"SOLITAIRE_PUBLIC_URL": "wss://play.example.org/ws"})
    assert "players connect at https://play.example.org " in behind.log_text()
    local = servers.start()
    assert f"players connect at http://127.0.0.1:{local.port}" in local.log_text()
    assert "only this machine can connect" in local.log_text()


def test_the_lobby_shows_the_link_and_says_when_it_works_here_only(
    terminals: Callable[..., Terminal], server: ServerProcess
) -> None:
    alice = terminals("alice", "--server", server.ws_url, "--name", "alice",
                      "race", "new", "doublets")  # fmt: skip
    code = alice.wait_for(RACE_CODE.pattern).group(1)
    screen = alice.wait_for(r"Share it:").string
    assert f"{server.http_url}/r/{code}" in screen
    assert "this machine only" in screen and "Race friends on other machines" in screen


def test_wss_through_a_tls_proxy_with_a_self_signed_certificate(
    servers: ServerFactory, tmp_path: Path
) -> None:
    """The server behind a TLS-terminating proxy, its public URL https://: the host connects
    with wss://, the friend joins from the https:// link; both trust the proxy's certificate
    through SSL_CERT_FILE. Without it, the friend is told the certificate is not trusted."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command (Debian's openssl) makes the test's certificate")
    cert = self_signed(tmp_path, "127.0.0.1")
    trust = {"SSL_CERT_FILE": str(cert.cert)}
    port = free_port()
    with TlsProxy(cert, backend_port=port) as proxy:
        public = f"https://127.0.0.1:{proxy.port}"
        server = ServerProcess(servers.redis_url, servers.namespace, servers.data_dir,
                               port=port, env={"SOLITAIRE_PUBLIC_URL": public})  # fmt: skip
        servers.servers.append(server)
        server.start()
        wss = f"wss://127.0.0.1:{proxy.port}/ws"
        untrusting = Bot(tmp_path / "eve", "--server", wss, "--name", "eve", "stats")
        assert untrusting.wait() == 1
        assert "certificate" in untrusting.proc.stderr.read().lower()
        host = Bot(tmp_path / "ann", "--server", wss, "--name", "ann",
                   "race", "new", "quatorze", "--seed", "7", env=trust)  # fmt: skip
        try:
            link, guest = race_through_a_link(host, tmp_path / "bob", env=trust)
            assert link.startswith(f"{public}/r/")
            assert saved(tmp_path / "bob")["server"] == wss
            # A move through the proxy and its answer.
            guest.send("resign")
            assert guest.next("state")["finished"] is True
            guest.kill()
        finally:
            host.kill()
        assert proxy.connections >= 2  # the host's and the friend's, both through TLS


def test_a_friend_on_another_machine_joins_from_the_pasted_link(
    redis_namespace: str, tmp_path: Path
) -> None:
    """The server and its host on one machine (a network namespace: its own loopback), the
    friend on this one, which reaches it only over the link between them. The server listens
    on every interface and knows its public address; the host connects over loopback, yet
    the link it prints works for the friend."""
    reason = netns.unavailable()
    if reason is not None:
        pytest.skip(reason)
    with netns.Machine.linked() as box:
        port = free_port()
        public = f"http://{box.address}:{port}"
        server = ServerProcess(None, redis_namespace, tmp_path / "server", port=port,
                               host="0.0.0.0", address=box.address, prefix=box.command([]),
                               env={"SOLITAIRE_PUBLIC_URL": public})  # fmt: skip
        server.start()
        host = Bot(tmp_path / "ann", "--server", f"ws://127.0.0.1:{port}/ws", "--name", "ann",
                   "race", "new", "quatorze", "--seed", "7", prefix=box.command([]))  # fmt: skip
        try:
            assert f"players connect at {public}" in server.log_text()
            link, guest = race_through_a_link(host, tmp_path / "bob")
            assert link.startswith(f"{public}/r/")
            assert saved(tmp_path / "bob")["server"] == f"ws://{box.address}:{port}/ws"
            guest.kill()
        finally:
            host.kill()
            server.stop()
        # Without a public URL, bound to all interfaces: each address is listed.
        server.env.pop("SOLITAIRE_PUBLIC_URL")
        server.start()
        try:
            assert f"players connect at http://{box.address}:{port}" in server.log_text()
        finally:
            server.stop()
