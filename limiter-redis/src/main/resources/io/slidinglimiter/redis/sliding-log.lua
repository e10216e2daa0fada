-- The exact sliding log over one Redis sorted set, mirroring io.slidinglimiter.core.SlidingLog.
-- Loaded as part of decide.lua; it defines functions only and touches no key by itself.
--
-- One member per admission, whatever its cost, scored by its time in epoch milliseconds and named
-- "<cost>:<id>", the id unique in the key. Three members with negative scores, below every time,
-- hold the state as -1 - value: "~t" the permits counted, "~s" the last id given, "~w" the window;
-- a fourth, "~c", the generation the log was made in (see now.lua).
-- A permit counts while its time is in (now - window, now]. A key of another type, or a log of
-- another window, is counted as empty and replaced when written.
--
-- Work per call grows with the admissions that leave the window or must be walked to find a wait,
-- never with a call's cost. Loading only reads: the entries that left the window are removed when
-- the key is written, so a peek changes nothing. persist writes ZADD first (see discard.lua).
local log = {}

local function cost_of(member)
  return tonumber(string.match(member, '^(%d+):'))
end

function log.load(key, window, now, generation)
  local c = { key = key, window = window, oldest = now - window }
  local state = redis.pcall('ZMSCORE', key, '~t', '~s', '~w', '~c')
  if state.err or tonumber(state[3]) ~= -1 - window then
    c.total, c.id, c.fresh, c.stamp = 0, 0, true, generation
    c.discard = state.err ~= nil or redis.call('EXISTS', key) == 1
    return c
  end
  c.total, c.id = -1 - tonumber(state[1]), -1 - tonumber(state[2])
  -- A log an earlier version made has no stamp: it holds whatever was admitted into it.
  c.stamp = state[4] and (-1 - tonumber(state[4])) or 0
  local expired = redis.call('ZRANGEBYSCORE', key, 0, int(c.oldest))
  for i = 1, #expired do
    c.total = c.total - cost_of(expired[i])
  end
  c.expired = #expired > 0
  return c
end

function log.used(c)
  return c.total
end

function log.add(c, now, cost)
  c.id = c.id + 1
  c.added = { now, int(cost) .. ':' .. int(c.id) }
  c.total, c.dirty, c.newest = c.total + cost, true, now
end

-- The time until the oldest admissions whose permits cover the excess have left the window.
function log.retry_after(c, now, cost, limit)
  local excess = c.total + cost - limit
  if excess <= 0 then
    return 0
  end
  local freed, offset = 0, 0
  while true do
    local entries = redis.call('ZRANGEBYSCORE', c.key, '(' .. int(c.oldest), '+inf', 'WITHSCORES', 'LIMIT', offset, 64)
    if #entries == 0 then
      return c.window
    end
    for i = 1, #entries, 2 do
      freed = freed + cost_of(entries[i])
      if freed >= excess then
        return tonumber(entries[i + 1]) + c.window - now
      end
    end
    offset = offset + #entries / 2
  end
end

function log.reset_after(c, now)
  if c.total <= 0 then
    return 0
  end
  local newest = c.newest
  if not newest then
    newest = tonumber(redis.call('ZRANGE', c.key, -1, -1, 'WITHSCORES')[2])
  end
  return newest + c.window - now
end

-- Gives back cost permits admitted at acquired_at: an admission of exactly that cost if there is
-- one, else as much as the admissions of that millisecond hold.
function log.refund(c, acquired_at, decided_in, cost)
  if c.fresh or acquired_at <= c.oldest or made_after(c.stamp, acquired_at, decided_in) then
    return
  end
  local members = redis.call('ZRANGEBYSCORE', c.key, int(acquired_at), int(acquired_at))
  table.sort(members, function(a, b)
    return (cost_of(a) == cost) and (cost_of(b) ~= cost)
  end)
  local left = cost
  for i = 1, #members do
    if left == 0 then
      break
    end
    local held = cost_of(members[i])
    local taken = math.min(held, left)
    c.removed = c.removed or {}
    c.removed[#c.removed + 1] = members[i]
    if taken < held then
      c.kept = c.kept or {}
      c.kept[#c.kept + 1] = acquired_at
      c.kept[#c.kept + 1] = int(held - taken) .. string.match(members[i], '^%d+(:.*)$')
    end
    left = left - taken
  end
  if left < cost then
    c.total, c.dirty = c.total - (cost - left), true
  end
end

function log.persist(c, ttl)
  if not c.dirty then
    return
  end
  if c.discard then
    discard(c.key)
  end
  local members = { int(-1 - c.total), '~t', int(-1 - c.id), '~s', int(-1 - c.window), '~w' }
  if c.fresh then
    members[#members + 1] = int(-1 - c.stamp)
    members[#members + 1] = '~c'
  end
  if c.added then
    members[#members + 1] = int(c.added[1])
    members[#members + 1] = c.added[2]
  end
  for i, value in ipairs(c.kept or {}) do
    members[#members + 1] = (i % 2 == 1) and int(value) or value
  end
  -- The ZADD first: removals free memory, and would let every later write past maxmemory.
  redis.call('ZADD', c.key, unpack(members))
  if c.removed then
    redis.call('ZREM', c.key, unpack(c.removed))
  end
  if c.expired then
    redis.call('ZREMRANGEBYSCORE', c.key, 0, int(c.oldest))
  end
  redis.call('PEXPIRE', c.key, ttl)
end
