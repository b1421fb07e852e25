#!/usr/bin/env bash
# End-to-end: Flink's own Java REST client (RestClusterClient of Flink 2.3.0, the client that
# schedulers and tools embed) against weir-runtime. The Maven project tests/e2e/java-client is
# built offline from the repository that scripts/peers/flink-client.sh install filled, then
# runs its checks: cluster overview, list, job details, status, accumulators, checkpoint
# (CONFIGURED, FULL, INCREMENTAL refused), savepoint, dispose, stop with savepoint, job result,
# cancel, and the failures for an unknown job.
#
#   bash tests/e2e/java_client.sh [build-dir]
#
# About 15 s: the Maven build (~6 s) and the Java program (~2 s) dominate.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
t_start=$SECONDS

PEER="$REPO_DIR/scripts/peers/flink-client.sh"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
[[ -x "$JAVA_HOME/bin/java" ]] || export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64

check "Flink's Java client is installed (scripts/peers/flink-client.sh install)"
run bash "$PEER" install
expect_rc 0
repo="$(bash "$PEER" repo)"
pass

check "the Java program builds offline against flink-clients 2.3.0"
cp -r "$REPO_DIR/tests/e2e/java-client" "$tmp/java-client"
E2E_CMD_TIMEOUT=180 run mvn -B -q -o -Dmaven.repo.local="$repo" -f "$tmp/java-client/pom.xml" \
  compile dependency:build-classpath -Dmdep.outputFile="$tmp/java-client/classpath.txt"
expect_rc 0
grep -q "flink-clients-2.3.0.jar" "$tmp/java-client/classpath.txt" ||
  fail "the classpath has no flink-clients-2.3.0.jar"
pass

port="$(free_port)"
sp="$tmp/savepoints"
mkdir -p "$sp"
check "weir-runtime runs two endless number_sum jobs"
start_runtime "$port"
jobs=()
for _ in 1 2; do
  run "$WEIR" run -d -m "127.0.0.1:$port" "$NUMBER_SUM" --count 0 --rate 100 --sink discard
  expect_rc 0
  jobs+=("$(submitted_job)")
done
for j in "${jobs[@]}"; do
  wait_until 30 job_state_is "$port" "$j" RUNNING || fail "job $j did not reach RUNNING"
done
pass

check "RestClusterClient: every call answers as Flink's own JobManager would"
E2E_CMD_TIMEOUT=240 run "$JAVA_HOME/bin/java" -cp "$tmp/java-client/target/classes:$(cat "$tmp/java-client/classpath.txt")" \
  weir.compat.RestClientCompat 127.0.0.1 "$port" "$sp" "${jobs[0]}" "${jobs[1]}"
sed 's/^/  /' "$OUT_FILE"
expect_rc 0
expect_out_line "17 passed, 0 failed"
pass

check "the runtime saw what the client did: the first job FINISHED, the second CANCELED"
job_state_is "$port" "${jobs[0]}" FINISHED || fail "job ${jobs[0]} is '$(job_state "$port" "${jobs[0]}")'"
job_state_is "$port" "${jobs[1]}" CANCELED || fail "job ${jobs[1]} is '$(job_state "$port" "${jobs[1]}")'"
pass

echo "run time: $((SECONDS - t_start)) s"
finish
