#!/usr/bin/env bash
# Recovery time: from a task failure to the restored attempt running again (tasks
# deployed with their state), for number_sum with small state, checkpoints every
# 100 ms and restart delay 0. Prints figures; not a test.
#
#   tests/bench/recovery_time.sh [build-dir]
source "$(dirname "$0")/common.sh" "$@"
"$WEIR" run -v -p 2 -D rest.port="$(free_port)" -D execution.checkpointing.interval=100ms \
  -D "execution.checkpointing.dir=$TMP/cp" -D restart-strategy.type=fixed-delay \
  -D restart-strategy.fixed-delay.attempts=100 -D restart-strategy.fixed-delay.delay=0ms \
  "$EXAMPLES/number_sum.so" --count 200000 --rate 50000 --sink discard \
  --fail-at 20000,40000,60000,80000,100000,120000,140000,160000,180000 >/dev/null 2>"$TMP/log"
python3 - "$TMP/log" <<'PY'
import datetime, re, statistics, sys
def ts(line):
    return datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f")
failed, gaps = None, []
for line in open(sys.argv[1]):
    if "failed: std::runtime_error: injected failure" in line:
        failed = ts(line)
    elif failed and "status=RUNNING" in line:
        gaps.append((ts(line) - failed).total_seconds() * 1000)
        failed = None
print(f"recovery (failure -> restored attempt running), {len(gaps)} failures:"
      f" median {statistics.median(gaps):.1f} ms, max {max(gaps):.1f} ms")
PY
