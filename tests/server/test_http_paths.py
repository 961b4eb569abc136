"""The HTTP side's front doors, with real requests to a real server: `/` and
`/leaderboard.json` lead to today's board instead of a bare 404."""

from __future__ import annotations

import datetime as dt
import json
import urllib.error
import urllib.request

from support.server_proc import ServerProcess

import engine


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # let the 302 come back as it is


def get_unfollowed(url: str) -> tuple[int, str]:
    """(status, Location) of a GET, without following a redirect."""
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(url, timeout=5) as r:
            return r.status, r.headers.get("Location", "")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location", "")


def today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


def test_the_root_redirects_to_the_leaderboard(server: ServerProcess) -> None:
    assert get_unfollowed(server.http_url + "/") == (302, "/leaderboard")
    # Followed to the end: today's page of the first game.
    with urllib.request.urlopen(server.http_url + "/", timeout=5) as r:
        assert r.status == 200
        assert r.url == f"{server.http_url}/leaderboard/{engine.GAMES[0]}/{today()}"
        assert r.headers["Content-Type"].startswith("text/html")


def test_leaderboard_json_redirects_to_the_json_of_todays_board(server: ServerProcess) -> None:
    status, location = get_unfollowed(server.http_url + "/leaderboard.json")
    assert (status, location) == (302, f"/leaderboard/{engine.GAMES[0]}/{today()}.json")
    with urllib.request.urlopen(server.http_url + "/leaderboard.json", timeout=5) as r:
        assert r.status == 200 and r.headers["Content-Type"] == "application/json"
        board = json.loads(r.read())
    assert board["t"] == "leaderboard"
    assert (board["game"], board["date"], board["total"]) == (engine.GAMES[0], today(), 0)
    # Other paths are still plain 404s.
    assert get_unfollowed(server.http_url + "/leaderboard.xml")[0] == 404
