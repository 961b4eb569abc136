"""Every Lua script of the server, and what their replies mean.

The scripts decide nothing: the logic decided each write on a record at some version, and
a script applies the write only if the record is still at that version, then relays the
write's events to the other server instances listed in an interest set, all atomically.
Each call touches keys of one hash tag (one race, or one player), so it runs unchanged on
Redis Cluster. The leaderboard and stats scripts record a finished attempt idempotently.
"""

from __future__ import annotations

import enum


class Status(enum.IntEnum):
    """What a version-checked write found (MOVES and APPLY replies)."""

    APPLIED = 1
    STALE = 0  # the record is not at the version the write was decided on: read it again
    MISSING = -1  # no such record


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
# KEYS: for each write in turn: game meta, game moves, interest set (and the game's
#   snapshots, for a write that carries one)
# ARGV: origin, channel prefix, the writes, their payloads.
#   The writes: a msgpack array with, for each write, [expected version, move ('' for
#   none), payload length, fields: a map of the record's new values, its new version
#   among them, and optionally the snapshot of the position after the move (text)]. The
#   payloads (events to relay) follow one another in the last argument: cmsgpack cannot
#   carry binary strings, and one argument packs faster than one per write.
#   A snapshot is stored scored by the new length of the move list, replacing any scored
#   that high or higher (they were made for moves since taken back).
# Returns one Status per write.
# A batch is all or nothing only as far as Redis scripts are: an error half-way (a key of
# the wrong type) keeps the writes before it, which is safe (a write not acknowledged may
# still be stored, as after a crash) and happens only if someone tampered with the keys.
MOVES = (
    _RELAY
    + """
local function apply(meta, moves, interest, expect, move, payload, fields, snaps, snap)
  local st = redis.call('HMGET', meta, 'ver', 'gid')
  if not st[2] then return -1 end
  if tonumber(st[1] or '0') ~= expect then return 0 end
  if move ~= '' then
    local n = redis.call('RPUSH', moves, move)
    if snap then
      redis.call('ZREMRANGEBYSCORE', snaps, n, '+inf')
      redis.call('ZADD', snaps, n, snap)
    end
  end
  local flat = {}
  for field, value in pairs(fields) do
    flat[#flat + 1] = field
    flat[#flat + 1] = value
  end
  redis.call('HSET', meta, unpack(flat))
  relay(interest, ARGV[1], ARGV[2], payload)
  return 1
end

local out, k, at = {}, 0, 1
for _, w in ipairs(cmsgpack.unpack(ARGV[3])) do
  local expect, move, length, fields, snap = w[1], w[2], w[3], w[4], w[5]
  local payload = string.sub(ARGV[4], at, at + length - 1)
  at = at + length
  out[#out + 1] = apply(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], expect, move, payload, fields,
                        KEYS[k + 4], snap)
  if snap then k = k + 4 else k = k + 3 end
end
return out
"""
)

# Every other write of a race, a game or a player: a version-checked batch (server/store/
# writes.py's Batch).
# KEYS: the keys the batch names. ARGV: origin, channel prefix, payload, the batch: msgpack
#   [guards, commands, relay]. guards: [key index, expected version] each: -1 the key must
#   not exist; else the hash must exist with field `ver` (0 when absent) equal to it.
#   commands: [name, key index, args...] each, run in order. relay: the key index of the
#   interest set whose instances hear the payload (0: none).
# Returns {Status, the index of the guard that failed or 0}.
APPLY = (
    _RELAY
    + """
local COMMANDS = {HSET = true, RPUSH = true, RPOP = true, SADD = true, EXPIRE = true,
                  PERSIST = true, ZADD = true, ZREM = true, ZREMRANGEBYSCORE = true}
local batch = cmsgpack.unpack(ARGV[4])
for i, g in ipairs(batch[1]) do
  local key, want = KEYS[g[1]], g[2]
  if want < 0 then
    if redis.call('EXISTS', key) == 1 then return {0, i} end
  else
    local ver = redis.call('HGET', key, 'ver')
    if not ver and redis.call('EXISTS', key) == 0 then return {-1, i} end
    if tonumber(ver or '0') ~= want then return {0, i} end
  end
end
for _, c in ipairs(batch[2]) do
  if not COMMANDS[c[1]] then return redis.error_reply('APPLY: command ' .. c[1]) end
  redis.call(c[1], KEYS[c[2]], unpack(c, 3))
end
if batch[3] > 0 then relay(KEYS[batch[3]], ARGV[1], ARGV[2], ARGV[3]) end
return {1, 0}
"""
)

# One game read at one instant: its record, the length of its move list, its snapshots
# scored at most ARGV[1] (the highest ARGV[2] of them, highest first) and the entries
# ARGV[3]..ARGV[4] of its move list (negative: from the end).
# KEYS: game meta, game moves, game snapshots.
# Returns {meta as a flat list, length, snapshots as a flat list (text, score), moves}.
LOAD_GAME = """
local snaps = {}
if tonumber(ARGV[2]) > 0 then
  snaps = redis.call('ZREVRANGEBYSCORE', KEYS[3], ARGV[1], '-inf', 'WITHSCORES',
                     'LIMIT', 0, ARGV[2])
end
return {redis.call('HGETALL', KEYS[1]), redis.call('LLEN', KEYS[2]), snaps,
        redis.call('LRANGE', KEYS[2], ARGV[3], ARGV[4])}
"""

# KEYS: running index; ARGV: code, score it had when read.
# Drops the entry only if nobody re-scored it since.
UNINDEX = """
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) return 1 end
return 0
"""
