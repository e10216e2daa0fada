-- The sliding window counter over one Redis hash, mirroring io.slidinglimiter.core.SlidingWindowCounter.
-- Loaded as part of decide.lua; it defines functions only and touches no key by itself.
--
-- The hash holds: "g" the geometry ("<slots>:<slotMillis>"), "s" the newest slot number
-- (epoch millis / slotMillis), "t" the rolling total, "c" the generation the counter was made in (which
-- tells a lease's give-back whether the counter it came from is still there: a reset or a new
-- geometry creates another), and one field per slot in use, named by its index in the ring
-- ("0" .. slots-1). A hash of another geometry, or a key of another type (a
-- sliding log), is counted as empty and replaced when written: old data is never read under a new
-- geometry.
--
-- Loading only reads. What moving the window changes (the slots that left it, a key replaced) is
-- written by persist, so a peek leaves the key byte for byte as it was. persist writes HSET first:
-- see discard.lua for why the first write must be one that Redis refuses under maxmemory.
local swc = {}

function swc.load(key, window, slots, now, generation)
  local slot_ms = window / slots
  local c = { key = key, n = slots, slot_ms = slot_ms, window = window, geometry = int(slots) .. ':' .. int(slot_ms) }
  local slot = math.floor(now / slot_ms)
  -- The newest slot's count comes with the header, so admitting is one HSET, not HINCRBY + HSET.
  local fields = redis.pcall('HMGET', key, 'g', 's', 't', slot % slots, 'c')
  if fields.err or fields[1] ~= c.geometry then
    c.cur, c.previous, c.total, c.count, c.fresh, c.stamp = slot, slot, 0, 0, true, generation
    c.discard = (fields.err or fields[1]) and true
    return c
  end
  c.cur, c.total = tonumber(fields[2]), tonumber(fields[3]) or 0
  c.previous, c.count, c.stamp = c.cur, tonumber(fields[4]) or 0, tonumber(fields[5]) or 0
  local steps = slot - c.cur
  if steps >= slots then
    c.cur, c.previous, c.total, c.count, c.fresh, c.discard, c.stamp = slot, slot, 0, 0, true, true, generation
  elseif steps > 0 then
    -- The slots being reused leave the window: their counts leave the total. The last is this
    -- decision's own slot, whose count came with the header; the others, if any, in one more read.
    local leaving = {}
    for s = c.cur + 1, slot do
      leaving[#leaving + 1] = s % slots
    end
    c.total = c.total - c.count
    if steps > 1 then
      local counts = redis.call('HMGET', key, unpack(leaving, 1, steps - 1))
      for i = 1, #counts do
        c.total = c.total - (tonumber(counts[i]) or 0)
      end
    end
    c.leaving, c.cur, c.count, c.dirty = leaving, slot, 0, true
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

-- Slot counts by ring index as this decision sees them: without the slots that left the window.
local function counts(c)
  local by_index = {}
  if not c.fresh then
    local flat = redis.call('HGETALL', c.key)
    for i = 1, #flat, 2 do
      by_index[flat[i]] = tonumber(flat[i + 1])
    end
    for _, index in ipairs(c.leaving or {}) do
      by_index[tostring(index)] = nil
    end
  end
  by_index[tostring(c.cur % c.n)] = c.count
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

-- Gives back what an admission at acquired_at, of generation decided_in (0: unknown), took, if its
-- slot is still in the window.
function swc.refund(c, acquired_at, decided_in, cost)
  local slot = math.floor(acquired_at / c.slot_ms)
  -- A counter made after the admission (it was reset, or it expired) does not hold its permits.
  if c.fresh or slot > c.cur or slot <= c.cur - c.n or made_after(c.stamp, acquired_at, decided_in) then
    return
  end
  local index, held = slot % c.n, 0
  if slot == c.cur then
    held = c.count
  elseif slot <= c.previous then
    -- Slots after the stored newest one held nothing (their fields are older slots').
    held = tonumber(redis.call('HGET', c.key, index)) or 0
  end
  local taken = math.min(held, cost)
  if taken > 0 then
    c.total, c.dirty = c.total - taken, true
    if slot == c.cur then
      c.count = c.count - taken
    else
      c.refunded = c.refunded or {}
      c.refunded[#c.refunded + 1] = index
      c.refunded[#c.refunded + 1] = held - taken
    end
  end
end

function swc.persist(c, ttl)
  if not c.dirty then
    return
  end
  if c.discard then
    discard(c.key)
  end
  local fields = { 'g', c.geometry, 's', int(c.cur), 't', int(c.total), c.cur % c.n, int(c.count) }
  if c.fresh then
    fields[#fields + 1] = 'c'
    fields[#fields + 1] = int(c.stamp)
  end
  for _, value in ipairs(c.refunded or {}) do
    fields[#fields + 1] = int(value)
  end
  redis.call('HSET', c.key, unpack(fields))
  local stale = {}
  for _, index in ipairs(c.leaving or {}) do
    if index ~= c.cur % c.n then
      stale[#stale + 1] = index
    end
  end
  if #stale > 0 then
    redis.call('HDEL', c.key, unpack(stale))
  end
  redis.call('PEXPIRE', c.key, ttl)
end
