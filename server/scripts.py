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

# KEYS: game meta, game moves, interest set [, race meta]
# ARGV: expected n (-1: any), move ('' for none), now ms, origin, channel prefix,
#       payload, fields: msgpack array [field, value, ...] of the record's new values
#       (one argument rather than dozens: redis-py packs every argument in Python)
# Returns {status, n}: 1 applied, 0 n mismatch, -1 no such game, -2 finished, -3 time up.
MOVE = (
    _RELAY
    + """
local n = redis.call('LLEN', KEYS[2])
if ARGV[1] ~= '-1' and n ~= tonumber(ARGV[1]) then return {0, n} end
local st = redis.call('HMGET', KEYS[1], 'finished', 'ends_at_ms', 'started_at_ms')
if not st[3] then return {-1, n} end
if st[1] == '1' then return {-2, n} end
local ends = tonumber(st[2]) or 0
if ends > 0 and tonumber(ARGV[3]) >= ends then return {-3, n} end
if ARGV[2] ~= '' then
  redis.call('RPUSH', KEYS[2], ARGV[2])
  n = n + 1
end
redis.call('HSET', KEYS[1], unpack(cmsgpack.unpack(ARGV[7])))
if KEYS[4] then redis.call('HINCRBY', KEYS[4], 'gver', 1) end
relay(KEYS[3], ARGV[4], ARGV[5], ARGV[6])
return {1, n}
"""
)

# KEYS: race meta, seats, interest, host's game meta
# ARGV: ttl s, seat entry, origin, channel prefix, payload, number of race fields k,
#       k race field/values..., game field/values...
# Returns 1 created, 0 the code is taken.
CREATE_RACE = (
    _RELAY
    + """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local k = tonumber(ARGV[6])
redis.call('HSET', KEYS[1], unpack(ARGV, 7, 6 + k))
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[4], unpack(ARGV, 7 + k))
redis.call('SADD', KEYS[3], ARGV[3])
for i = 1, 4 do redis.call('EXPIRE', KEYS[i], ARGV[1]) end
relay(KEYS[3], ARGV[3], ARGV[4], ARGV[5])
return 1
"""
)

# KEYS: race meta, seats, interest, new seat's game meta
# ARGV: expected ver, seat entry, ttl s, origin, channel prefix, payload, game field/values...
# Returns 1 joined, 0 the race changed meanwhile (retry), -1 no such race.
JOIN_RACE = (
    _RELAY
    + """
local st = redis.call('HMGET', KEYS[1], 'ver', 'status')
if not st[1] then return -1 end
if st[1] ~= ARGV[1] or st[2] ~= 'lobby' then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'ver', 1)
redis.call('HSET', KEYS[4], unpack(ARGV, 7))
redis.call('SADD', KEYS[3], ARGV[4])
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
