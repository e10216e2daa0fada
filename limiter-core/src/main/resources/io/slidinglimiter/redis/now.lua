-- The time of the decision, read first for every operation of the joined script (RedisScripts):
-- ARGV[2] when a test replays a schedule, else Redis TIME, so that instances with skewed clocks
-- agree. Production always sends "".
local now = tonumber(ARGV[2])
if not now then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
end
