-- The exact sliding log over one Redis sorted set, mirroring io.slidinglimiter.core.SlidingLog.
-- Loaded as part of decide.lua; it defines functions only and touches no key by itself.
--
-- One member per admitted permit, scored by its admission time in epoch milliseconds and named
-- "<time>:<sequence>". A permit counts while its time is in (now - window, now]. A key of another
-- type (a sliding window counter's hash) is deleted and started afresh.
local log = {}

function log.load(key, window, now)
  local c = { key = key, window = window }
  local trimmed = redis.pcall('ZREMRANGEBYSCORE', key, '-inf', now - window)
  if type(trimmed) == 'table' and trimmed.err then
    redis.call('DEL', key)
  end
  c.total = redis.call('ZCARD', key)
  return c
end

function log.used(c)
  return c.total
end

function log.add(c, now, cost)
  local members = {}
  for i = 1, cost do
    members[#members + 1] = now
    members[#members + 1] = now .. ':' .. (c.total + i)
    if #members >= 2000 then
      redis.call('ZADD', c.key, unpack(members))
      members = {}
    end
  end
  if #members > 0 then
    redis.call('ZADD', c.key, unpack(members))
  end
  c.total, c.dirty, c.newest = c.total + cost, true, now
end

function log.retry_after(c, now, cost, limit)
  local excess = c.total + cost - limit
  if excess <= 0 then
    return 0
  end
  local entry = redis.call('ZRANGE', c.key, excess - 1, excess - 1, 'WITHSCORES')
  return tonumber(entry[2]) + c.window - now
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

function log.refund(c, acquired_at, cost)
  local members = redis.call('ZRANGEBYSCORE', c.key, acquired_at, acquired_at, 'LIMIT', 0, cost)
  if #members > 0 then
    redis.call('ZREM', c.key, unpack(members))
    c.total, c.dirty = c.total - #members, true
  end
end

function log.persist(c, ttl)
  if c.dirty then
    redis.call('PEXPIRE', c.key, ttl)
  end
end
