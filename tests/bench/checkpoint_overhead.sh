#!/usr/bin/env bash
# Throughput of number_sum (p=2, discarding sink) with checkpoints every 100 ms
# against none, and the checkpoints' duration and size. Prints figures; not a test.
#
#   tests/bench/checkpoint_overhead.sh [build-dir] [count]
source "$(dirname "$0")/common.sh" "$@"
count="${2:-100000000}"
run_ms() {  # prints the best Job Runtime of 3 runs
  local best=""
  for _ in 1 2 3 4 5; do
    local ms
    ms="$("$WEIR" run -p 2 -D rest.port="$(free_port)" "$@" "$EXAMPLES/number_sum.so" --count "$count" --sink discard \
          2>>"$TMP/log" | sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p')"
    if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
  done
  echo "$best"
}
none="$(run_ms)"
with="$(run_ms -v -D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$TMP/cp")"
python3 - "$count" "$none" "$with" "$TMP/log" <<'PY'
import re, statistics, sys
count, none, with_cp, log = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
print(f"number_sum p=2, {count} records, discarding sink (best of 5)")
print(f"  no checkpoints:            {none} ms, {count / none / 1000:.1f} M records/s")
print(f"  checkpoints every 100 ms:  {with_cp} ms, {count / with_cp / 1000:.1f} M records/s"
      f" ({(with_cp - none) / none * 100:+.1f}%)")
d = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(r"completed in (\d+) ms, (\d+) bytes", open(log).read())]
if d:
    ms = [x for x, _ in d]
    print(f"  checkpoints: {len(d)}, duration median {statistics.median(ms)} ms (max {max(ms)}),"
          f" size {d[-1][1]} bytes")
PY
