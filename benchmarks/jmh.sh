#!/usr/bin/env bash
# Builds the benchmarks and runs JMH with the arguments given, for example:
#   benchmarks/jmh.sh -f 1 -wi 2 -i 3 -t 1 -prof gc
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -P benchmarks -pl benchmarks -am package -DskipTests
exec java -cp "benchmarks/target/classes:$(cat benchmarks/target/classpath.txt)" org.openjdk.jmh.Main "$@"
