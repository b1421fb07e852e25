#!/usr/bin/env bash
# End-to-end proof of the PostgreSQL sinks against a real server (scripts/peers/postgres.sh):
# pg_number_sum with each sink (upsert, two-phase, wal) at p=1 and p=3, checkpoints every
# 100 ms,
#   1. through injected task failures (--fail-at), in one embedded run (and the upsert
#      sink with AT_LEAST_ONCE checkpoints too);
#   2. through kill -9 of weir-runtime (twice), each time resubmitting with -s <the job's
#      checkpoint directory> to a fresh runtime, then a last run to the end.
# Then the upsert and two-phase tables hold every n exactly once with its running sum,
# the write-ahead-log table every n at least once (never a wrong row), and no transaction
# prepared under the two-phase sink's prefix is left in pg_prepared_xacts.
#
#   bash tests/e2e/pg_exactly_once.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/pg_lib.sh"

conf=(-D execution.checkpointing.interval=100ms -D restart-strategy.type=fixed-delay
  -D restart-strategy.fixed-delay.attempts=100 -D restart-strategy.fixed-delay.delay=50ms)

# expect_result MODE TABLE COUNT: the table as the mode promises it.
expect_result() {
  if [[ "$1" == wal ]]; then
    expect_table_at_least_once "$2" "$3"
  else
    expect_table_exact "$2" "$3"
  fi
  expect_no_prepared "weir-$2"
}

check "the PostgreSQL peer starts and prints its connection string"
pg_start pg
[[ "$CONNINFO" == *"port=$PG_PORT"* ]] || fail "no conninfo=... line with port $PG_PORT"
[[ "$(pg_sql 'SHOW max_prepared_transactions')" -gt 0 ]] || fail "max_prepared_transactions is 0"
pass

count=20000
failures=4000,9000,9001,15000
for mode in upsert two-phase wal; do
  for p in 1 3; do
    table="fail_${mode//-/_}_p$p"
    check "$mode sink, p=$p, failures at $failures: the job restarts 4 times and the table is right"
    run "$WEIR" run -v -p "$p" -D "rest.port=$(free_port)" "${conf[@]}" "$PG_NUMBER_SUM" \
      --conninfo "$CONNINFO" --table "$table" --mode "$mode" --count "$count" --rate 25000 --batch-size 100 --fail-at "$failures"
    expect_rc 0
    expect_out_has "has finished."
    restarts="$(grep -c 'status=RESTARTING' "$ERR_FILE" || true)"
    [[ "$restarts" == 4 ]] || fail "the job restarted $restarts times, not 4"
    expect_result "$mode" "$table" "$count"
    pass
  done
done

check "upsert sink, p=3, AT_LEAST_ONCE checkpoints (replays may repeat rows), failures: the table is exact"
run "$WEIR" run -v -p 3 -D "rest.port=$(free_port)" "${conf[@]}" -D execution.checkpointing.mode=AT_LEAST_ONCE \
  "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --table fail_upsert_alo --mode upsert --count "$count" --rate 25000 \
  --batch-size 100 --fail-at "$failures"
expect_rc 0
expect_out_has "has finished."
expect_table_exact fail_upsert_alo "$count"
pass

count=80000
rate=10000
kills=2
# Each kill comes once the job has a complete checkpoint (a bounded wait: the machine may be
# busy), at a random moment up to 0.6 s later.
crash_after_checkpoint=1
crash_after="0 0.6"
for mode in upsert two-phase wal; do
  for p in 1 3; do
    table="kill_${mode//-/_}_p$p"
    cpdir="$tmp/checkpoints-$table"
    crash_conf=(-D "execution.checkpointing.dir=$cpdir" "${conf[@]}")
    restore_from=""
    job_finished=0
    for ((k = 1; k <= kills && !job_finished; k++)); do
      check "$mode sink, p=$p, round $k: submit to a fresh runtime${restore_from:+ (restoring)}, kill -9 it"
      crash_round "$p" "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --table "$table" --mode "$mode" \
        --count "$count" --rate "$rate" --batch-size 100
      if [[ "$mode" == two-phase ]]; then
        echo "  left prepared by the kill: $(pg_sql "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE 'weir-$table-%'")"
      fi
      pass
    done
    check "$mode sink, p=$p: the last run restores from the newest checkpoint and the table is right"
    ((!job_finished)) || fail "the bounded job finished during the kill rounds: raise count so the last run restores"
    run "$WEIR" run -p "$p" -D "rest.port=$(free_port)" "${crash_conf[@]}" -s "$restore_from" \
      "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --table "$table" --mode "$mode" --count "$count"
    expect_rc 0
    expect_out_has "has finished."
    expect_err_has "restoring from the newest complete checkpoint"
    expect_result "$mode" "$table" "$count"
    pass
  done
done

finish
