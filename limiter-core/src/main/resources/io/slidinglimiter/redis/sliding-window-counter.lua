-- The sliding window counter over one Redis hash, mirroring io.slidinglimiter.core.SlidingWindowCounter.
-- Loaded as part of decide.lua; it defines functions only and touches no key by itself.
--
-- The hash holds: "g" the geometry ("<slots>:<slotMillis>"), "s" the newest slot number
-- (epoch millis / slotMillis), "t" the rolling total, and one field per slot in use, named by its
-- index in the ring ("0" .. slots-1). A hash of another geometry, or a key of another type (a
-- sliding log), is deleted and started afresh: old data is never read under a new geometry.
local swc = {}

function swc.load(key, window, slots, now)
  local slot_ms = window / slots
  local c = { key = key, n = slots, slot_ms = slot_ms, window = window, geometry = slots .. ':' .. slot_ms }
  local slot = math.floor(now / slot_ms)
  -- The newest slot's count comes with the header, so admitting is one HSET, not HINCRBY + HSET.
  local fields = redis.pcall('HMGET', key, 'g', 's', 't', slot % slots)
  if fields.err or fields[1] ~= c.geometry then
    if fields.err or fields[1] then
      redis.call('DEL', key)
    end
    c.cur, c.total, c.count, c.dirty = slot, 0, 0, true
    return c
  end
  c.cur, c.total = tonumber(fields[2]), tonumber(fields[3]) or 0
  c.count = tonumber(fields[4]) or 0
  local steps = slot - c.cur
  if steps >= slots then
    redis.call('DEL', key)
    c.cur, c.total, c.count, c.dirty = slot, 0, 0, true
  elseif steps > 0 then
    for s = c.cur + 1, slot do
      local index = s % slots
      local count = tonumber(redis.call('HGET', key, index))
      if count then
        c.total = c.total - count
        redis.call('HDEL', key, index)
      end
    end
    c.cur, c.count, c.dirty = slot, 0, true
  elseif steps < 0 then
    -- Redis time stepped back: count in the newest slot, as the Java counter does.
    c.count = tonumber(redis.call('HGET', key, c.cur % slots)) or 0
  end
  return c
end

function swc.used(c)
  return c.total
end

function swc.add(c, now, cost)
  c.count, c.total, c.dirty, c.added = c.count + cost, c.total + cost, true, true
end

-- Slot counts from the oldest slot in the window to the newest.
local function counts(c)
  local flat = redis.call('HGETALL', c.key)
  local by_index = {}
  for i = 1, #flat, 2 do
    by_index[flat[i]] = tonumber(flat[i + 1])
  end
  return by_index
end

function swc.retry_after(c, now, cost, limit)
  local excess = c.total + cost - limit
  if excess <= 0 then
    return 0
  end
  local by_index, freed = counts(c), 0
  for s = c.cur - c.n + 1, c.cur do
    freed = freed + (by_index[tostring(s % c.n)] or 0)
    if freed >= excess then
      return (s + c.n) * c.slot_ms - now
    end
  end
  return c.window
end

function swc.reset_after(c, now)
  if c.total <= 0 then
    return 0
  end
  if c.added then
    return (c.cur + c.n) * c.slot_ms - now
  end
  local by_index = counts(c)
  for s = c.cur, c.cur - c.n + 1, -1 do
    if (by_index[tostring(s % c.n)] or 0) > 0 then
      return (s + c.n) * c.slot_ms - now
    end
  end
  return 0
end

-- Gives back what an admission at acquired_at took, if its slot is still in the window.
function swc.refund(c, acquired_at, cost)
  local slot = math.floor(acquired_at / c.slot_ms)
  if slot > c.cur or slot <= c.cur - c.n then
    return
  end
  local index = slot % c.n
  local held = tonumber(redis.call('HGET', c.key, index)) or 0
  local taken = math.min(held, cost)
  if taken > 0 then
    redis.call('HINCRBY', c.key, index, -taken)
    c.total, c.dirty = c.total - taken, true
    if index == c.cur % c.n then
      c.count = c.count - taken
    end
  end
end

function swc.persist(c, ttl)
  if c.dirty then
    redis.call('HSET', c.key, 'g', c.geometry, 's', c.cur, 't', c.total, c.cur % c.n, c.count)
    redis.call('PEXPIRE', c.key, ttl)
  end
end
