#!/usr/bin/env bash
# Savepoint duration and size against state size: keyed_state with 1k..1M keys on
# weir-runtime; `weir savepoint` is timed end to end (trigger, write, poll).
# Prints figures; not a test.
#
#   tests/bench/savepoint_size.sh [build-dir]
source "$(dirname "$0")/common.sh" "$@"
start_runtime
echo "keys      state on disk   weir savepoint (wall)"
for keys in 1000 10000 100000 1000000; do
  job="$("$WEIR" run -d -m "localhost:$PORT" "$EXAMPLES/keyed_state.so" --keys "$keys" \
         | sed -n 's/^Job has been submitted with JobID //p')"
  sleep 2  # every key has state by now (millions of records per second)
  start=$(date +%s%N)
  path="$("$WEIR" savepoint -m "localhost:$PORT" "$job" "$TMP/sp" | sed -n 's/^Savepoint completed. Path: file://p')"
  end=$(date +%s%N)
  size=$(du -sb "$path" | cut -f1)
  printf "%-9s %-15s %s ms\n" "$keys" "$size bytes" "$(( (end - start) / 1000000 ))"
  "$WEIR" cancel -m "localhost:$PORT" "$job" >/dev/null
done
