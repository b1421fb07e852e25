# Shared by the benchmark scripts: the build directory, a free port, a temp dir.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${1:-${WEIR_BUILD_DIR:-$ROOT/build}}"
WEIR="$BUILD/bin/weir"
EXAMPLES="$BUILD/examples"
for f in "$WEIR" "$BUILD/bin/weir-runtime" "$EXAMPLES/number_sum.so" "$EXAMPLES/keyed_state.so"; do
  [[ -e "$f" ]] || { echo "missing $f: build first (scripts/build.sh)" >&2; exit 2; }
done
TMP="$(mktemp -d)"
RUNTIME_PID=""
cleanup() {
  [[ -n "$RUNTIME_PID" ]] && kill "$RUNTIME_PID" 2>/dev/null && wait "$RUNTIME_PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
# start_runtime [-D k=v]...: weir-runtime on a free port in the background; sets PORT.
start_runtime() {
  PORT="$(free_port)"
  "$BUILD/bin/weir-runtime" --rest-port "$PORT" "$@" >"$TMP/runtime.log" 2>&1 &
  RUNTIME_PID=$!
  for _ in $(seq 100); do
    curl -sf -o /dev/null "http://localhost:$PORT/overview" && return 0
    sleep 0.1
  done
  echo "weir-runtime did not start: $(tail -3 "$TMP/runtime.log")" >&2
  exit 1
}
# best_run_ms ARGS...: the best Job Runtime (ms) of 3 runs of `weir run -D rest.port=<free> ARGS`.
best_run_ms() {
  local best="" ms port
  port="$(free_port)"
  for _ in 1 2 3; do
    ms="$("$WEIR" run -D rest.port="$port" "$@" | sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p')"
    [[ -n "$ms" ]] || { echo "weir run $* printed no Job Runtime" >&2; exit 1; }
    if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
  done
  echo "$best"
}
# report_rate WHAT MS COUNT: prints WHAT with MS and COUNT records in MS as M records/s.
report_rate() {
  echo "$1: best of 3 runs $2 ms, $(python3 -c "print(f'{$3 / ($2 / 1000.0) / 1e6:.1f}')") M records/s"
}
