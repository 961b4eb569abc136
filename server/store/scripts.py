"""Lua scripts that make each check-and-write atomic in Redis.

Each script touches only keys of one hash tag (one race, or one player), so it
runs unchanged on Redis Cluster. After a successful write each one relays an
event payload to the other server instances listed in an interest set:
the write and the relay happen together or not at all.
"""

from __future__ import annotations

# Relay ARGV[pos_payload] to every instance in the set KEYS[k_interest] but the origin.
_RELAY = """
local function relay(interest, origin, prefix, payload)
  if payload == '' then return end
  for _, inst in ipairs(redis.call('SMEMBERS', interest)) do
    if inst ~= origin then redis.call('PUBLISH', prefix .. inst, payload) end
  end
end
"""

# The group commit's one call for a whole batch of game writes (moves and resignations):
# each write is checked and applied in turn, as if it were a script call of its own.
# KEYS: for each write in turn: game meta, game moves, interest set [, race meta]
# ARGV: origin, channel prefix, the writes, their payloads.
#   The writes: a msgpack array with, for each write, [number of keys (3, or 4 with a race
#   meta), expected n (-1: any), move ('' for none), now ms, payload length, fields: a map
#   of the record's new values]. The payloads (events to relay) follow one another in the
#   last argument: cmsgpack cannot carry binary strings, and one argument packs faster than
#   one per write.
# Returns {status, n, status, n, ...}, per write: 1 applied, 0 n mismatch, -1 no such game,
#   -2 finished, -3 time up; n is the stored move count after it.
# A batch is all or nothing only as far as Redis scripts are: an error half-way (a key of
# the wrong type) keeps the writes before it, which is safe (a write not acknowledged may
# still be stored, as after a crash) and happens only if someone tampered with the keys.
MOVES = (
    _RELAY
    + """
local function apply(meta, moves, interest, race, expect, move, now, payload, fields)
  local n = redis.call('LLEN', moves)
  if expect >= 0 and n ~= expect then return 0, n end
  local st = redis.call('HMGET', meta, 'finished', 'ends_at_ms', 'started_at_ms')
  if not st[3] then return -1, n end
  if st[1] == '1' then return -2, n end
  local ends = tonumber(st[2]) or 0
  if ends > 0 and now >= ends then return -3, n end
  if move ~= '' then
    redis.call('RPUSH', moves, move)
    n = n + 1
  end
  local flat = {}
  for field, value in pairs(fields) do
    flat[#flat + 1] = field
    flat[#flat + 1] = value
  end
  redis.call('HSET', meta, unpack(flat))
  if race then redis.call('HINCRBY', race, 'gver', 1) end
  relay(interest, ARGV[1], ARGV[2], payload)
  return 1, n
end

local out, k, at = {}, 0, 1
for _, w in ipairs(cmsgpack.unpack(ARGV[3])) do
  local nkeys, expect, move, now, length, fields = w[1], w[2], w[3], w[4], w[5], w[6]
  local race = nil
  if nkeys == 4 then race = KEYS[k + 4] end
  local payload = string.sub(ARGV[4], at, at + length - 1)
  at = at + length
  local status, n = apply(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], race,
                          expect, move, now, payload, fields)
  out[#out + 1] = status
  out[#out + 1] = n
  k = k + nkeys
end
return out
"""
)

# KEYS: race meta, seats, interest, host's game meta
# ARGV: ttl s, seat entry, origin, channel prefix, payload, number of race fields k,
#       number of other instances m, k race field/values..., the m other instances where
#       the host is connected (they hear the race too), game field/values...
# Returns 1 created, 0 the code is taken.
CREATE_RACE = (
    _RELAY
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local k, m = tonumber(ARGV[6]), tonumber(ARGV[7])
redis.call('HSET', KEYS[1], unpack(ARGV, 8, 7 + k))
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[4], unpack(ARGV, 8 + k + m))
redis.call('SADD', KEYS[3], ARGV[3], unpack(ARGV, 8 + k, 7 + k + m))
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[1]) end
relay(KEYS[3], ARGV[3], ARGV[4], ARGV[5])
return 1
"""
)

# KEYS: race meta, seats, interest, new seat's game meta
# ARGV: expected ver, seat entry, ttl s, origin, channel prefix, payload, number of other
#       instances m, the m other instances where the player is connected, game field/values...
# Returns 1 joined, 0 the race changed meanwhile (retry), -1 no such race.
JOIN_RACE = (
    _RELAY
    + """
