#!/usr/bin/env bash
# number_sum with many keys on each keyed state backend, as a user runs it: throughput
# without and with checkpoints every second (full for hashmap; full and incremental for
# rocksdb), the checkpoints' duration and size, and the peak RSS of the process (the job
# master keeps handles only, so retaining 3 checkpoints costs it no state bytes).
# Prints figures; not a test.
#
#   tests/bench/state_backends_job.sh [build-dir] [keys] [count]
source "$(dirname "$0")/common.sh" "$@"
keys="${2:-1000000}"
count="${3:-20000000}"
echo "number_sum --keys $keys --count $count, p=1, discarding sink, checkpoints every 1 s into $TMP"
printf "%-34s %10s %14s %22s %10s\n" "backend / checkpoints" "runtime" "records/s" "checkpoints (median)" "max RSS"
run() {  # label, then -D options
  local label="$1"
  shift
  rm -rf "$TMP/cp" "$TMP/log"
  /usr/bin/time -f "%M" -o "$TMP/rss" "$WEIR" run -v -D rest.port="$(free_port)" "$@" \
    "$EXAMPLES/number_sum.so" --keys "$keys" --count "$count" --sink discard >"$TMP/out" 2>"$TMP/log"
  local ms
  ms="$(sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p' "$TMP/out")"
  python3 - "$label" "$ms" "$count" "$TMP/log" "$(cat "$TMP/rss")" <<'PY'
import re, statistics, sys
label, ms, count, log, rss_kb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
d = [(int(m.group(1)), int(m.group(2))) for m in re.finditer(r"completed in (\d+) ms, (\d+) bytes", open(log).read())]
cps = "-"
if d:
    cps = f"{len(d)} x {statistics.median([x for x, _ in d]):.0f} ms, {statistics.median([b for _, b in d]) / 1e6:.1f} MB"
print(f"{label:<34} {ms:>8} ms {count / ms * 1000 / 1e6:>10.2f} M/s {cps:>22} {rss_kb / 1024:>7.0f} MB")
PY
}
ck=(-D execution.checkpointing.interval=1s -D "execution.checkpointing.dir=$TMP/cp" -D execution.checkpointing.num-retained=3)
run "hashmap, none"
run "hashmap, full" "${ck[@]}"
run "rocksdb, none" -D state.backend.type=rocksdb
run "rocksdb, full" -D state.backend.type=rocksdb "${ck[@]}"
run "rocksdb, incremental" -D state.backend.type=rocksdb -D execution.checkpointing.incremental=true "${ck[@]}"
