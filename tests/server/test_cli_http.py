"""The command line and the HTTP side of the server."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request

from support.server_proc import server_command
from support.ws_client import Client


def test_help_explains_every_setting():
    out = subprocess.run([*server_command(), "--help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    for word in ("--host", "--port", "--redis-url", "REDIS_URL", "--data-dir", "--secret",
                 "--namespace", "--log-level", "--log-format", "--clock-offset-s", "--rate",
                 "--burst", "--hello-timeout-s", "SOLITAIRE_PORT", "/healthz"):  # fmt: skip
        assert word in out.stdout, word


def test_bad_setting_is_refused_with_a_message():
    out = subprocess.run([*server_command(), "--port", "99999"], capture_output=True, text=True,
                         timeout=30)  # fmt: skip
    assert out.returncode == 2 and "port" in out.stderr


def test_healthz_and_unknown_paths(server):
    with urllib.request.urlopen(server.http_url + "/healthz", timeout=5) as r:
        assert r.status == 200
    try:
        urllib.request.urlopen(server.http_url + "/nope", timeout=5)
        raise AssertionError("expected 404")
    except urllib.error.HTTPError as e:
        assert e.code == 404


async def test_json_logs_name_race_and_player(servers):
    server = servers.start(env={"SOLITAIRE_LOG_FORMAT": "json"})
    async with Client.connect(server.ws_url) as c:
        await c.hello("ann")
        code = (await c.request({"t": "create", "game": "hopscotch"}))["race"]
    lines = [json.loads(x) for x in server.log_text().splitlines() if x.startswith("{")]
    assert lines and all({"ts", "level", "logger", "msg"} <= set(x) for x in lines)
    assert any(code in x["msg"] and c.player in x["msg"] for x in lines)
