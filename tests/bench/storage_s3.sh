#!/usr/bin/env bash
# Checkpoint storage: local disk against an S3 server on loopback (versitygw, started here
# by scripts/peers/s3.sh). keyed_state (p=2) runs a fixed number of records with keyed
# state of a given size, checkpointing every second to no storage (in memory), a local
# directory and s3://; prints the job's runtime (throughput), the checkpoints' duration
# and size, and the S3 requests per checkpoint (every request is a debug log line).
# Each configuration runs WEIR_BENCH_REPEAT times (default 3); the fastest run is shown.
# Prints figures; not a test.
#
#   tests/bench/storage_s3.sh [build-dir] [keys...]    (default keys: 650000, about 10 MB;
#                                                       6500000 keys is about 100 MB)
#
# With "payload" (the same measurements as state_backends_job.sh's payload mode, at p=1, by
# tests/bench/state_at_size.py): keyed_state --keys K --value-bytes B (1000000 x 1000 is
# about 1 GB) on hashmap with full checkpoints and rocksdb with full and incremental ones, every
# WEIR_BENCH_INTERVAL (default 1s), into each of WEIR_BENCH_STORAGES (default "local s3"):
# checkpoint duration and size, the S3 requests per checkpoint, records/s at size, restore.
#
#   tests/bench/storage_s3.sh [build-dir] payload [keys] [value-bytes]
source "$(dirname "$0")/common.sh" "$@"
shift $(($# > 0 ? 1 : 0))
mode=keys
if [[ "${1:-}" == payload ]]; then
  mode=payload
  keys="${2:-1000000}"
  value_bytes="${3:-1000}"
fi
keys_list=("${@:-650000}")
count="${WEIR_BENCH_COUNT:-20000000}"

export S3_WORK_DIR="$TMP/s3"
"$ROOT/scripts/peers/s3.sh" start >"$TMP/s3.lines" 2>"$TMP/s3.err" ||
  { echo "cannot start the S3 server: $(cat "$TMP/s3.err")" >&2; exit 1; }
trap '"$ROOT/scripts/peers/s3.sh" stop >/dev/null 2>&1; cleanup' EXIT
s3=(-D "s3.endpoint=$(sed -n 's/^s3.endpoint=//p' "$TMP/s3.lines")" -D s3.path.style.access=true
    -D "s3.access-key=$(sed -n 's/^s3.access-key=//p' "$TMP/s3.lines")"
    -D "s3.secret-key=$(sed -n 's/^s3.secret-key=//p' "$TMP/s3.lines")")
bucket="$(sed -n 's/^bucket=//p' "$TMP/s3.lines")"

if [[ "$mode" == payload ]]; then
  echo "keyed_state --keys $keys --value-bytes $value_bytes, p=1, checkpoints every ${WEIR_BENCH_INTERVAL:-1s}," \
    "3 retained; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  for storage in ${WEIR_BENCH_STORAGES:-local s3}; do
    for config in "hashmap full" "rocksdb full" "rocksdb incremental"; do
      read -r backend kind <<<"$config"
      at=(--dir "$TMP/chk")
      [[ "$storage" == s3 ]] && at=(--dir "s3://$bucket/chk-$backend" --s3-log "$TMP/s3-run.log" "${s3[@]}")
      python3 "$ROOT/tests/bench/state_at_size.py" --weir "$WEIR" --job "$EXAMPLES/keyed_state.so" \
        --keys "$keys" --value-bytes "$value_bytes" --tmp "$TMP" --label "$storage, $backend, $kind" \
        --interval "${WEIR_BENCH_INTERVAL:-1s}" "${at[@]}" -D "state.backend.type=$backend" \
        -D "execution.checkpointing.incremental=$([[ $kind == incremental ]] && echo true || echo false)" \
        -D "state.backend.rocksdb.localdir=$TMP/rocksdb" || exit 1
      # The retained checkpoints: gigabytes each run.
      rm -rf "$TMP/chk" "$TMP/rocksdb" "$TMP/s3-run.log" "$S3_WORK_DIR/data/$bucket/chk-$backend"
    done
  done
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  exit 0
fi

run_once() {  # run_once LOG [-D ...]: keyed_state embedded with -v (its log in LOG)
  local log="$1"
  shift
  # Bounded in time and log size, whatever happens.
  timeout 180 "$WEIR" run -v -p 2 -D rest.port="$(free_port)" -D execution.checkpointing.interval=1s "$@" \
    "$EXAMPLES/keyed_state.so" --keys "$keys" --count "$count" 2>&1 >"$log.out" | head -c 100000000 >"$log" || true
}

echo "keyed_state p=2, $count records, checkpoints every 1 s"
for keys in "${keys_list[@]}"; do
  for storage in memory local s3; do
    logs=()
    for ((r = 1; r <= ${WEIR_BENCH_REPEAT:-3}; r++)); do
      log="$TMP/$storage-$keys-$r.log"
      logs+=("$log")
      case "$storage" in
        memory) run_once "$log" ;;
        local) run_once "$log" -D "execution.checkpointing.dir=$TMP/chk" ;;
        s3) run_once "$log" "${s3[@]}" -D "execution.checkpointing.dir=s3://$bucket/chk" ;;
      esac
    done
    python3 - "$storage" "$keys" "$count" "${logs[@]}" <<'PY'
import re, statistics, sys
storage, keys, count, logs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
def runtime(log):
    m = re.search(r"Job Runtime: (\d+) ms", open(log + ".out").read())
    return int(m.group(1)) if m else None
done = [(runtime(l), l) for l in logs if runtime(l) is not None]
if not done:
    print(f"  {keys:>8} keys  {storage:<6}  no run finished (see {logs[0]})", flush=True)
    sys.exit(0)
ms, log = min(done)
text = open(log).read()
cps = [(int(a), int(b)) for a, b in re.findall(r"checkpoint=\d+ completed in (\d+) ms, (\d+) bytes", text)]
reqs = re.findall(r"s3 request: (\w+) (\S+) -> (\w+)", text)
line = f"  {keys:>8} keys  {storage:<6}  {ms:>6} ms ({count / ms / 1000:5.2f} M records/s)"
if cps:
    d = [c[0] for c in cps]
    line += (f"  {len(cps)} checkpoints of {cps[-1][1] / 1e6:.1f} MB: median {statistics.median(d):.0f} ms,"
             f" max {max(d)} ms")
if storage == "s3" and cps:
    puts = [r for r in reqs if r[0] in ("PUT", "POST") and "delete=" not in r[1]]
    deletes = [r for r in reqs if "delete=" in r[1]]
    lists = [r for r in reqs if "list-type" in r[1]]
    line += (f"; S3 requests per checkpoint: {len(puts) / len(cps):.1f} uploads"
             f" (PUT/multipart), {len(deletes) / len(cps):.1f} batched deletes,"
             f" {len(lists) / len(cps):.1f} lists; {len(reqs)} requests in all")
print(line, flush=True)
PY
  done
done
