-- What every path that writes a counter shares. First in the joined script (RedisScripts), before
-- the files that use it.

-- A number as Redis should store it: every digit. (Lua turns a number into text with 14
-- significant digits, so 10^15 + 1 would be stored as 1e+15.)
local function int(value)
  return string.format('%d', value)
end

-- Deletes a counter key of another type or shape, so that it can start afresh.
--
-- Why not DEL alone: under maxmemory with noeviction, Redis refuses a script's first write that may
-- grow memory, but once the script has written anything (a DEL, an HDEL) it lets every later write
-- through, past the bound. So every path that writes starts with a write Redis may refuse: here a
-- SET, which replaces a value of any type; then the DEL. A decision under OOM then fails whole, on
-- every path alike, and goes to the failure policy.
local function discard(key)
  redis.call('SET', key, '')
  redis.call('DEL', key)
end

-- Whether a counter stamped at its making (its generation: Redis microseconds, or milliseconds for
-- a counter an earlier version made) was made after a decision of generation decided_in, taken at
-- acquired_at: then it does not hold what that decision took. Without the decision's generation,
-- its time tells, which cannot tell a reset's millisecond apart.
local function made_after(stamp, acquired_at, decided_in)
  if decided_in > 0 and stamp > 1e14 then
    return decided_in < stamp
  end
  if stamp > 1e14 then
    stamp = math.floor(stamp / 1000)
  end
  return acquired_at < stamp
end
