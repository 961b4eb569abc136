"""What the server tells about its memory (server/memory.py): every bounded cache's
entries and capacity at /metrics, and with --debug-memory a JSON report at /debug/memory
(bench/soak.py reads it to tell caches filling from a leak)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

from helpers import close_all, seat_race
from support.server_proc import ServerProcess

from server.config import Config

CACHES = {  # name at /metrics -> the setting that bounds it
    "games": Config().game_cache_size,
    "game_keys": Config().game_keys_memo_size,
    "race_seats": Config().race_memo_size,
    "race_lobbies": Config().race_memo_size,
    "replay_marks": Config().replay_memo_size,
    "spectator_games": Config().spectator_memo_size,
    "hint_owners": Config().solver_owners_remembered,
}


def get(server: ServerProcess, path: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(server.http_url + path, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def gauge(text: str, name: str, cache: str) -> float:
    found = re.search(rf'^{name}{{cache="{cache}"}} (\S+)$', text, re.MULTILINE)
    assert found, f"{name} of {cache} not in /metrics"
    return float(found.group(1))


async def test_metrics_show_every_bounded_cache_and_the_debug_report_is_off(server):
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    assert (await seats[0].play())["t"] == "state"
    text = get(server, "/metrics")[1].decode()
    for name, capacity in CACHES.items():
        assert gauge(text, "solitaire_cache_capacity", name) == capacity
    # Both seats' games were dealt here and the one played is cached; the race's seats too.
    assert gauge(text, "solitaire_cache_entries", "games") >= 1
    assert gauge(text, "solitaire_cache_entries", "race_seats") >= 1
    assert gauge(text, "solitaire_cache_entries", "replay_marks") == 0
    assert get(server, "/debug/memory")[0] == 404
    await close_all(seats)


async def test_the_debug_report_counts_caches_and_what_grew_since_its_baseline(servers):
    server = servers.start(env={"SOLITAIRE_DEBUG_MEMORY": "1"})
    status, body = get(server, "/debug/memory?baseline=1")
    assert status == 200
    first: dict[str, Any] = json.loads(body)
    assert first["tracing"] is True and first["rss_kb"] > 0 and first["traced_kb"] > 0
    assert first["caches"]["games"] == {"entries": 0, "capacity": CACHES["games"]}
    assert set(first["caches"]) == set(CACHES)
    races = [
        await seat_race(server.ws_url, [f"a{i}", f"b{i}"], "quatorze", i + 1) for i in range(3)
    ]
    for _code, seats, _ in races:
        assert (await seats[0].play())["t"] == "state"
    report = json.loads(get(server, "/debug/memory")[1])
    assert report["caches"]["race_seats"]["entries"] >= 3
    assert report["caches"]["games"]["entries"] >= 3
    assert report["sizes"]["sessions"] == 6
    # Growth since the baseline: six sessions and three races' games made objects, and
    # the allocation lines name where (some line of the server's own code among them).
    assert report["growth_by_type"] and report["growth_lines"]
    assert any(v > 0 for v in report["growth_by_type"].values())
    assert any("/server/" in d["where"] and d["growth_kb"] >= 0 for d in report["growth_lines"])
    for _code, seats, _ in races:
        await close_all(seats)


async def test_finished_games_leave_the_game_cache(server):
    """A game that is over takes no more moves: it is not kept in memory (an hour's soak
    filled the cache with ~800 of them), while a game still played is."""
    _code, seats, _ = await seat_race(server.ws_url, ["ann", "bob"], "quatorze", 7)
    for seat in seats:
        assert (await seat.play())["t"] == "state"

    def cached() -> float:
        return gauge(get(server, "/metrics")[1].decode(), "solitaire_cache_entries", "games")

    assert cached() == 2
    reply = await seats[0].client.request({"t": "resign", "gid": seats[0].gid})
    assert reply["t"] == "state" and reply["finished"], reply
    assert cached() == 1  # bob's game goes on
    # Asked for again, the finished game is read from the store, and still not kept.
    again = await seats[0].client.request({"t": "get", "gid": seats[0].gid})
    assert again["t"] == "state" and again["finished"] and again["n"] == 1, again
    assert cached() == 1
    await close_all(seats)
