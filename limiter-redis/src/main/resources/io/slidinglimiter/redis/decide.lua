-- Decides, all or nothing, one call's limits. RedisScripts joins write.lua, sliding-window-counter.lua and
-- sliding-log.lua, then, as the body of decide(KEYS, ARGV), now.lua, fast-path.lua (which answers the
-- common case before this runs) and this file, then batch.lua, which calls decide once or once per
-- decision of a batch: so a call, or a batch of them, is one EVALSHA. KEYS and ARGV are decide's
-- parameters: the script's own, or one decision's slice of a batch's.
--
-- KEYS[i]      the counter of limit i: "<prefix>:{<key>}:<limit name>". All keys of one call
--              share a hash slot on Redis Cluster.
-- ARGV[1]      "acquire", "peek", "reset", "refund", "settle", "lease" or "give-back"
-- ARGV[2]      the time in epoch milliseconds, or "" to read Redis TIME. Production always sends
--              "": instances with skewed clocks agree. Tests send a time to replay scenarios.
-- ARGV[3]      for "refund", "settle" and "give-back", the time the admission being undone, settled or
--              given back was decided at; for "acquire" and "lease", the Redis time after which the
--              caller no longer waits, or "" (now.lua)
-- ARGV[4..]    five per limit i, from 4 + 5 * (i - 1): algorithm (0 sliding window counter,
--              1 sliding log), window millis, sub-windows, permits per window, cost; for "settle", the
--              cost is the charge minus what was taken: below zero given back to the sub-window the
--              permits came from, above zero counted now, whether or not it fits
-- ARGV[4 + 5n] for "refund" and "settle" of n limits, the generation of the decision (now.lua)
--
-- "lease" (one sliding-window-counter limit) takes the call's cost and up to ARGV[9] - cost permits more
-- (the permits the instance expects to admit before the sub-window ends), counted at once in the
-- current sub-window: at most half of what is left after the call, so the window's last permits go
-- one by one. It returns the acquire's reply for the call, then the permits taken in all, the Redis time
-- the sub-window ends at (the lease ends by then: its permits are counted in this sub-window) and
-- the counter's creation time. "give-back" returns ARGV[4 + 4] (the cost) unused permits of a lease taken
-- at ARGV[3] to its sub-window, only while the counter created at ARGV[9] is still there (not reset,
-- not replaced by another geometry).
--
-- Returns { all allowed (1 or 0; -1 when run after the caller's deadline, with nothing changed), the
-- time decided at, then four per limit: allowed (1 or 0),
-- remaining, retry-after millis, reset-after millis; for "peek", then the count of each limit (which
-- charges may carry past the limit), for "acquire", then the decision's generation (now.lua) }. A rejected call consumes nothing; a limit
-- that would have admitted it alone says allowed 1. Waits never exceed the window.
local operation = ARGV[1]
-- now: the decision's time, read by now.lua.

if operation == 'reset' then
  redis.call('DEL', unpack(KEYS))
  return { 1, now }
end

local algorithms = { [0] = swc, [1] = log }
local counters, specs = {}, {}
for i = 1, #KEYS do
  local base = 4 + 5 * (i - 1)
  local spec = {
    algorithm = algorithms[tonumber(ARGV[base])], window = tonumber(ARGV[base + 1]),
    slots = tonumber(ARGV[base + 2]), limit = tonumber(ARGV[base + 3]), cost = tonumber(ARGV[base + 4])
  }
  specs[i] = spec
  if spec.algorithm == swc then
    counters[i] = swc.load(KEYS[i], spec.window, spec.slots, now, generation)
  else
    counters[i] = log.load(KEYS[i], spec.window, now, generation)
  end
end

-- A key outlives its newest permit by a little: nothing is left behind, nothing is lost.
local function ttl(spec)
  return spec.window + 1000
end

-- For "refund" and "settle": the generation of the decision undone (its reply's last value), or
-- 0 when unknown; a counter made after it (reset, or expired and made anew) gives nothing back.
local decided_in = tonumber(ARGV[4 + 5 * #KEYS]) or 0

if operation == 'refund' then
  local acquired_at = tonumber(ARGV[3])
  for i = 1, #KEYS do
    specs[i].algorithm.refund(counters[i], acquired_at, decided_in, specs[i].cost)
    specs[i].algorithm.persist(counters[i], ttl(specs[i]))
  end
  return { 1, now }
end

if operation == 'settle' then
  local acquired_at = tonumber(ARGV[3])
  for i = 1, #KEYS do
    local spec, difference = specs[i], specs[i].cost
    if difference < 0 then
      spec.algorithm.refund(counters[i], acquired_at, decided_in, -difference)
    elseif difference > 0 then
      spec.algorithm.add(counters[i], now, difference)
    end
    spec.algorithm.persist(counters[i], ttl(spec))
  end
  return { 1, now }
end

if operation == 'give-back' then
  local spec, c = specs[1], counters[1]
  if spec.algorithm == swc and not c.fresh and c.stamp == tonumber(ARGV[9]) then
    swc.refund(c, tonumber(ARGV[3]), 0, spec.cost)
    swc.persist(c, ttl(spec))
  end
  return { 1, now }
end

if operation == 'lease' then
  local spec, c = specs[1], counters[1]
  local wait = spec.algorithm.retry_after(c, now, spec.cost, spec.limit)
  local taken, slot_end, stamp = 0, now, 0
  if wait == 0 then
    taken = spec.cost
    -- Only in the newest sub-window, by Redis time (not after Redis time stepped back).
    if spec.algorithm == swc and c.cur == math.floor(now / c.slot_ms) then
      local more = math.min(tonumber(ARGV[9]) - spec.cost, math.floor((spec.limit - c.total - spec.cost) / 2))
      taken = taken + math.max(0, more)
      slot_end, stamp = (c.cur + 1) * c.slot_ms, c.stamp
    end
    spec.algorithm.add(c, now, taken)
  end
  spec.algorithm.persist(c, ttl(spec))
  local allowed = (wait == 0) and 1 or 0
  return { allowed, now, allowed, math.max(0, spec.limit - spec.algorithm.used(c)), math.min(wait, spec.window),
    math.min(spec.algorithm.reset_after(c, now), spec.window), taken, slot_end, stamp }
end

local all_fit = true
local waits = {}
for i = 1, #KEYS do
  local spec = specs[i]
  waits[i] = spec.algorithm.retry_after(counters[i], now, spec.cost, spec.limit)
  all_fit = all_fit and waits[i] == 0
end

local result = { 0, now }
if all_fit then
  result[1] = 1
end
for i = 1, #KEYS do
  local spec, counter = specs[i], counters[i]
  if all_fit and operation == 'acquire' then
    spec.algorithm.add(counter, now, spec.cost)
  end
  if operation == 'acquire' then
    spec.algorithm.persist(counter, ttl(spec))
  end
  local remaining = math.max(0, spec.limit - spec.algorithm.used(counter))
  local allowed = 0
  if waits[i] == 0 then
    allowed = 1
  end
  result[#result + 1] = allowed
  result[#result + 1] = remaining
  result[#result + 1] = math.min(waits[i], spec.window)
  result[#result + 1] = math.min(spec.algorithm.reset_after(counter, now), spec.window)
end
if operation == 'peek' then
  for i = 1, #KEYS do
    result[#result + 1] = specs[i].algorithm.used(counters[i])
  end
else
  result[#result + 1] = generation
end
return result
