# Helpers of the PostgreSQL end-to-end tests (bash), sourced after lib.sh:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
#   source "$(dirname "${BASH_SOURCE[0]}")/pg_lib.sh"
#
# What sourcing gives the script:
#   PG_NUMBER_SUM (the example job), PG_PEER (scripts/peers/postgres.sh);
#   pg_start NAME [VAR=VALUE...]: starts a server (scripts/peers/postgres.sh start) on a
#     free port in $tmp/NAME, stopped when the script exits; sets CONNINFO and PG_PORT,
#     PG_WORK_DIR for pg_restart; extra VAR=VALUE go to the peer script (PG_MAX_PREPARED=0);
#   pg_restart: a fast shutdown and start of the last started server;
#   pg_sql SQL: runs SQL with psql on $CONNINFO, prints the rows (fields joined by ',');
#   expect_table_exact TABLE N: TABLE holds exactly number_sum's N rows, each once;
#   expect_table_at_least_once TABLE N: TABLE holds every row of N, right, maybe repeated;
#   expect_no_prepared PREFIX: no transaction prepared under PREFIX is left.

PG_NUMBER_SUM="$BUILD_DIR/examples/pg_number_sum.so"
PG_PEER="$REPO_DIR/scripts/peers/postgres.sh"
if [[ ! -e "$PG_NUMBER_SUM" ]]; then
  echo "FAIL: $E2E_NAME: '$PG_NUMBER_SUM' was not built" >&2
  echo "hint: ninja -C $BUILD_DIR pg_number_sum" >&2
  exit 1
fi
if ! "$PG_PEER" install >/dev/null 2>&1 && ! command -v psql >/dev/null; then
  echo "FAIL: $E2E_NAME: PostgreSQL is not installed" >&2
  echo "hint: run '$PG_PEER install' as root" >&2
  exit 1
fi
# The server runs as the postgres user when we are root: it must reach its directory.
chmod 711 "$tmp"

pg_start() {
  local name="$1"
  shift
  PG_PORT="$(free_port)"
  PG_WORK_DIR="$tmp/$name"
  if ! env "$@" PG_PORT="$PG_PORT" PG_WORK_DIR="$PG_WORK_DIR" "$PG_PEER" start >"$tmp/$name.start.log" 2>&1; then
    LAST_CMD=""
    fail "the PostgreSQL peer did not start: $(tail -n 5 "$tmp/$name.start.log")"
    return 1
  fi
  CONNINFO="$(sed -n 's/^conninfo=//p' "$tmp/$name.start.log" | tail -n 1)"
  track_pid "$(head -n 1 "$PG_WORK_DIR/data/postmaster.pid")"
}

pg_restart() {
  PG_PORT="$PG_PORT" PG_WORK_DIR="$PG_WORK_DIR" "$PG_PEER" restart >>"$tmp/restart.log" 2>&1 ||
    fail "the PostgreSQL peer did not restart: $(tail -n 5 "$tmp/restart.log")"
  track_pid "$(head -n 1 "$PG_WORK_DIR/data/postmaster.pid")"
}

pg_sql() { psql "$CONNINFO" -X -A -t -q -F, -v ON_ERROR_STOP=1 -c "$1"; }

expect_table_exact() {
  expected_number_sum "$2" "$tmp/expected.$1"
  pg_sql "SELECT n, parity, sum FROM $1 ORDER BY n" >"$tmp/actual.$1" || fail "cannot read table $1"
  if ! cmp -s "$tmp/expected.$1" "$tmp/actual.$1"; then
    LAST_CMD=""
    fail "table $1 differs from a failure-free run ($(wc -l <"$tmp/actual.$1") rows for $2): $(diff "$tmp/expected.$1" "$tmp/actual.$1" | head -n 4 | tr '\n' ' ')"
  fi
  return 0
}

expect_table_at_least_once() {
  expected_number_sum "$2" "$tmp/expected.$1"
  pg_sql "SELECT DISTINCT n, parity, sum FROM $1 ORDER BY n" >"$tmp/actual.$1" || fail "cannot read table $1"
  if ! cmp -s "$tmp/expected.$1" "$tmp/actual.$1"; then
    LAST_CMD=""
    fail "the distinct rows of table $1 differ from a failure-free run: $(diff "$tmp/expected.$1" "$tmp/actual.$1" | head -n 4 | tr '\n' ' ')"
  fi
  echo "  table $1: $(pg_sql "SELECT count(*) - count(DISTINCT n) FROM $1") duplicate rows (allowed: at-least-once)"
}

expect_no_prepared() {
  local left
  left="$(pg_sql "SELECT count(*) FROM pg_prepared_xacts WHERE gid LIKE '$1-%'")"
  [[ "$left" == 0 ]] || fail "$left transactions prepared under '$1' are left in pg_prepared_xacts"
}
