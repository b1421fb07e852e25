#!/usr/bin/env bash
# Usage: scripts/test.sh [ctest arguments...]
#
# Installs what is missing (setup.sh), builds <repo>/build (build.sh), then runs
# every test with ctest; extra arguments go to ctest, e.g. `-L slow` for the slow
# tests only, `-LE slow` to skip them, `-R config` to pick by name.
# Exits with ctest's status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"$ROOT/scripts/setup.sh"
# The real Apache Flink that tests/e2e/flink_compat.sh drives (idempotent; once per machine).
"$ROOT/scripts/peers/flink.sh" install
# The PostgreSQL server of the PostgreSQL sink tests (idempotent; once per machine).
"$ROOT/scripts/peers/postgres.sh" install
# Flink's Java REST client that tests/e2e/java_client.sh builds with Maven (idempotent).
"$ROOT/scripts/peers/flink-client.sh" install
# The S3 server (versitygw, go install) and the HDFS minicluster (Maven jars) of the
# checkpoint-storage tests (idempotent; about 1.5 min and 30 s the first time).
"$ROOT/scripts/peers/s3.sh" install
"$ROOT/scripts/peers/hdfs.sh" install
# The Kafka broker of tests/e2e/kafka_*.sh (idempotent; once per machine, about 15 s and 55 MB).
"$ROOT/scripts/peers/kafka.sh" install
# Debian's chromium and Playwright (npm) of tests/e2e/dashboard.sh (idempotent; once per machine).
"$ROOT/scripts/peers/browser.sh" install
installed=$SECONDS
"$ROOT/scripts/build.sh" "$ROOT/build"
echo "test.sh: installing took $installed s, building $((SECONDS - installed)) s" >&2
exec ctest --test-dir "$ROOT/build" --output-on-failure -j "${WEIR_JOBS:-2}" "$@"
