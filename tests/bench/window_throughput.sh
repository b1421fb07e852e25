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
report() { report_rate "$1" "$2" "$count"; }
echo "window_sum, ${count} records, discarding sink, $(nproc) cores"
for p in 1 2; do
  report "p=$p tumbling 1 s windows" "$(best_run_ms -p "$p" "$EXAMPLES/window_sum.so" --count "$count" --window-ms 1000 --sink discard)"
  report "p=$p sliding 1 s windows every 100 ms (10 per record)" \
    "$(best_run_ms -p "$p" "$EXAMPLES/window_sum.so" --count "$count" --window-ms 1000 --slide-ms 100 --sink discard)"
  report "p=$p number_sum (no windows)" "$(best_run_ms -p "$p" "$EXAMPLES/number_sum.so" --count "$count" --sink discard)"
done
