#!/usr/bin/env bash
# Rows per second into PostgreSQL for each sink of examples/pg_number_sum (p=1, no rate
# limit, checkpoints every second), by batch size; then what two-phase commit costs at
# 100 ms and 1 s checkpoints against the same writes committed batch by batch (no
# checkpointing, no PREPARE). Starts its own server (scripts/peers/postgres.sh, fsync off).
# Prints figures; not a test.
#
#   tests/bench/pg_sinks.sh [build-dir] [rows]
source "$(dirname "$0")/common.sh" "$@"
rows="${2:-300000}"
job="$EXAMPLES/pg_number_sum.so"
[[ -e "$job" ]] || { echo "missing $job: build first (ninja -C $BUILD pg_number_sum)" >&2; exit 2; }
chmod 711 "$TMP"  # the server runs as the postgres user when we are root
export PG_PORT PG_WORK_DIR="$TMP/pg"
PG_PORT="$(free_port)"
"$ROOT/scripts/peers/postgres.sh" start >"$TMP/pg-start.log" 2>&1 || { cat "$TMP/pg-start.log" >&2; exit 1; }
trap '"$ROOT/scripts/peers/postgres.sh" stop >/dev/null 2>&1; cleanup' EXIT
conninfo="$(sed -n 's/^conninfo=//p' "$TMP/pg-start.log")"

# rate MODE BATCH [weir run options...]: rows per second into a fresh table, best of 3 runs
# (Job Runtime: from submission to the end, the final checkpoint's commit included).
rate() {
  local mode="$1" batch="$2" ms n best=""
  shift 2
  for _ in 1 2 3; do
    psql "$conninfo" -qXc "DROP TABLE IF EXISTS bench" 2>/dev/null
    ms="$("$WEIR" run -p 1 -D rest.port="$(free_port)" "$@" "$job" --conninfo "$conninfo" --table bench \
          --mode "$mode" --batch-size "$batch" --count "$rows" 2>>"$TMP/log" |
          sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p')"
    n="$(psql "$conninfo" -XAtc "SELECT count(*) FROM bench")"
    [[ -n "$ms" && "$n" -ge "$rows" ]] || { echo "the run of $mode failed: $(tail -3 "$TMP/log")" >&2; exit 1; }
    if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
  done
  python3 -c "print(f'{$rows / $best * 1000:,.0f}')"
}

every_second=(-D execution.checkpointing.interval=1s)
echo "pg_number_sum into PostgreSQL 15 on loopback, $rows rows, p=1, checkpoints every 1 s (rows/s, best of 3)"
echo "  (load average before: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores)"
printf '  %-10s %12s %12s %12s\n' "batch" 100 1000 10000
for mode in upsert two-phase wal; do
  printf '  %-10s %12s %12s %12s\n' "$mode" "$(rate "$mode" 100 "${every_second[@]}")" \
    "$(rate "$mode" 1000 "${every_second[@]}")" "$(rate "$mode" 10000 "${every_second[@]}")"
done
echo "two-phase commit's cost, batch 1000 (rows/s)"
echo "  no checkpointing (each batch committed at once): $(rate two-phase 1000)"
echo "  two-phase, checkpoints every 1 s:                $(rate two-phase 1000 "${every_second[@]}")"
echo "  two-phase, checkpoints every 100 ms:             $(rate two-phase 1000 -D execution.checkpointing.interval=100ms)"
echo "  (load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
