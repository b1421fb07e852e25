#!/usr/bin/env bash
# number_sum with many keys on each keyed state backend, as a user runs it: throughput
# without and with checkpoints every second (full for hashmap; full and incremental for
# rocksdb), the checkpoints' duration and size, and the peak RSS of the process (the job
# master keeps handles only, so retaining 3 checkpoints costs it no state bytes).
# Prints figures; not a test.
#
# With "size" as the fourth argument: one run at size instead (e.g. 10 M keys), rocksdb
# with incremental checkpoints every 5 s and 3 retained; it prints every checkpoint
# (duration, bytes written, full state size: the first one is full, the others
# incremental) and the process's resident memory sampled every second, which stays
# far below the state size because snapshots never pass through the job master.
#
# With "payload" as the fourth argument (the third is then the bytes per key): keyed_state
# --keys K --value-bytes B (about K * B bytes of keyed state) on hashmap with full
# checkpoints and on rocksdb with full and incremental ones, every WEIR_BENCH_INTERVAL
# (default 1s), 3 retained; each run fills the state, takes 5 checkpoints at size, is
# cancelled and restored from its newest checkpoint (tests/bench/state_at_size.py prints
# what it measures: checkpoint parts and sizes, RSS with 3 retained, restore time per GB).
#
#   tests/bench/state_backends_job.sh [build-dir] [keys] [count] [compare|size]
#   tests/bench/state_backends_job.sh [build-dir] [keys] [value-bytes] payload
source "$(dirname "$0")/common.sh" "$@"
keys="${2:-1000000}"
count="${3:-20000000}"
mode="${4:-compare}"

if [[ "$mode" == payload ]]; then
  value_bytes="${3:-1000}"
  echo "keyed_state --keys $keys --value-bytes $value_bytes, p=1, checkpoints every ${WEIR_BENCH_INTERVAL:-1s}" \
    "into $TMP/cp, 3 retained; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for config in "hashmap full" "rocksdb full" "rocksdb incremental"; do
    read -r backend kind <<<"$config"
    python3 "$ROOT/tests/bench/state_at_size.py" --weir "$WEIR" --job "$EXAMPLES/keyed_state.so" \
      --keys "$keys" --value-bytes "$value_bytes" --dir "$TMP/cp" --tmp "$TMP" --label "$backend, $kind" \
      --interval "${WEIR_BENCH_INTERVAL:-1s}" -D "state.backend.type=$backend" \
      -D "execution.checkpointing.incremental=$([[ $kind == incremental ]] && echo true || echo false)" \
      -D "state.backend.rocksdb.localdir=$TMP/rocksdb" || exit 1
    rm -rf "$TMP/cp" "$TMP/rocksdb"
  done
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

if [[ "$mode" == size ]]; then
  port="$(free_port)"
  echo "number_sum --keys $keys --count $count, p=1, discarding sink, rocksdb, incremental checkpoints every 5 s," \
    "3 retained, into $TMP/cp"
  "$WEIR" run -D rest.port="$port" -D state.backend.type=rocksdb -D execution.checkpointing.incremental=true \
    -D execution.checkpointing.interval=5s -D "execution.checkpointing.dir=$TMP/cp" \
    -D execution.checkpointing.num-retained=3 -D "state.backend.rocksdb.localdir=$TMP/rocksdb" \
    "$EXAMPLES/number_sum.so" --keys "$keys" --count "$count" --sink discard >"$TMP/out" 2>"$TMP/log" &
  job_pid=$!
  # Polls the job's checkpoint history (the REST API keeps the last 10) and the
  # process's RSS until the job ends; prints what it saw.
  python3 - "$port" "$job_pid" "$TMP/cp" <<'PY'
import json, os, subprocess, sys, time, urllib.request
port, pid, cp_dir = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def get(path):
    with urllib.request.urlopen(f"http://localhost:{port}{path}", timeout=5) as r:
        return json.load(r)
seen, rss, disk, job = {}, [], 0, None
while os.path.exists(f"/proc/{pid}"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss.append(int(line.split()[1]) * 1024)
    except OSError:
        break
    try:
        if job is None:
            jobs = get("/jobs/overview")["jobs"]
            job = jobs[0]["jid"] if jobs else None
        if job:
            for e in get(f"/jobs/{job}/checkpoints")["history"]:
                if e["status"] == "COMPLETED":
                    seen[e["id"]] = e
        du = subprocess.run(["du", "-sb", cp_dir], capture_output=True, text=True).stdout.split()
        disk = max(disk, int(du[0])) if du else disk
    except Exception:
        pass
    time.sleep(1)
print(f"{'checkpoint':>10} {'duration':>10} {'written':>10} {'state':>10}")
for i, e in sorted(seen.items()):
    print(f"{i:>10} {e['end_to_end_duration']:>7} ms {e['checkpointed_size'] / 1e6:>7.1f} MB {e['state_size'] / 1e6:>7.1f} MB")
if rss:
    print(f"process RSS: max {max(rss) / 2**20:.0f} MB, median {sorted(rss)[len(rss) // 2] / 2**20:.0f} MB "
          f"({len(rss)} samples); checkpoint directory at most {disk / 1e6:.0f} MB on disk")
PY
  wait "$job_pid" || { echo "the job failed: $(tail -3 "$TMP/log")" >&2; exit 1; }
  ms="$(sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p' "$TMP/out")"
  python3 -c "import sys; ms, n = int(sys.argv[1]), int(sys.argv[2]); print(f'{n} records in {ms} ms: {n / ms / 1000:.3f} M records/s')" \
    "$ms" "$count"
  exit 0
fi
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
