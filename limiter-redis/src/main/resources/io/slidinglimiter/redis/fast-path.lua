-- The common decision, straight through: one sliding-window-counter limit, acquired. No function
-- or table is built beyond the reply, and the fewest commands run: HMGET, then the writes.
-- Runs right after now.lua in the joined script (RedisScripts). Anything else (a clock that stepped back, a
-- rejection that needs the older slots, several limits, the sliding log, a peek, a refund or a
-- reset) falls through to decide.lua, which reads the key afresh and has written nothing by then.
-- Its answers are those decide.lua gives for the same state, and it leaves the same hash behind.
if #KEYS == 1 and ARGV[1] == 'acquire' and ARGV[4] == '0' then
  local key = KEYS[1]
  if ARGV ~= limit_args then
    -- Read once for a batch's run of decisions of one limit: they share one table of arguments
    -- (batch.lua), and decide never changes it. Redis gets every number as text: Redis 6 writes a
    -- Lua number out with printf's %.17g, slower than the script's int. The table is noted last:
    -- arguments that fail here (not numbers) fail every decision that shares them.
    limit_window, limit_slots, limit_permits, limit_cost = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
    limit_slot_ms = limit_window / limit_slots
    limit_geometry = int(limit_slots) .. ':' .. int(limit_slot_ms)
    limit_ttl, limit_slot = nil, nil
    limit_args = ARGV
  end
  local window, slots, limit, cost, slot_ms = limit_window, limit_slots, limit_permits, limit_cost, limit_slot_ms
  local geometry = limit_geometry
  local slot = math.floor(now / slot_ms)
  if slot ~= limit_slot then
    -- The ring's field, as text once a sub-window of the limit.
    limit_slot, limit_field = slot, int(slot % slots)
  end
  local expiry = math.min((slot + slots) * slot_ms - now, window)
  local fields = redis.pcall('HMGET', key, 'g', 's', 't', limit_field)
  local newest = not fields.err and fields[1] == geometry and tonumber(fields[2])
  if newest == slot then
    -- Still the newest slot: the key's TTL was set when it began, and permits added now expire with it.
    local total, count = tonumber(fields[3]) or 0, tonumber(fields[4]) or 0
    if total + cost <= limit then
      total = total + cost
      redis.call('HSET', key, 't', int(total), limit_field, int(count + cost))
      return { 1, now, 1, limit - total, 0, expiry, generation }
    end
    if total == count then
      -- Every permit counted is in the newest slot: it is the one that frees them.
      return { 0, now, 0, math.max(0, limit - total), expiry, expiry, generation }
    end
  elseif not newest or slot - newest >= slots then
    -- No counter, another geometry or type, or nothing left in the window: start afresh.
    if fields.err or fields[1] then
      discard(key)
    end
    redis.call('HSET', key, 'g', geometry, 's', int(slot), 't', int(cost), limit_field, int(cost), 'c', int(generation))
    limit_ttl = limit_ttl or int(window + 1000)
    redis.call('PEXPIRE', key, limit_ttl)
    return { 1, now, 1, limit - cost, 0, expiry, generation }
  elseif slot > newest then
    -- Later slots: the ones being reused leave the window. The last of them is this call's own slot,
    -- whose old count came with the header; the others (none when the key's last call was in the
    -- sub-window before) in one more read and one delete.
    local total = (tonumber(fields[3]) or 0) - (tonumber(fields[4]) or 0)
    local older
    if slot - newest > 1 then
      older = {}
      for s = newest + 1, slot - 1 do
        older[#older + 1] = int(s % slots)
      end
      local counts = redis.call('HMGET', key, unpack(older))
      for i = 1, #counts do
        total = total - (tonumber(counts[i]) or 0)
      end
    end
    if total + cost <= limit then
      -- HSET first (see write.lua); it overwrites this call's slot.
      redis.call('HSET', key, 's', int(slot), 't', int(total + cost), limit_field, int(cost))
      if older then
        redis.call('HDEL', key, unpack(older))
      end
      limit_ttl = limit_ttl or int(window + 1000)
      redis.call('PEXPIRE', key, limit_ttl)
      return { 1, now, 1, limit - total - cost, 0, expiry, generation }
    end
  end
end
