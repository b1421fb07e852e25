#!/usr/bin/env bash
# Usage: scripts/tsan.sh [build-dir] [-- test arguments...]
#
# Builds the threaded core's tests (tasks, input gates, barriers), the checkpoint
# coordinator's and the checkpoint/savepoint integration tests with ThreadSanitizer
# and runs them. The first data race or lock-order problem stops the
# run with its report. Exits with the first failing binary's status.
#   build-dir        default: <repo>/build-tsan; a relative path is taken from the
#                    current directory
#   test arguments   passed to the Catch2 binary, e.g. -- '[barrier]'
#   WEIR_JOBS        parallel build jobs, default 2
#   TSAN_OPTIONS     default: halt_on_error=1 second_deadlock_stack=1
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

BUILD_DIR="$ROOT/build-tsan"
if (($# > 0)) && [[ "$1" != "--" ]]; then
  if [[ "$1" == -* ]]; then
    echo "usage: scripts/tsan.sh [build-dir] [-- test arguments...]" >&2
    exit 2
  fi
  BUILD_DIR="$1"
  shift
fi
if (($# > 0)); then
  if [[ "$1" != "--" ]]; then
    echo "usage: scripts/tsan.sh [build-dir] [-- test arguments...]" >&2
    exit 2
  fi
  shift
fi
JOBS="${WEIR_JOBS:-2}"
if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
  echo "tsan: invalid WEIR_JOBS '$JOBS': expected a positive integer" >&2
  exit 2
fi

generator=()
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  generator=(-G Ninja)
fi
cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DWEIR_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo
# The threaded parts: tasks and gates, the checkpoint coordinator, and whole jobs
# through checkpoints, failures, savepoints and restores.
tests=(runtime_core_tests runtime_checkpoint_tests checkpoint_integration_tests edge_integration_tests)
# Both keyed state backends through one suite (snapshots written while the task writes),
# and the rocksdb backend's snapshot threads (values written while the task goes on).
tests+=(runtime_state_tests rocksdb_state_tests)
# Two-input operators: readers per input, in-flight data of both inputs replayed.
tests+=(two_input_integration_tests)
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${tests[@]}" number_sum word_count edge_jobs weir_rocksdb \
  two_input_jobs

export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
status=0
for t in "${tests[@]}"; do
  if [[ "$t" == runtime_core_tests ]]; then
    "$BUILD_DIR/bin/$t" "$@" || status=$?
  elif [[ "$t" == runtime_state_tests ]]; then
    # librocksdb is not instrumented: its internal publication is suppressed (see the file).
    TSAN_OPTIONS="$TSAN_OPTIONS suppressions=$ROOT/tests/runtime/state/rocksdb/tsan.supp" \
      "$BUILD_DIR/bin/$t" || status=$?
  elif [[ "$t" == rocksdb_state_tests ]]; then
    TSAN_OPTIONS="$TSAN_OPTIONS suppressions=$ROOT/tests/runtime/state/rocksdb/tsan.supp" \
      "$BUILD_DIR/bin/$t" "rocksdb: a snapshot's values go in*,rocksdb: a native snapshot that cannot*" || status=$?
  else
    "$BUILD_DIR/bin/$t" || status=$?
  fi
  if ((status != 0)); then
    echo "tsan: $t failed with status $status" >&2
    exit "$status"
  fi
done
exit 0
