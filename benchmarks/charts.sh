#!/usr/bin/env bash
# Redraws the charts in docs/charts from fresh runs (about ten minutes with everything):
#   benchmarks/charts.sh [burst] [accuracy] [in-process] [redis] [flood]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -P benchmarks -pl benchmarks -am package -DskipTests
exec java -Xmx4g -Djava.awt.headless=true -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" \
    io.slidinglimiter.benchmarks.Charts "$@"
