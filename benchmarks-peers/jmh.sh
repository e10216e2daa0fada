#!/usr/bin/env bash
# Builds the peers' benchmarks and runs JMH with the arguments given, for example:
#   benchmarks-peers/jmh.sh -f 1 -wi 3 -w 2 -i 5 -r 2 -t 1 -prof gc
# PeerAnnotations (java -cp ... io.slidinglimiter.benchmarks.peers.PeerAnnotations) says which start on Boot 4.
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -P benchmarks -pl benchmarks-peers -am package -DskipTests
exec java -cp "benchmarks-peers/target/classes:$(cat benchmarks-peers/target/classpath.txt)" org.openjdk.jmh.Main "$@"
