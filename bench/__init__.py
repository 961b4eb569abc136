"""Benchmarks: scripts that print figures, each with a ratio against a baseline measured
in the same run. Run from the repository's root as modules, e.g.

    .venv/bin/python -m bench.server --players 200

The shared parts: bench/race_server.py starts the race server (the one way every bench
does), bench/figures.py holds the one percentile definition every bench prints, and
bench/lean_client.py is the bots' WebSocket client.
"""
