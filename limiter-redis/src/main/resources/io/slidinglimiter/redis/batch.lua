-- The script's entry, last in the joined script (RedisScripts), after decide(KEYS, ARGV), which holds
-- now.lua, fast-path.lua and decide.lua: one decision alone, or several that waited for the same
-- connection while another call was in flight (LettuceScriptRunner batches them), in one call.
--
-- A batch: ARGV[1] "batch", ARGV[2] the number of decisions n, then for decision i its number of
-- keys and of arguments (ARGV[1 + 2i], ARGV[2 + 2i]), then every decision's arguments in turn; KEYS
-- holds every decision's keys in turn (on Cluster all in one slot). A number of arguments of -1
-- says the decision's are the previous decision's but ARGV[3] (its deadline, or an undo's time), the
-- one argument sent for it: callers of one limit differ only in that, and each argument costs Redis
-- its parsing. Each decision is decided in
-- order, exactly as if it had come alone, and its reply is the i-th element of the batch's reply. A
-- decision that fails is { -2, the error's text } in its place (clients fail a whole reply that holds
-- an error reply); the others stand. A reset never comes in a
-- batch: its DEL is a write Redis allows under maxmemory, after which Redis would let the batch's
-- later writes past the bound (see write.lua).
if ARGV[1] ~= 'batch' then
  return decide(KEYS, ARGV)
end
local n = tonumber(ARGV[2])
local replies = {}
-- One read of the clock for the batch (now.lua): a redis.call per decision less.
batch_time = redis.call('TIME')
local key, arg = 0, 2 + 2 * n
local args
for i = 1, n do
  local key_count, arg_count = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  local keys = {}
  for j = 1, key_count do
    keys[j] = KEYS[key + j]
  end
  if arg_count == -1 then
    -- The previous decision's arguments (decide never changes them) with this one's ARGV[3].
    args[3] = ARGV[arg + 1]
    arg_count = 1
  else
    args = {}
    for j = 1, arg_count do
      args[j] = ARGV[arg + j]
    end
  end
  key, arg = key + key_count, arg + arg_count
  batch_offset = i - 1
  local ok, reply = pcall(decide, keys, args)
  if ok then
    replies[i] = reply
  elseif type(reply) == 'table' and reply.err then
    replies[i] = { -2, reply.err }
  else
    replies[i] = { -2, tostring(reply) }
  end
end
return replies