local st = redis.call('HMGET', KEYS[1], 'ver', 'status')
if not st[1] then return -1 end
if st[1] ~= ARGV[1] or st[2] ~= 'lobby' then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
local m = tonumber(ARGV[7])
redis.call('HSET', KEYS[4], unpack(ARGV, 8 + m))
redis.call('SADD', KEYS[3], ARGV[4], unpack(ARGV, 8, 7 + m))
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[3]) end
relay(KEYS[3], ARGV[4], ARGV[5], ARGV[6])
return 1
"""
)

# KEYS: race meta, seats, interest, every seat's game meta (in seat order)
# ARGV: expected ver, starts_at ms, ends_at ms, origin, channel prefix, payload,
#       field/values every seat's game starts with (score, won, ...)
# Returns 1 started, 0 the race changed meanwhile (retry), -1 no such race.
START_RACE = (
    _RELAY
    + """
local st = redis.call('HMGET', KEYS[1], 'ver', 'status')
if not st[1] then return -1 end
if st[1] ~= ARGV[1] or st[2] ~= 'lobby' then return 0 end
if redis.call('LLEN', KEYS[2]) ~= #KEYS - 3 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'running', 'starts_at_ms', ARGV[2],
           'ends_at_ms', ARGV[3], 'gver', '0')
redis.call('HINCRBY', KEYS[1], 'ver', 1)
for i = 1, #KEYS do redis.call('PERSIST', KEYS[i]) end
for i = 4, #KEYS do
  redis.call('HSET', KEYS[i], 'started_at_ms', ARGV[2], 'ends_at_ms', ARGV[3], unpack(ARGV, 7))
end
relay(KEYS[3], ARGV[4], ARGV[5], ARGV[6])
return 1
"""
)

# KEYS: race meta, seats, interest, seat game metas..., seat move lists...
# ARGV: expected gver, end ms for unfinished seats, result blob, ttl s, origin,
#       channel prefix, payload
# Returns 1 closed by this call, 0 not running (someone else closed it), -1 changed (retry).
CLOSE_RACE = (
    _RELAY
    + """
local st = redis.call('HMGET', KEYS[1], 'status', 'gver')
if st[1] ~= 'running' then return 0 end
if (st[2] or '0') ~= ARGV[1] then return -1 end
redis.call('HSET', KEYS[1], 'status', 'done', 'result', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
local seats = (#KEYS - 3) / 2
for i = 4, 3 + seats do
  if redis.call('HGET', KEYS[i], 'finished') ~= '1' then
    redis.call('HSET', KEYS[i], 'finished', '1', 'finished_at_ms', ARGV[2], 'timed_out', '1')
  end
end
relay(KEYS[3], ARGV[5], ARGV[6], ARGV[7])
for i = 1, #KEYS do redis.call('EXPIRE', KEYS[i], ARGV[4]) end
return 1
"""
)

# KEYS: running index; ARGV: code, score it had when read.
# Drops the entry only if nobody re-scored it since.
UNINDEX = """
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) return 1 end
return 0
"""

# The same, only if the race has closed. KEYS: running index, race meta. ARGV: as UNINDEX.
# The index and the race hash to different cluster slots: on a single Redis only, where it
# follows CLOSE_RACE in one pipeline (a race that a retry must close again keeps its entry).
UNINDEX_CLOSED = (
    """
if redis.call('HGET', KEYS[2], 'status') ~= 'done' then return 0 end
"""
    + UNINDEX
)

# KEYS: running index; ARGV: code, deadline ms. On a single Redis, before START_RACE in one
# pipeline (on a cluster a plain ZADD does).
INDEX = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""
