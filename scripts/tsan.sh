#!/usr/bin/env bash
# Usage: scripts/tsan.sh [build-dir] [-- test arguments...]
#
# Builds runtime_core_tests (tasks, input gates, barriers: the threaded core) with
# ThreadSanitizer and runs it. The first data race or lock-order problem stops the
# run with TSAN's report. Exits with the test binary's status.
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
cmake --build "$BUILD_DIR" -j "$JOBS" --target runtime_core_tests

export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}"
status=0
"$BUILD_DIR/bin/runtime_core_tests" "$@" || status=$?
if ((status != 0)); then
  echo "tsan: runtime_core_tests failed with status $status" >&2
fi
exit "$status"
