"""Races through two server instances on a local three-master Redis Cluster: one played
straight through, and one during which each instance is restarted in turn (SIGTERM, as in a
rolling upgrade). Nothing acknowledged may be lost, and every player must finish."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgpack
import pytest
import redis
from deploy_race import Player, RollingRestart, race_code, seat_and_start
from support.server_proc import ServerProcess
from websockets.exceptions import ConnectionClosed

import engine
from server.store.keys import Keys

GAME = "bakers_game"
PLAYERS = 4


@pytest.fixture
def namespace() -> str:
    return f"t{uuid.uuid4().hex[:10]}"


@pytest.fixture
def instances(redis_cluster, namespace: str, tmp_path: Path) -> Iterator[list[ServerProcess]]:
    """Two servers on the cluster, in this test's namespace."""
    servers = [
        ServerProcess(
            redis_cluster.url,
            namespace,
            tmp_path / f"instance{i}",
            env={"SOLITAIRE_REDIS_CLUSTER": "1"},
        )
        for i in range(2)
    ]
    try:
        for server in servers:
            server.start(timeout=60)
        yield servers
    finally:
        for server in servers:
            server.stop()


def make_players(servers: list[ServerProcess], seed: int) -> list[Player]:
    urls = [s.ws_url for s in servers]
    # Alternate the players over the instances, so that every race spans both.
    return [
        Player(f"player{i}", urls, first=i % len(urls), rng=random.Random(seed * 100 + i))
        for i in range(PLAYERS)
    ]


def stored(cluster_url: str, namespace: str, gids: list[str]) -> tuple[dict[str, list[str]], set]:
    """Each game's stored moves, and the cluster nodes that hold them."""
    client = redis.RedisCluster.from_url(cluster_url, decode_responses=True)
    try:
        keys = Keys(namespace)
        moves, nodes = {}, set()
        for gid in gids:
            game = keys.game(gid)
            assert game is not None
            moves[gid] = client.lrange(game.moves, 0, -1)
            nodes.add(client.get_node_from_key(game.moves).name)
        return moves, nodes
    finally:
        client.close()


def stored_result(cluster_url: str, namespace: str, code: str) -> dict:
    client = redis.RedisCluster.from_url(cluster_url, decode_responses=True)
    try:
        raw = client.hget(Keys(namespace).race_meta(code), "result")
    finally:
        client.close()
    assert raw, f"race {code} has no stored result"
    return json.loads(raw)


def check_nothing_lost(players, gids, moves_in_store) -> None:
    for p in players:
        gid = gids[p.name]
        acked = p.acked.get(gid, [])
        # Every acknowledged move is in the store, in order, and nothing else is.
        assert moves_in_store[gid] == acked, p.name


async def test_race_through_two_instances_on_a_redis_cluster(
    redis_cluster, instances: list[ServerProcess], namespace: str
) -> None:
    players = make_players(instances, seed=1)
    host, others = players[0], players[1:]
    try:
        code = await race_code(host, GAME, seed=4242)
        gids = await seat_and_start(host, others, code)
        hold = asyncio.Event()
        hold.set()
        await asyncio.gather(
            *(p.play(gids[p.name], moves=12, pause_s=0, hold=hold) for p in players)
        )
        results = [
            await p.wait_for(lambda m: m["t"] == "result" and m["race"] == code) for p in players
        ]
    finally:
        for p in players:
            await p.close()

    # Both instances served players of this race, and each heard of the other's moves.
    assert {p.connects[0] for p in players} == {s.ws_url for s in instances}
    for p in players:
        movers = {e["player"] for e in p.events if e["t"] == "progress" and e["race"] == code}
        assert movers == {q.player for q in players}, p.name
    # Everyone got the same result, with every seat ranked and the seed revealed.
    assert all(r == results[0] for r in results)
    standings = results[0]["standings"]
    assert {s["player"] for s in standings} == {p.player for p in players}
    assert results[0]["seed"] == 4242
    moves_in_store, nodes = stored(redis_cluster.url, namespace, list(gids.values()))
    check_nothing_lost(players, gids, moves_in_store)
    assert sum(len(m) for m in moves_in_store.values()) > 0
    # A race's keys share one slot, so one node holds all its games.
    assert len(nodes) == 1
    for p in players:
        mine = next(s for s in standings if s["player"] == p.player)
        assert mine["moves"] == len(p.acked.get(gids[p.name], []))


