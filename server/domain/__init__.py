"""The server's domain: what a game, a race and their ends are, as types.

Records, statuses, game kinds, outcomes, game ids and the changes the logic decides to
store. Nothing here imports the store or the logic: the store maps these types to Redis
(server/store/), the logic decides on them (server/play/, server/daily/).
"""
