#!/usr/bin/env bash
# Throughput of a two-input operator: broadcast_rules (three divisor rules broadcast to
# the numbers keyed by parity; per number an event-time timer, a keyed value and a look
# at the broadcast state) on the embedded runtime with the discarding sink, at p=1 and
# p=2; window_sum's tumbling windows (one input, a timer per window) and number_sum (one
# input, a keyed running sum) for comparison. Prints records per second (best of 3 runs);
# not a pass/fail test.
#
#   tests/bench/broadcast_rules_throughput.sh [build-dir] [count]
source "$(dirname "$0")/common.sh" "${1:-}"
count="${2:-5000000}"
report() { report_rate "$1" "$2" "$count"; }
echo "broadcast_rules, ${count} records, discarding sink, $(nproc) cores"
for p in 1 2; do
  report "p=$p broadcast_rules (keyed broadcast process, a timer per record)" \
    "$(best_run_ms -p "$p" "$EXAMPLES/broadcast_rules.so" --count "$count" --sink discard)"
  report "p=$p window_sum tumbling 1 s windows" \
    "$(best_run_ms -p "$p" "$EXAMPLES/window_sum.so" --count "$count" --window-ms 1000 --sink discard)"
  report "p=$p number_sum" "$(best_run_ms -p "$p" "$EXAMPLES/number_sum.so" --count "$count" --sink discard)"
done