async def test_rolling_restart_of_both_instances_loses_no_acknowledged_move(
    redis_cluster, instances: list[ServerProcess], namespace: str
) -> None:
    players = make_players(instances, seed=2)
    host, others = players[0], players[1:]
    restart = RollingRestart(players, instances)
    try:
        code = await race_code(host, GAME, seed=777)
        gids = await seat_and_start(host, others, code)
        await asyncio.gather(
            restart.run(),
            *(
                p.play(
                    gids[p.name], moves=60, pause_s=0.05, hold=restart.hold, allowed=restart.allowed
                )
                for p in players
            ),
        )
        finals = [await p.request({"t": "get", "gid": gids[p.name]}) for p in players]
        results = [
            await p.wait_for(lambda m: m["t"] == "result" and m["race"] == code) for p in players
        ]
    finally:
        for p in players:
            await p.close()

    # Each instance drained and exited cleanly on SIGTERM, and clients were told to go away.
    assert restart.exit_codes == [0, 0]
    close_codes = [c for p in players for c in p.close_codes]
    assert close_codes.count(1001) >= 2, close_codes
    assert all(len(p.connects) >= 2 for p in players), [p.connects for p in players]
    # The race was under way through the restarts: moves were acknowledged before the first
    # SIGTERM, between the two, and after the second.
    assert restart.every_phase_had_a_move()
    # Every player finished, and the race closed with every seat ranked.
    assert all(f["t"] == "state" and f["finished"] for f in finals)
    # ...and each was told the result, which ranks every seat by what the store holds.
    assert all(r == results[0] for r in results)
    standings = {s["player"]: s for s in results[0]["standings"]}
    assert set(standings) == {p.player for p in players}
    for p in players:
        assert standings[p.player]["moves"] == len(p.acked.get(gids[p.name], []))
    result = stored_result(redis_cluster.url, namespace, code)
    assert {s["player"] for s in result["standings"]} == {p.player for p in players}
    # No acknowledged move was lost: the store holds exactly what the players saw acknowledged,
    # and the server's own count agrees.
    moves_in_store, _ = stored(redis_cluster.url, namespace, list(gids.values()))
    check_nothing_lost(players, gids, moves_in_store)
    for p, final in zip(players, finals, strict=True):
        assert final["n"] == len(p.acked.get(gids[p.name], []))
    assert sum(len(p.acked.get(gids[p.name], [])) for p in players) > 0


def planned_moves(view: dict, at_least: int) -> list[str]:
    """A run of legal moves from a Baker's Game view (no hidden cards: the client can plan)."""
    for attempt in range(100):
        game = engine.game_class(GAME).from_view(view)
        rng, moves = random.Random(attempt), []
        while len(moves) < 30 and (legal := sorted(game.legal_moves())):
            moves.append(rng.choice(legal))
            game.play(moves[-1])
        if len(moves) >= at_least:
            return moves
    raise AssertionError("no long enough run of moves")


async def test_sigterm_with_moves_in_flight_stores_every_acknowledged_one(
    redis_cluster, instances: list[ServerProcess], namespace: str
) -> None:
    """A burst of moves is on the wire when the instance gets SIGTERM: each one it answered is
    stored, what it stored is exactly a prefix of what was sent, and the other instance
    carries on from there."""
    first, second = instances
    host = Player("host", [first.ws_url])
    guest = Player("guest", [second.ws_url])
    try:
        code = await race_code(host, GAME, seed=2024)
        gids = await seat_and_start(host, [guest], code)
        gid = gids["host"]
        sent = planned_moves(host.states[gid]["view"], at_least=8)
        for n, m in enumerate(sent):
            await host.ws.send(
                msgpack.packb({"t": "move", "gid": gid, "n": n, "m": m, "id": 1000 + n})
            )
        first.proc.send_signal(signal.SIGTERM)
        acked, refused, close_code = [], [], None
        try:
            while True:
                msg = msgpack.unpackb(await asyncio.wait_for(host.ws.recv(), 30))
                if msg.get("re", 0) < 1000:
                    continue
                if msg["t"] == "state":
                    acked.append(msg["re"] - 1000)
                else:  # refused while draining, or out of order after a refused one
                    assert msg["t"] == "error", msg
                    assert msg["code"] in ("unavailable", "out_of_order"), msg
                    refused.append(msg["re"] - 1000)
        except ConnectionClosed as exc:
            close_code = exc.rcvd.code if exc.rcvd else None
        exit_code = await asyncio.to_thread(first.proc.wait, 30)
        first.proc = None
        kept = (await asyncio.to_thread(stored, redis_cluster.url, namespace, [gid]))[0][gid]
        # Back through the other instance: the game continues from what was stored.
        host.ws, host.urls = None, [second.ws_url]
        await host.connect()
        resumed_at = host.states[gid]["n"]
        # ...and the moves it did not store are played there, as a client resends them.
        for m in sent[resumed_at:]:
            await host.move(gid, m)
    finally:
        await host.close()
        await guest.close()

    assert exit_code == 0 and close_code == 1001
    assert acked == list(range(len(acked)))  # answered in order
    assert all(r >= len(acked) for r in refused)
    assert kept == sent[: len(kept)], "the store holds exactly a prefix of what was sent"
    assert len(kept) >= len(acked), "an acknowledged move was lost"
    assert resumed_at == len(kept)
    assert host.states[gid]["n"] == len(sent)
    moves_in_store, _ = stored(redis_cluster.url, namespace, [gid])
    assert moves_in_store[gid] == sent


async def test_daily_attempt_on_one_instance_ranks_on_the_other(
    instances: list[ServerProcess],
) -> None:
    """The daily challenge on the cluster: an attempt played through one instance appears on
    the leaderboard another instance serves, with the moves it made."""
    first, second = instances
    player = Player("daily", [first.ws_url], rng=random.Random(5))
    reader = Player("reader", [second.ws_url])
    try:
        state = await player.request({"t": "daily", "game": GAME, "confirm": True})
        assert state["t"] == "state" and state["kind"] == "daily", state
        gid = state["gid"]
        hold = asyncio.Event()
        hold.set()
        await player.play(gid, moves=5, pause_s=0, hold=hold)
        made = len(player.acked.get(gid, []))
        board = await reader.request({"t": "leaderboard", "game": GAME})
    finally:
        await player.close()
        await reader.close()
    assert board["t"] == "leaderboard", board
    mine = [e for e in board["entries"] if e["player"] == player.player]
    assert len(mine) == 1 and mine[0]["moves"] == made, board
