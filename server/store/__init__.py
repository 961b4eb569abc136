"""The store: everything the server keeps in Redis, and the only code that talks to Redis.

Keys (keys.py), Lua scripts (scripts.py), the repositories of players, games, races, the
daily challenge and presence (stores.py wires them; each its own module),
the group commit of moves (group_commit.py), the event bus between instances (bus.py),
leaderboards and stats (boards.py, stats_repo.py), clients (redis_client.py) and the embedded
valkey-server (embedded.py). Nothing here decides a rule of the game or of a race.
"""
