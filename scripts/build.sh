#!/usr/bin/env bash
# Usage: scripts/build.sh [build-dir]
#
# Configures weir with CMake and Ninja (only when the build directory is not
# configured yet, or when WEIR_BUILD_TYPE changed), then builds everything.
#   build-dir        default: <repo>/build; a relative path is taken from the
#                    current directory
#   WEIR_BUILD_TYPE  CMake build type, default RelWithDebInfo
#   WEIR_JOBS        parallel build jobs, default 2
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if (($# > 1)) || [[ "${1:-}" == -* ]]; then
  echo "usage: scripts/build.sh [build-dir]" >&2
  exit 2
fi
BUILD_DIR="${1:-$ROOT/build}"
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
cmake --build "$BUILD_DIR" -j "$JOBS"
