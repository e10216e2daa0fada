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
jar=$1
shift
java_options=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    java_options+=("$1")
    shift
done
[ $# -gt 0 ] && shift
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -n "${KEEP:-}" ] && cp "$work/app.log" "$KEEP"; rm -rf "$work"
}
trap cleanup EXIT

redis=$(command -v redis-server || true)
if [ -z "$redis" ]; then
    embedded=$(find "${HOME}/.m2/repository/com/github/codemonstur/embedded-redis" -name 'embedded-redis-*.jar' | head -n 1)
    entry=redis-server-6.2.6-v5-linux-amd64
    [ "$(uname -m)" = aarch64 ] && entry=redis-server-6.2.7-linux-arm64
    unzip -p "$embedded" "$entry" >"$work/redis-server"
    chmod +x "$work/redis-server"
    redis="$work/redis-server"
fi
redis_port=$((20000 + RANDOM % 10000))
app_port=$((30000 + RANDOM % 10000))
"$redis" --port "$redis_port" --bind 127.0.0.1 --save "" --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
"${JAVA:-java}" "${java_options[@]}" -jar "$jar" --server.port="$app_port" --spring.profiles.active=bench,redis \
    --spring.data.redis.port="$redis_port" --management.endpoints.web.exposure.include=ratelimiters "$@" \
    >"$work/app.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 120); do
    grep -q "Started SampleApplication" "$work/app.log" && break
    sleep 0.5
done
grep -q "Started SampleApplication" "$work/app.log" || { cat "$work/app.log" >&2; exit 1; }

cat >"$work/users.lua" <<'LUA'
request = function()
  return wrk.format("GET", "/bench/users?user=u" .. math.random(1, 100000))
end
LUA
counter() {
    curl -s "http://localhost:$app_port/actuator/ratelimiters/bench-users" | grep -o "\"$1\":[0-9]*" | grep -o '[0-9]*$'
}
if [ "${WARMUP:-5s}" != 0 ]; then
    wrk -t2 -c16 -d"${WARMUP:-5s}" -s "$work/users.lua" "http://localhost:$app_port" >/dev/null
fi
redis-cli -p "$redis_port" config resetstat >/dev/null
allowed=$(counter allowed)
fallback=$(counter fallback)
wrk -t2 -c"${CONNECTIONS:-200}" -d"${DURATION:-15s}" --latency -s "$work/users.lua" "http://localhost:$app_port" >"$work/wrk.txt"
sleep 1
decisions=$(( $(counter allowed) - allowed ))
fell_back=$(( $(counter fallback) - fallback ))
scripts=$(redis-cli -p "$redis_port" info commandstats | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
scripts=${scripts:-0}
# A decision that fell back may still have run its script in Redis, late (refused by its deadline, or
# given back): decided in Redis = decisions - fallbacks; the scripts Redis ran are the cross-check.
echo "decisions=$decisions fallbacks=$fell_back scripts_run=$scripts" \
    "decided_in_redis=$(awk -v f="$fell_back" -v d="$decisions" 'BEGIN { printf "%.2f%%", (d ? 100 * (d - f) / d : 0) }')"
grep -E "requests in|Requests/sec|Latency  |  50%|  99%" "$work/wrk.txt"
grep -E "WARN|ERROR" "$work/app.log" | grep -iE "limiter|lettuce" | cut -c1-220 || true
