#!/usr/bin/env bash
# The first call after start, as in BENCHMARKS.md ("Holding under overload"): the sample application
# on a redis-server of its own, then one call to /bench/tokens (a token budget: 200 reserved, charged
# 146). Prints its status, time and RateLimit header, the fallbacks, and what Redis counts for it.
#
#   benchmarks/first-call.sh sample-app/target/limiter-sample-app-0.1.0-SNAPSHOT.jar [java options] [-- app arguments]
set -euo pipefail
source "$(dirname "$0")/sample-on-redis.sh"
start_sample_on_redis "$@"

curl -s -o /dev/null -D "$work/headers" -w 'status=%{http_code} time=%{time_total}s\n' \
    "http://localhost:$app_port/bench/tokens?user=alice"
grep -i '^RateLimit:' "$work/headers" | tr -d '\r'
echo "fallbacks=$(counter bench-tokens fallback) used_in_redis=$(counter bench-tokens used alice)"
limiter_warnings
