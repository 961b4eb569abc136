"""The browser client's files as the server serves them: content types, ETag and
Last-Modified revalidation, gzip, the page's Content-Security-Policy; the vendored
MessagePack codec matches the sha256 written beside it; the page's JavaScript and CSS stay
within the budget of 150 KB (uncompressed, the codec included); nothing loads from another
origin."""

from __future__ import annotations

import gzip
import hashlib
import re
import urllib.error
import urllib.request
from pathlib import Path

from support.server_proc import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "client_web"
BUDGET_BYTES = 150 * 1024


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def page_assets() -> list[str]:
    """Every script and stylesheet the page loads, and every module they import."""
    html = (WEB / "index.html").read_text()
    found = re.findall(r'(?:src|href)="(/play/[^"]+\.(?:js|css))"', html)
    queue = [f for f in found if f.endswith(".js")]
    while queue:
        path = queue.pop()
        text = (WEB / path.removeprefix("/play/")).read_text()
        for imported in re.findall(r'from "\./([^"]+)"', text):
            full = str(Path(path).parent / imported)
            if full not in found:
                found.append(full)
                queue.append(full)
    return found


def test_the_page_and_its_files_have_their_types_and_revalidate(server: ServerProcess) -> None:
    base = server.http_url
    status, headers, body = get(base + "/play")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert body == (WEB / "index.html").read_bytes()
    csp = headers["Content-Security-Policy"]
    assert "script-src 'self';" in csp and "default-src 'none'" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    assert "frame-ancestors 'none'" in csp and headers["X-Content-Type-Options"] == "nosniff"
    etag, modified = headers["ETag"], headers["Last-Modified"]
    assert get(base + "/play", {"If-None-Match": etag})[0] == 304
    assert get(base + "/play", {"If-None-Match": '"other"'})[0] == 200
    assert get(base + "/play", {"If-Modified-Since": modified})[0] == 304
    assert get(base + "/play", {"If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"})[0] == 200

    # A race's link is the same page (the code is read by the page itself).
    status, headers, body = get(base + "/r/7K3M2PQX9ABC")
    assert status == 200 and body == (WEB / "index.html").read_bytes()
    assert headers["Content-Security-Policy"] == csp
    assert get(base + "/r/not%20a%20code")[0] == 404
    assert get(base + "/play/nothing.js")[0] == 404
    assert get(base + "/play/__init__.py")[0] == 404
    assert get(base + "/play/../server/config.py")[0] == 404

    types = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
    for asset in page_assets():
        status, headers, body = get(base + asset)
        assert status == 200, asset
        assert headers["Content-Type"] == types[Path(asset).suffix], asset
        assert body == (WEB / asset.removeprefix("/play/")).read_bytes()
        assert "Content-Encoding" not in headers
        status, zipped_headers, zipped = get(base + asset, {"Accept-Encoding": "gzip, br"})
        assert zipped_headers["Content-Encoding"] == "gzip" and gzip.decompress(zipped) == body
        assert (
            zipped_headers["ETag"] == headers["ETag"]
            and zipped_headers["Vary"] == "Accept-Encoding"
        )
        for refused in ("gzip;q=0", "gzip;q=zero", "br"):
            status, plain_headers, _ = get(base + asset, {"Accept-Encoding": refused})
            assert status == 200 and "Content-Encoding" not in plain_headers
        assert get(base + asset, {"If-None-Match": headers["ETag"]})[0] == 304


def test_the_page_loads_nothing_from_anywhere_else() -> None:
    for path in [WEB / "index.html", WEB / "app.css", *sorted((WEB / "js").glob("*.js"))]:
        text = path.read_text()
        assert not re.search(r"(?:src|href)=\"(?:https?:)?//", text), path
        assert not re.search(r"url\((?!['\"]?data:)", text), path
        assert "innerHTML" not in text and "eval(" not in text, path
        assert "<script>" not in text, path  # no inline script


def test_the_vendored_codec_is_the_one_recorded_beside_it() -> None:
    record = (WEB / "vendor" / "msgpack.txt").read_text()
    recorded = re.search(r"^sha256:\s+([0-9a-f]{64})$", record, re.MULTILINE)
    assert recorded is not None
    actual = hashlib.sha256((WEB / "vendor" / "msgpack.min.js").read_bytes()).hexdigest()
    assert actual == recorded.group(1)
    assert re.search(r"^version:\s+\d+\.\d+\.\d+$", record, re.MULTILINE)
    assert "ISC" in record and (WEB / "vendor" / "msgpack-LICENSE.txt").exists()


def test_all_javascript_and_css_of_the_page_fit_the_budget() -> None:
    assets = page_assets()
    assert "/play/vendor/msgpack.min.js" in assets and "/play/js/board.js" in assets
    total = sum((WEB / a.removeprefix("/play/")).stat().st_size for a in assets)
    assert total < BUDGET_BYTES, f"{total} bytes of JS and CSS"


def test_pip_install_brings_every_file_of_the_page() -> None:
    """Each file of client_web/ is named by the package data that pyproject.toml ships."""
    import fnmatch
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    setuptools = project["tool"]["setuptools"]
    assert "client_web" in setuptools["packages"]["find"]["include"]
    globs = setuptools["package-data"]["client_web"]
    for path in WEB.rglob("*"):
        if path.is_dir() or path.suffix == ".py" or "__pycache__" in path.parts:
            continue
        name = str(path.relative_to(WEB))
        assert any(fnmatch.fnmatch(name, g) and name.count("/") == g.count("/") for g in globs), (
            name
        )
