"""Every Lua script of the server, and what their replies mean.

The scripts decide nothing: the logic decided each write on a record at some version, and
a script applies the write only if the record is still at that version, then relays the
write's events to the other server instances listed in an interest set, all atomically.
Each call touches keys of one hash tag (one race, or one player), so it runs unchanged on
Redis Cluster. The leaderboard and stats scripts record a finished attempt idempotently.
The players' scripts are the two things that must hold across instances at once: a name
reserved for one player only, and each client address's allowance of new players.
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
# KEYS: for each write in turn: game meta, game moves, interest set, the moves' times (and
#   the game's snapshots, for a write that carries one), then its peer games' metas (if any)
# ARGV: origin, channel prefix, the writes, their payloads.
#   The writes: a msgpack array with, for each write, [expected version, move ('' for
#   none), payload length, fields: a map of the record's new values, its new version
#   among them, the move's time (ms, kept entry for entry with the move), and optionally
#   the snapshot of the position after the move (text, '' for none), and optionally the
#   number of peer games whose metas follow the write's own keys]. The
#   payloads (events to relay) follow one another in the last argument: cmsgpack cannot
#   carry binary strings, and one argument packs faster than one per write.
#   A snapshot is stored scored by the new length of the move list, replacing any scored
#   that high or higher (they were made for moves since taken back).
# Returns one Written (server/domain/changes.py) per write: APPLIED_LAST for an applied write
#   whose peer games (the other seats' games of its race, named by a write that ends its
#   own) have all ended too. Checked here, in the write's own atomic step, so that of
#   seats ending together on different instances exactly one learns it was the last.
# A batch is all or nothing only as far as Redis scripts are: an error half-way (a key of
# the wrong type) keeps the writes before it, which is safe (a write not acknowledged may
# still be stored, as after a crash) and happens only if someone tampered with the keys.
MOVES = (
    _RELAY
    + """
local function apply(meta, moves, interest, times, expect, move, payload, fields, at, snaps,
                     snap)
  local st = redis.call('HMGET', meta, 'ver', 'gid')
  if not st[2] then return -1 end
  if tonumber(st[1] or '0') ~= expect then return 0 end
  if move ~= '' then
    local n = redis.call('RPUSH', moves, move)
    -- Pushed first, checked after: one command for nearly every move (the times list as
    -- long as the moves), the fix-ups only for games stored before times were kept.
    local t = redis.call('RPUSH', times, at)
    if t ~= n then
      t = redis.call('RPOP', times) and t - 1
      while t < n - 1 do  -- moves stored before their times were kept: time 0
        local pad = {}
        for _ = 1, math.min(n - 1 - t, 1000) do pad[#pad + 1] = '0' end
        t = redis.call('RPUSH', times, unpack(pad))
      end
      if t < n then redis.call('RPUSH', times, at) end
    end
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

local function all_ended(first, count)
  for i = first, first + count - 1 do
    if redis.call('HGET', KEYS[i], 'finished') ~= '1' then return false end
  end
  return true
end

local out, k, at = {}, 0, 1
for _, w in ipairs(cmsgpack.unpack(ARGV[3])) do
  local expect, move, length, fields, time, snap, peers =
    w[1], w[2], w[3], w[4], w[5], w[6], w[7]
  if snap == '' then snap = nil end
  local payload = string.sub(ARGV[4], at, at + length - 1)
  at = at + length
  local status = apply(KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], expect, move,
                       payload, fields, time, KEYS[k + 5], snap)
  if snap then k = k + 5 else k = k + 4 end
  if peers then
    if status == 1 and all_ended(k + 1, peers) then status = 2 end
    k = k + peers
  end
  out[#out + 1] = status
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
# Returns {Written, the index of the guard that failed or 0}.
APPLY = (
    _RELAY
    + """
local COMMANDS = {HSET = true, RPUSH = true, RPOP = true, LREM = true, SADD = true,
                  DEL = true, EXPIRE = true, PERSIST = true, ZADD = true, ZREM = true,
                  ZREMRANGEBYSCORE = true, LTRIM = true}
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

# ---------------------------------------------------------------- leaderboards and stats
# (server/store/boards.py, server/store/stats_repo.py)

# Records a day's result once: a second result of the same player for the same day changes
# nothing (returns 0), so callers may retry freely. Returns the finishing sequence number.
# KEYS: board zset, rows hash, layout. ARGV: player, packed, row JSON, layout (set by the
# first result of a board: a board begun by this version needs no upgrade).
RECORD_DAY = """
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
local seq = redis.call('HLEN', KEYS[2]) + 1
if seq == 1 then redis.call('SET', KEYS[3], ARGV[4]) end
local prefix = string.format('%010d', seq)
redis.call('HSET', KEYS[2], ARGV[1], prefix .. ARGV[3])
redis.call('ZADD', KEYS[1], ARGV[2], prefix .. ':' .. ARGV[1])
return seq
"""

# One window of a board and the asker's own row, in one round trip and one consistent snapshot.
# KEYS: board zset, rows hash (player -> SEQ + JSON). ARGV: limit, asker ('' for none),
# around_me ('1'/'0'). Returns {total, start, first_rank, me_rank, me_row, members_scores, rows}.
BOARD_WINDOW = """
local total = redis.call('ZCARD', KEYS[1])
local limit = tonumber(ARGV[1])
local me_idx, me_rank, me_row = -1, 0, ''
if ARGV[2] ~= '' then
  local v = redis.call('HGET', KEYS[2], ARGV[2])
  if v then
    local member = string.sub(v, 1, 10) .. ':' .. ARGV[2]
    local r = redis.call('ZRANK', KEYS[1], member)
    if r then
      me_idx = r
      local sc = redis.call('ZSCORE', KEYS[1], member)
      me_rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. sc) + 1
      me_row = v
    end
  end
end
local start = 0
if ARGV[3] == '1' and me_idx >= 0 then
  start = me_idx - math.floor((limit - 1) / 2)
  if start + limit > total then start = total - limit end
  if start < 0 then start = 0 end
end
local ms = redis.call('ZRANGE', KEYS[1], start, start + limit - 1, 'WITHSCORES')
local first_rank = 1
if #ms > 0 and start > 0 then
  first_rank = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ms[2]) + 1
