#!/usr/bin/env bash
# Throughput of event-time windows: window_sum (numbers with event time n ms, keyed by
# parity, sum and count per window) on the embedded runtime with the discarding sink,
# tumbling windows and sliding windows with 10 windows per record, at p=1 and p=2;
# number_sum (a keyed running sum, no windows) for comparison. Prints records per
# second (best of 3 runs); not a pass/fail test.
#
#   tests/bench/window_throughput.sh [build-dir] [count]
source "$(dirname "$0")/common.sh" "${1:-}"
count="${2:-20000000}"
port="$(free_port)"
# best_ms ARGS...: the best Job Runtime of 3 runs of `weir run ARGS`.
best_ms() {
  local best="" ms
  for _ in 1 2 3; do
    ms="$("$WEIR" run -D rest.port="$port" "$@" | sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p')"
    if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
  done
  echo "$best"
}
report() {
  echo "$1: best of 3 runs $2 ms, $(python3 -c "print(f'{$count / ($2 / 1000.0) / 1e6:.1f}')") M records/s"
}
echo "window_sum, ${count} records, discarding sink, $(nproc) cores"
for p in 1 2; do
  report "p=$p tumbling 1 s windows" "$(best_ms -p "$p" "$EXAMPLES/window_sum.so" --count "$count" --window-ms 1000 --sink discard)"
  report "p=$p sliding 1 s windows every 100 ms (10 per record)" \
    "$(best_ms -p "$p" "$EXAMPLES/window_sum.so" --count "$count" --window-ms 1000 --slide-ms 100 --sink discard)"
  report "p=$p number_sum (no windows)" "$(best_ms -p "$p" "$EXAMPLES/number_sum.so" --count "$count" --sink discard)"
done
