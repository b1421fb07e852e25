#!/usr/bin/env bash
# Usage: scripts/build.sh [build-dir [target...]]
#
# Configures weir with CMake and Ninja (only when the build directory is not
# configured yet, or when WEIR_BUILD_TYPE changed), then builds the targets given
# (everything, tests included, when none is given).
#   build-dir        default: <repo>/build; a relative path is taken from the
#                    current directory
#   target...        e.g. weir weir-run number_sum (what `ninja -C build -t targets` lists)
#   WEIR_BUILD_TYPE  CMake build type, default RelWithDebInfo
#   WEIR_JOBS        parallel build jobs, default 2
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ "${1:-}" == -* ]]; then
  echo "usage: scripts/build.sh [build-dir [target...]]" >&2
  exit 2
fi
BUILD_DIR="${1:-$ROOT/build}"
TARGETS=("${@:2}")
BUILD_TYPE="${WEIR_BUILD_TYPE:-RelWithDebInfo}"
JOBS="${WEIR_JOBS:-2}"
if ! [[ "$JOBS" =~ ^[1-9][0-9]*$ ]]; then
  echo "build: invalid WEIR_JOBS '$JOBS': expected a positive integer" >&2
  exit 2
fi

# Configure when there is no cache yet, when an earlier configure failed (a cache
# but no build files), or when the build type changed.
generator=()
configure=0
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  generator=(-G Ninja)
  configure=1
elif [[ ! -f "$BUILD_DIR/build.ninja" && ! -f "$BUILD_DIR/Makefile" ]]; then
  configure=1
elif [[ "$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD_DIR/CMakeCache.txt")" != "$BUILD_TYPE" ]]; then
  configure=1
fi
if ((configure)); then
  cmake -S "$ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE="$BUILD_TYPE"
fi
if ((${#TARGETS[@]} > 0)); then
  cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}"
else
  cmake --build "$BUILD_DIR" -j "$JOBS"
fi
