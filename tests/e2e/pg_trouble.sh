#!/usr/bin/env bash
# End-to-end: the PostgreSQL sinks when the database is in trouble, against real servers
# (scripts/peers/postgres.sh):
#   - the server goes down for a second mid-run and comes back: with each sink the job
#     restarts per its strategy and the table is still right;
#   - a wrong password, a missing database, a server that is not there, a server with
#     max_prepared_transactions = 0 (two-phase mode), a table without the key an upsert
#     needs: `weir run` exits 1 at submission with a message naming the problem and a
#     hint, and never prints the password;
#   - bad program arguments: refused before anything runs, naming the option (exit 1, as
#     for every job's argument errors today).
#
#   bash tests/e2e/pg_trouble.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/pg_lib.sh"

conf=(-D execution.checkpointing.interval=100ms -D restart-strategy.type=fixed-delay
  -D restart-strategy.fixed-delay.attempts=100 -D restart-strategy.fixed-delay.delay=200ms)
rest() { echo "rest.port=$(free_port)"; }
# has_rows TABLE: succeeds once TABLE exists and holds a row.
has_rows() { [[ "$(pg_sql "SELECT count(*) > 0 FROM $1" 2>/dev/null)" == t ]]; }

check "the PostgreSQL peer starts"
pg_start pg
pass

count=50000
for mode in upsert two-phase wal; do
  table="restart_${mode//-/_}"
  check "$mode sink: the server is down for 1 s mid-run; the job restarts and the table is right"
  "$WEIR" run -v -p 2 -D "$(rest)" "${conf[@]}" "$PG_NUMBER_SUM" --conninfo "$CONNINFO" \
    --table "$table" --mode "$mode" --count "$count" --rate 10000 --batch-size 100 \
    >"$tmp/$table.out" 2>"$tmp/$table.err" </dev/null &
  job_pid=$!
  track_pid "$job_pid"
  # Mid-run: once rows have arrived (the first checkpoint's, in two-phase mode).
  wait_until 60 has_rows "$table" || fail "no row in table $table within 60 s: $(tail -n 3 "$tmp/$table.err")"
  PG_DOWN_SECONDS=1 pg_restart
  await_exit "$job_pid" 120 "weir run -v -p 2 ... pg_number_sum.so --mode $mode --count $count --rate 10000 (the server down for 1 s mid-run)" \
    "$tmp/$table.out" "$tmp/$table.err"
  expect_rc 0
  expect_out_has "has finished."
  grep -q 'status=RESTARTING' "$ERR_FILE" || fail "the job never restarted: the server restart went unnoticed"
  grep -q 'postgres (host=127.0.0.1 port='"$PG_PORT"'\|postgres: cannot connect to host=127.0.0.1 port='"$PG_PORT" "$ERR_FILE" ||
    fail "no task failure names the server"
  if [[ "$mode" == wal ]]; then
    expect_table_at_least_once "$table" "$count"
  else
    expect_table_exact "$table" "$count"
  fi
  expect_no_prepared "weir-$table"
  pass
done

pg_sql "CREATE ROLE weir_app LOGIN PASSWORD 'right-pw-8431'; GRANT CREATE ON SCHEMA public TO weir_app"
server="host=127.0.0.1 port=$PG_PORT dbname=postgres"

check "the right password (in the connection string, and from PGPASSWORD) works"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$server user=weir_app password=right-pw-8431" \
  --table pw_ok --count 100
expect_rc 0
run env PGPASSWORD=right-pw-8431 "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$server user=weir_app" \
  --table pw_ok --count 100
expect_rc 0
[[ "$(pg_sql 'SELECT count(*) FROM pw_ok')" == 100 ]] || fail "table pw_ok does not hold 100 rows"
pass

check "a wrong password: exit 1, names the user and the server, hints, never prints the password"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$server user=weir_app password=wrong-pw-5527"
expect_rc 1
expect_err_has "password authentication failed for user \"weir_app\""
expect_err_has "host=127.0.0.1 port=$PG_PORT dbname=postgres user=weir_app"
expect_err_has "hint: check the user and its password"
! grep -q "wrong-pw-5527" "$OUT_FILE" "$ERR_FILE" || fail "the password was printed"
expect_out_lacks "Job has been submitted"
pass

check "a wrong password in a postgresql:// URI, submitted to a daemon: exit 1, no password in the output or the log"
port="$(free_port)"
start_runtime "$port"
run "$WEIR" run -d -m "localhost:$port" "$PG_NUMBER_SUM" \
  --conninfo "postgresql://weir_app:wrong-pw-5527@127.0.0.1:$PG_PORT/postgres"
expect_rc 1
expect_err_has "password authentication failed for user \"weir_app\""
! grep -q "wrong-pw-5527" "$OUT_FILE" "$ERR_FILE" "$RUNTIME_LOG" || fail "the password was printed or logged"
pass

check "a missing database: exit 1, names it, hints at createdb"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "host=127.0.0.1 port=$PG_PORT user=postgres dbname=no_such_db"
expect_rc 1
expect_err_has "database \"no_such_db\" does not exist"
expect_err_has "hint: create the database"
pass

check "no server on the port: exit 1, names the server, asks whether it runs"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "host=127.0.0.1 port=$(free_port) user=postgres"
expect_rc 1
expect_err_has "cannot connect to host=127.0.0.1"
expect_err_has "hint: is the server running"
pass

check "an upsert into an existing table without a key on n: exit 1, says what the upsert needs"
pg_sql "CREATE TABLE no_key (n BIGINT, parity TEXT, sum BIGINT)"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --table no_key --mode upsert
expect_rc 1
expect_err_has "no unique or exclusion constraint"
expect_err_has "hint: upserts need a primary key or unique index on (n) of table 'no_key'"
pass

check "bad program arguments: refused naming the option, nothing submitted"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --table t
expect_rc 1
expect_out_lacks "Job has been submitted"
expect_err_has "--conninfo is required"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --mode exactly
expect_rc 1
expect_err_has "--mode must be upsert, two-phase or wal, not 'exactly'"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --table "t; DROP TABLE x"
expect_rc 1
expect_err_has "is not a plain SQL identifier"
pass

check "two-phase mode on a server with max_prepared_transactions = 0: exit 1, says so and how to fix it"
pg_start pg0 PG_MAX_PREPARED=0
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --table tp --mode two-phase
expect_rc 1
expect_err_has "has max_prepared_transactions = 0, so it cannot prepare transactions"
expect_err_has "hint: set max_prepared_transactions"
run "$WEIR" run -D "$(rest)" "$PG_NUMBER_SUM" --conninfo "$CONNINFO" --table tp_upsert --mode upsert --count 10
expect_rc 0
pass

finish
