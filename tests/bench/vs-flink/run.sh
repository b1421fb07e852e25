#!/usr/bin/env bash
# weir against Apache Flink 2.3, side by side on this machine: builds weir's benchmark jobs
# and their Flink counterparts (this folder's Maven project), runs both alternately for
# several rounds and prints a table of medians: throughput, the weir/Flink ratio, max RSS,
# CPU seconds and checkpoints completed, then the cost of checkpoints and p=2 against p=1
# (from the medians, by round: the median of each round's figure, and weir's from pairs of
# runs right after each other), then how far to trust them: the share of the machine's CPU time the host took for other work
# while the runs ran (steal, on a virtual machine), how steadily the cores ran code that issues
# several instructions a cycle before and after the runs (core_share_probe), the rows whose
# rounds spread widely, and weir's speed against Flink's in each round (whose two runs of a
# row are back to back).
# Prints figures; not a pass/fail test.
#
#   tests/bench/vs-flink/run.sh [build-dir] [options]
#
# Options (defaults in brackets):
#   --rounds R            rounds; each runs every row on both sides [3]
#   --jobs LIST           keyed-sum (number_sum, 2 keys), many-keys (number_sum --keys K),
#                         many-keys-rocksdb (the same on the rocksdb state backend, incremental
#                         checkpoints, --rocksdb-count records), word-count, window-sum
#                         (window_sum, tumbling 1 s event-time windows, --count records),
#                         window-sliding (the same, 1 s windows every 100 ms)
#                         [keyed-sum,many-keys,word-count]
#   --parallelism LIST    [1,2]
#   --checkpoints LIST    none and exactly-once intervals such as 100ms, 1s [none,100ms,1s]
#   --count N             keyed sum records [50000000]
#   --many-keys K         keys of the many-keys rows [100000]
#   --rocksdb-count N     records of the many-keys-rocksdb rows [2000000]
#   --text-mb M           word count: MB of generated Zipf text, cached in $WEIR_BENCH_CACHE
#                         (default /tmp/weir-bench) [128]
#   --csv FILE            also write every run to FILE
#   --weir-pairs N        after the rounds, weir's checkpoint costs and p=2 against p=1 once
#                         more, each from N pairs of its two rows' runs right after each other
#                         (the order swapped every pair), where within a round a Flink run
#                         separates them; 0: none [5]
#
# Both sides run the same job graph on a local runtime: weir's embedded runtime (`weir run`)
# and Flink's local execution environment (a MiniCluster in the JVM), with object reuse, the
# heap state backend (many-keys-rocksdb: embedded RocksDB on both sides, 128 MB of managed
# memory, incremental checkpoints), and exactly-once checkpoints into a fresh local directory
# per run.
# Throughput is counted over each job's own runtime (weir's "Job Runtime", Flink's net
# runtime), so the JVM's start is not in it; RSS and CPU seconds are the whole process's.
#
# Flink is the one `scripts/peers/flink.sh install` puts in /opt/weir-peers (its jars run the
# Flink jobs); the jobs compile offline against the Maven repository that
# `scripts/peers/flink-client.sh install` fills (this script runs that step, which does
# nothing when done). Without Flink, Java or Maven, it measures weir alone and says why.
# Exit codes: 0 figures printed; 1 a build or a run failed (or Flink processed the wrong
# number of records), or another run is using the same build directory; 2 bad arguments.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
BUILD="$ROOT/build"
if [[ $# -gt 0 && "$1" != -* ]]; then
  BUILD="$1"
  shift
fi
if [[ ! -f "$BUILD/CMakeCache.txt" ]]; then
  echo "vs-flink: '$BUILD' is not a configured build directory" >&2
  echo "hint: scripts/build.sh first, or pass the build directory as the first argument" >&2
  exit 2
fi
BUILD="$(cd "$BUILD" && pwd)"
python3 "$HERE/harness.py" --check-args "$@" || exit  # bad options: exit 2 before building

# One run per build directory: a second one would rebuild the Flink classes under the first
# one's running jobs, and the two would skew each other's figures.
exec 9>"$BUILD/vs-flink.lock"
if ! flock -n 9; then
  echo "vs-flink: another run of this benchmark is using $BUILD (lock: $BUILD/vs-flink.lock)" >&2
  echo "hint: wait for it to finish, or pass another build directory" >&2
  exit 1
fi

echo "building weir (weir, weir-run, number_sum.so, word_count.so, window_sum.so, libweir_rocksdb.so, core_share_probe) in $BUILD"
cmake --build "$BUILD" --target weir weir-run number_sum word_count window_sum weir_rocksdb core_share_probe \
  >"$BUILD/vs-flink-build.log" 2>&1 ||
  { tail -n 20 "$BUILD/vs-flink-build.log" >&2; echo "vs-flink: building weir failed" >&2; exit 1; }

flink_args=()
no_flink=""
if ! flink_home="$("$ROOT/scripts/peers/flink.sh" home 2>/dev/null)"; then
  no_flink="Flink is not installed (scripts/peers/flink.sh install installs it)"
elif ! command -v mvn >/dev/null || ! command -v javac >/dev/null; then
  no_flink="no mvn or javac (apt-get install -y maven openjdk-17-jdk-headless)"
elif ! "$ROOT/scripts/peers/flink-client.sh" install >"$BUILD/vs-flink-install.log" 2>&1; then
  no_flink="Maven could not resolve tests/bench/vs-flink (see $BUILD/vs-flink-install.log)"
else
  # The Java the Flink peer runs on; the jobs read no Flink configuration directory.
  JAVA_HOME="$(eval "$("$ROOT/scripts/peers/flink.sh" env)" && echo "$JAVA_HOME")"
  unset FLINK_CONF_DIR
  project="$BUILD/vs-flink"
  rm -rf "$project"
  mkdir -p "$project"
  cp -r "$HERE/pom.xml" "$HERE/src" "$project/"
  echo "building the Flink jobs (mvn -o) in $project"
  if ! mvn -B -q -o -Dstyle.color=never -Dmaven.repo.local="$("$ROOT/scripts/peers/flink-client.sh" repo)" \
      -f "$project/pom.xml" compile >"$BUILD/vs-flink-mvn.log" 2>&1; then
    tail -n 20 "$BUILD/vs-flink-mvn.log" >&2
    echo "vs-flink: compiling the Flink jobs failed (log: $BUILD/vs-flink-mvn.log)" >&2
    exit 1
  fi
  flink_args=(--flink-home "$flink_home" --flink-classes "$project/target/classes" --java "$JAVA_HOME/bin/java")
fi
exec python3 "$HERE/harness.py" --build "$BUILD" "${flink_args[@]}" --no-flink-reason "$no_flink" "$@"
