#!/usr/bin/env bash
# The overload trial of BENCHMARKS.md, "Holding under overload": the sample application on Redis on
# the defaults (limiter.redis.timeout 100 ms, fail-open), a redis-server of its own, and wrk with
# 200 connections asking for random users u1..u100000 (a limit no key reaches, so every decision
# admits), after a warm-up at 16 connections (WARMUP=5s; 0 for none: a cold start). Prints the decisions, the scripts Redis ran (INFO commandstats), the fallbacks (the
# endpoint's count) and wrk's latency. Needs wrk and redis-cli (apt-get install wrk redis-tools).
#
#   benchmarks/overload.sh sample-app/target/limiter-sample-app-0.1.0-SNAPSHOT.jar [java options] [-- app arguments]
#
# For example `-- --spring.threads.virtual.enabled=true` (with JAVA=<a Java 21+ java>),
# or `-- --limiter.redis.timeout=1s`.
set -euo pipefail
source "$(dirname "$0")/sample-on-redis.sh"
start_sample_on_redis "$@"

cat >"$work/users.lua" <<'LUA'
request = function()
  return wrk.format("GET", "/bench/users?user=u" .. math.random(1, 100000))
end
LUA
if [ "${WARMUP:-5s}" != 0 ]; then
    wrk -t2 -c16 -d"${WARMUP:-5s}" -s "$work/users.lua" "http://localhost:$app_port" >/dev/null
fi
redis-cli -p "$redis_port" config resetstat >/dev/null
allowed=$(counter bench-users allowed)
fallback=$(counter bench-users fallback)
wrk -t2 -c"${CONNECTIONS:-200}" -d"${DURATION:-15s}" --latency -s "$work/users.lua" "http://localhost:$app_port" >"$work/wrk.txt"
sleep 1
decisions=$(( $(counter bench-users allowed) - allowed ))
fell_back=$(( $(counter bench-users fallback) - fallback ))
scripts=$(redis-cli -p "$redis_port" info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
scripts=${scripts:-0}
# A decision that fell back may still have run its script in Redis, late (refused by its deadline, or
# given back): decided in Redis = decisions - fallbacks; the scripts Redis ran are the cross-check.
echo "decisions=$decisions fallbacks=$fell_back scripts_run=$scripts" \
    "decided_in_redis=$(awk -v f="$fell_back" -v d="$decisions" 'BEGIN { printf "%.2f%%", (d ? 100 * (d - f) / d : 0) }')"
grep -E "requests in|Requests/sec|Latency  |  50%|  99%" "$work/wrk.txt"
limiter_warnings
