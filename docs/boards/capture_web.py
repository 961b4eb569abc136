"""Regenerate the web client's screenshots in this folder (docs/boards/web-*.png).

    .venv/bin/python docs/boards/capture_web.py

Starts a server (embedded store in a temporary directory) and, in Debian's chromium driven
by Playwright (as tests/web does), opens each game's practice deal 1 on a desktop window
(1280x900) and a phone (360x740, touch), plays the first few legal moves the page lists,
and saves web-GAME-desktop.png and web-GAME-phone.png; then a Quatorze race lobby
(web-lobby-phone.png).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "web"))
from support.server_proc import ServerProcess  # noqa: E402
from web_player import WebPlayer  # noqa: E402

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]  # fmt: skip
SIZES = {
    "desktop": {"viewport": {"width": 1280, "height": 900}},
    "phone": {"viewport": {"width": 360, "height": 740}, "has_touch": True, "is_mobile": True},
}
MOVES = 3


def main() -> None:
    out = Path(__file__).resolve().parent
    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("chromium is missing: apt-get install chromium")
    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(None, "capture", Path(tmp) / "data").start()
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=FLAGS)
                for i, game in enumerate(("quatorze", "doublets", "bakers_game", "hopscotch")):
                    for size, options in SIZES.items():
                        context = browser.new_context(**options)
                        player = WebPlayer(context.new_page(), server.http_url)
                        player.sign_in(f"{size}{i}")
                        page = player.page
                        page.locator("#practice-game").select_option(game)
                        page.locator("#practice-seed").fill("1")
                        player.button("Practice").click()
                        page.locator("#board .card").first.wait_for()
                        for n in range(MOVES):
                            legal = player.legal()
                            if not legal:
                                break
                            player.type_move(legal[0])
                            player.wait_moves(n + 1)
                        page.locator("#notice").evaluate("n => n.textContent = ''")
                        path = out / f"web-{game}-{size}.png"
                        page.screenshot(path=str(path), full_page=True)
                        print(path.relative_to(ROOT))
                        context.close()
                context = browser.new_context(**SIZES["phone"])
                host = WebPlayer(context.new_page(), server.http_url).sign_in("ann")
                host.new_race("quatorze")
                path = out / "web-lobby-phone.png"
                host.page.screenshot(path=str(path), full_page=True)
                print(path.relative_to(ROOT))
                context.close()
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
