"""The browser client's files (the `client_web` package's data), served on the WebSocket port.

    GET /play                the page: new race, join by code, daily, practice, leaderboards
    GET /r/CODE              the same page, opening race CODE (join if it can, else watch)
    GET /play/PATH           its scripts, styles and the vendored MessagePack codec

Every file is read once, at start-up, with its gzip form, ETag (a hash of its bytes) and
Last-Modified (the file's time); a request whose If-None-Match or If-Modified-Since still
holds gets 304, and a browser that accepts gzip gets the smaller body. Files are revalidated
on every use (`no-cache`): there is no build step to give them versioned names, and a
revalidation costs one small round trip. The page's Content-Security-Policy lets it load
scripts, styles and its WebSocket from this server only, with no inline script and no eval.
"""

from __future__ import annotations

import email.utils
import gzip
import hashlib
import http
import logging
import re
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from websockets.datastructures import Headers
from websockets.http11 import Response

log = logging.getLogger(__name__)

PACKAGE = "client_web"
PAGE = "index.html"
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".json": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}
COMPRESSIBLE = {".html", ".css", ".js", ".json", ".svg", ".txt"}
# Everything from this server only; no inline script or style, no eval, no framing.
PLAY_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_CODE = re.compile(r"[2-9A-Za-z]{1,16}")


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    gzipped: bytes | None  # None: not worth compressing
    content_type: str
    etag: str
    last_modified: str
    modified_s: int


def _walk(root: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found = []
    for entry in root.iterdir():
        name = prefix + entry.name
        if entry.is_dir():
            if not entry.name.startswith(("_", ".")):
                found.extend(_walk(entry, name + "/"))
        elif "." + entry.name.rsplit(".", 1)[-1] in TYPES:
            found.append((name, entry))
    return found


def _load(entry: Traversable, suffix: str) -> StaticFile:
    body = entry.read_bytes()
    # Installed packages are files; a zipped one has no times (Last-Modified: the epoch).
    modified = int(entry.stat().st_mtime) if isinstance(entry, Path) else 0
    gz = gzip.compress(body, 9, mtime=0) if suffix in COMPRESSIBLE else None
    if gz is not None and len(gz) >= len(body):
        gz = None
    return StaticFile(
        body=body,
        gzipped=gz,
        content_type=TYPES[suffix],
        etag='"' + hashlib.sha256(body).hexdigest()[:24] + '"',
        last_modified=email.utils.formatdate(modified, usegmt=True),
        modified_s=modified,
    )


def _accepts_gzip(accept: str | None) -> bool:
    for part in (accept or "").split(","):
        coding, _, params = part.strip().partition(";")
        if coding.strip().lower() in ("gzip", "*"):
            q = params.strip().lower()
            if not q.startswith("q="):
                return True
            try:
                return float(q[2:]) > 0
            except ValueError:
                return False  # a malformed weight: send it plain
    return False


class WebClient:
    """The browser client's files, in memory, and their answers."""

    def __init__(self, package: str = PACKAGE) -> None:
        root = resources.files(package)
        self.files: dict[str, StaticFile] = {
            name: _load(entry, "." + name.rsplit(".", 1)[-1]) for name, entry in _walk(root)
        }
        if PAGE not in self.files:
            raise RuntimeError(f"the browser client's {PAGE} is missing from {package}")

    @staticmethod
    def serves(path: str) -> bool:
        return path == "/play" or path.startswith(("/play/", "/r/"))

    def respond(self, path: str, headers: Headers) -> Response:
        if path in ("/play", "/play/"):
            name = PAGE
        elif path.startswith("/r/"):
            code = path[len("/r/") :].rstrip("/")
            if not _CODE.fullmatch(code):
                return _plain(404, "not a race code")
            name = PAGE
        else:
            name = path[len("/play/") :]
        found = self.files.get(name)
        if found is None or ".." in name:
            return _plain(404, "not found")
        extra = {
            "Cache-Control": "no-cache",
            "ETag": found.etag,
            "Last-Modified": found.last_modified,
            "Vary": "Accept-Encoding",
        }
        if found.content_type.startswith("text/html"):
            extra["Content-Security-Policy"] = PLAY_CSP
            extra["Referrer-Policy"] = "no-referrer"
            extra["X-Frame-Options"] = "DENY"
        if _not_modified(found, headers):
            return _build(304, b"", None, extra)
        body = found.body
        if found.gzipped is not None and _accepts_gzip(headers.get("Accept-Encoding")):
            body = found.gzipped
            extra["Content-Encoding"] = "gzip"
        return _build(200, body, found.content_type, extra)


def _not_modified(found: StaticFile, headers: Headers) -> bool:
    match = headers.get("If-None-Match")
    if match is not None:
        tags = {t.strip().removeprefix("W/") for t in match.split(",")}
        return "*" in tags or found.etag in tags
    since = headers.get("If-Modified-Since")
    if since is not None:
        try:
            when = email.utils.parsedate_to_datetime(since)
        except (TypeError, ValueError):
            return False
        return found.modified_s <= int(when.timestamp())
    return False


def _build(status: int, body: bytes, content_type: str | None, extra: dict[str, str]) -> Response:
    code = http.HTTPStatus(status)
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("X-Content-Type-Options", "nosniff"),
        ]
    )
    if status != 304:
        headers["Content-Length"] = str(len(body))
    if content_type is not None:
        headers["Content-Type"] = content_type
    for name, value in extra.items():
        headers[name] = value
    return Response(code.value, code.phrase, headers, body)


def _plain(status: int, message: str) -> Response:
    return _build(status, (message + "\n").encode(), "text/plain; charset=utf-8", {})