end
local rows = {}
for i = 1, #ms, 2 do
  rows[#rows + 1] = redis.call('HGET', KEYS[2], string.sub(ms[i], 12)) or ''
end
return {total, start, first_rank, me_rank, me_row, ms, rows}
"""

# KEYS: all-time board, all-time rows hash, played days, won days, seq counter
# ARGV: player, day number, won ('1'/'0'), score, moves, time_ms, name
# Returns 1 when the result was counted, 0 when that day was already counted for the player.
RECORD_STATS = """
local player, day, won = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
if redis.call('ZADD', KEYS[3], 'NX', day, ARGV[2]) == 0 then return 0 end
if won then redis.call('ZADD', KEYS[4], 'NX', day, ARGV[2]) end
local old = redis.call('HGET', KEYS[2], player)
local s
if old then
  s = cjson.decode(string.sub(old, 11))
else
  s = {played = 0, won = 0, score = 0, moves = 0, time_ms = 0,
       streak = 0, streak_end = -1, best_streak = 0,
       win_streak = 0, win_streak_end = -1, best_win_streak = 0}
end
s.name = ARGV[7]
s.played = s.played + 1
if won then s.won = s.won + 1 end
s.score = s.score + tonumber(ARGV[4])
s.moves = s.moves + tonumber(ARGV[5])
s.time_ms = s.time_ms + tonumber(ARGV[6])
-- The run of consecutive days in `key` that contains day d: its length and last day.
local function run(key, d)
  local lo, hi = d, d
  while redis.call('ZSCORE', key, string.format('%d', lo - 1)) do lo = lo - 1 end
  while redis.call('ZSCORE', key, string.format('%d', hi + 1)) do hi = hi + 1 end
  return hi - lo + 1, hi
end
local function latest(key)
  return tonumber(redis.call('ZRANGE', key, -1, -1)[1])
end
local len, hi = run(KEYS[3], day)
if len > s.best_streak then s.best_streak = len end
if hi == latest(KEYS[3]) then s.streak, s.streak_end = len, hi end
if won then
  len, hi = run(KEYS[4], day)
  if len > s.best_win_streak then s.best_win_streak = len end
  if hi == latest(KEYS[4]) then s.win_streak, s.win_streak_end = len, hi end
end
if old then redis.call('ZREM', KEYS[1], string.sub(old, 1, 10) .. ':' .. player) end
local seq = string.format('%010d', redis.call('INCR', KEYS[5]))
local w = math.min(s.won, tonumber(ARGV[8]))
local sc = math.min(s.score, tonumber(ARGV[9]))
local packed = (tonumber(ARGV[8]) - w) * tonumber(ARGV[10]) + (tonumber(ARGV[9]) - sc)
redis.call('ZADD', KEYS[1], string.format('%.0f', packed), seq .. ':' .. player)
redis.call('HSET', KEYS[2], player, seq .. cjson.encode(s))
return 1
"""

# ---------------------------------------------------------------- players

# A player's name (server/play/names.py). KEYS: the name's key (its holder's id), the set of
# the others who kept that name from before names were reserved. ARGV: the holder it may
# have now ('' for none), the player to hold it from now on ('' to release it, ARGV[1]
# giving it up; it passes to one of the others, if any), the milliseconds the claim lasts
# ('0': for good; a player who has not played yet expires, PlayerRepo.create_player).
# A claim succeeds if the name is held by ARGV[1], by nobody, or already by ARGV[2]; returns
# '' when done, else the player who holds it.
SWAP_NAME = """
local holder = redis.call('GET', KEYS[1])
if ARGV[2] == '' then
  redis.call('SREM', KEYS[2], ARGV[1])
  if holder ~= ARGV[1] then return '' end
  local heir = redis.call('SPOP', KEYS[2])
  if heir then redis.call('SET', KEYS[1], heir) else redis.call('DEL', KEYS[1]) end
  return ''
end
if holder and holder ~= ARGV[1] and holder ~= ARGV[2] then return holder end
if ARGV[3] == '0' then
  redis.call('SET', KEYS[1], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
redis.call('SREM', KEYS[2], ARGV[2])
return ''
"""

# One client address's allowance of new players (server/edge/admission.py), shared by every
# instance. KEYS: the address's hash {tokens, at_ms, day, made}. ARGV: now_ms, the hourly
# allowance (a token bucket of that size refilled at that rate; '0': none), the daily one
# ('0': none), today's UTC date, '1' to take one player or '-1' to give one back (a hello
# refused after all), the hash's time to live in ms. Returns '' when taken (or given back),
# else the limit that refuses: 'hour' or 'day'; a refusal takes nothing.
NEW_PLAYER = """
local now, per_hour, per_day = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local v = redis.call('HMGET', KEYS[1], 'tokens', 'at_ms', 'day', 'made')
local tokens = per_hour
if v[1] and v[2] then
  local refill = math.max(0, now - tonumber(v[2])) * per_hour / 3600000
  tokens = math.min(per_hour, tonumber(v[1]) + refill)
end
local made = 0
if v[3] == ARGV[4] and v[4] then made = tonumber(v[4]) end
if ARGV[5] == '1' then
  if per_hour > 0 and tokens < 1 then return 'hour' end
  if per_day > 0 and made >= per_day then return 'day' end
  tokens, made = tokens - 1, made + 1
else
  tokens, made = math.min(per_hour, tokens + 1), math.max(0, made - 1)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'at_ms', ARGV[1],
           'day', ARGV[4], 'made', made)
redis.call('PEXPIRE', KEYS[1], ARGV[6])
return ''
"""

# ---------------------------------------------------------------- quick races

# Put a player in the queue (server/store/queue_repo.py). KEYS: the entries hash. ARGV: player,
# their entry, its game. A player already waiting for that game keeps their entry (a
# request sent again); waiting for another game, the new entry replaces it. Returns the
# entry now stored.
QUEUE_PUT = """
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local game = string.match(old, '^[^\t]*')
  if game == ARGV[3] then return old end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return ARGV[2]
"""

# The matcher takes the players of a race it formed out of the queue, all or none: each
# must still be waiting with the very entry it matched on (not gone, not queued again).
# KEYS: the entries hash. ARGV: player, entry, player, entry, ... Returns 1 if taken, else 0.
QUEUE_TAKE = """
for i = 1, #ARGV, 2 do
  if redis.call('HGET', KEYS[1], ARGV[i]) ~= ARGV[i + 1] then return 0 end
end
for i = 1, #ARGV, 2 do redis.call('HDEL', KEYS[1], ARGV[i]) end
return 1
"""
