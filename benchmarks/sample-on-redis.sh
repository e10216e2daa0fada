# Sourced by the load scripts beside it: starts a redis-server of its own (the one on PATH, else the
# binary inside embedded-redis, as the tests do) and the sample application on it, and stops both,
# with their temporary folder, when the script exits. Sets $work, $redis_port and $app_port.
# Usage: start_sample_on_redis JAR [java options] [-- application arguments]; JAVA picks the java.
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [ -n "${KEEP:-}" ] && cp "$work/app.log" "$KEEP"
    rm -rf "$work"
}
trap cleanup EXIT

start_sample_on_redis() {
    local jar=$1 redis java_options=()
    shift
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        java_options+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift
    redis=$(command -v redis-server || true)
    if [ -z "$redis" ]; then
        local embedded entry=redis-server-6.2.6-v5-linux-amd64
        embedded=$(find "${HOME}/.m2/repository/com/github/codemonstur/embedded-redis" -name 'embedded-redis-*.jar' | head -n 1)
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
        grep -q "Started SampleApplication" "$work/app.log" && return 0
        sleep 0.5
    done
    cat "$work/app.log" >&2
    return 1
}

# A number from the endpoint's view of a limit: counter LIMIT FIELD [KEY]
counter() {
    curl -s "http://localhost:$app_port/actuator/ratelimiters/$1${3:+?key=$3}" | grep -o "\"$2\":[0-9]*" | grep -o '[0-9]*$'
}

# The limiter's and Lettuce's warnings and errors in the application's log.
limiter_warnings() {
    grep -E "WARN|ERROR" "$work/app.log" | grep -iE "limiter|lettuce" | cut -c1-220 || true
}
