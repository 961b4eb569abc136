"""A TLS-terminating TCP forwarder, as a reverse proxy in front of the server would be:
clients speak TLS to it (wss://, https://), it speaks plain TCP to the server. And a
self-signed certificate for it, made with the `openssl` command.

    cert = self_signed(tmp_path, "127.0.0.1")         # cert.pem, key.pem
    with TlsProxy(cert, backend_port=server.port) as proxy:
        proxy.port                                    # wss://127.0.0.1:PORT/ws

It runs its own event loop in a thread, so that the test's subprocesses can use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import ssl
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType


@dataclass(frozen=True)
class Certificate:
    cert: Path
    key: Path


def self_signed(directory: Path, address: str) -> Certificate:
    """A self-signed certificate for an IP address (its own CA: a client that trusts the
    file trusts the server)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("the openssl command is not installed")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={address}",
         "-addext", f"subjectAltName=IP:{address}",
         "-addext", "basicConstraints=critical,CA:TRUE"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return Certificate(cert, key)


class TlsProxy:
    def __init__(self, certificate: Certificate, backend_port: int, host: str = "127.0.0.1"):
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(certificate.cert, certificate.key)
        self.backend_port = backend_port
        self.host = host
        self.port = 0
        self.connections = 0  # TLS connections accepted
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    def __enter__(self) -> TlsProxy:
        self._thread.start()
        started = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        started.result(timeout=10)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    async def _start(self) -> None:
        self._server = await asyncio.start_server(
            self._serve, self.host, 0, ssl=self.context, ssl_handshake_timeout=10
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

    async def _serve(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            backend_r, backend_w = await asyncio.open_connection("127.0.0.1", self.backend_port)
        except OSError:
            client_w.close()
            return
        # Swallowed when the proxy stops: asyncio would log a cancelled handler as an error.
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(_pipe(client_r, backend_w), _pipe(backend_r, client_w))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError, ssl.SSLError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError, ssl.SSLError):
            writer.close()
