-- The time and the generation of the decision, read first for every operation of the joined script (RedisScripts):
-- ARGV[2] when a test replays a schedule, else Redis TIME, so that instances with skewed clocks
-- agree. Production always sends "".
local time = batch_time or redis.call('TIME')
if time ~= clock then
  -- Read once a batch: its decisions share one TIME reply (batch.lua).
  clock, clock_micros = time, tonumber(time[1]) * 1000000 + tonumber(time[2])
end
-- Exact: the microseconds are an integer below 2^53, and a thousandth's fraction is never within
-- a double's rounding of the next integer.
local now = tonumber(ARGV[2]) or math.floor(clock_micros / 1000)
-- The decision's generation: Redis's microseconds, read from its clock even when a test fixes the
-- time. A counter made by a decision is stamped with that decision's generation, so a refund or a
-- settle of a decision made before the counter was (before a reset, even in the same millisecond)
-- gives nothing back: a reset always runs in a script call of its own, never in a decision's. The
-- decisions of a batch read the clock once (batch.lua) and the i-th adds i - 1 microseconds: each
-- takes longer than one to run, so every later call still reads a later clock.
local generation = clock_micros + batch_offset
-- A decision that Redis runs after its caller stopped waiting (ARGV[3], Redis time; a stalled server
-- that wakes, commands queued during a disconnection and sent after it) changes nothing: its caller
-- was answered by the failure policy, and counting it now would reject later calls for nothing.
if (ARGV[1] == 'acquire' or ARGV[1] == 'lease') and ARGV[3] ~= '' and now > tonumber(ARGV[3]) then
  return { -1, now }
end
