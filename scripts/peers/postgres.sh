#!/usr/bin/env bash
# A real PostgreSQL server (Debian's package) on loopback, for weir's PostgreSQL sink tests.
#
#   scripts/peers/postgres.sh install   # once per machine: postgresql-15 + client (apt)
#   scripts/peers/postgres.sh start     # initdb into a fresh data directory, start, wait;
#                                       # the last line printed is conninfo=<libpq string>
#   scripts/peers/postgres.sh status    # exit 0 when the server accepts connections
#   scripts/peers/postgres.sh restart   # fast shutdown and start again (same data), after
#                                       # PG_DOWN_SECONDS (default 0) without a server
#   scripts/peers/postgres.sh stop      # fast shutdown; removes the data directory unless
#                                       # PG_KEEP_WORK=1
#
# Environment (all optional):
#   PG_PORT           the TCP port on 127.0.0.1 (default: `start` takes a free one and
#                     records it in PG_WORK_DIR/port, where the other commands read it)
#   PG_WORK_DIR       the server's directory: data/, the log pg.log, the Unix socket and
#                     the port file (default /tmp/weir-pg-<port> when PG_PORT is given,
#                     else /tmp/weir-pg); `start` recreates it
#   PG_MAX_PREPARED   max_prepared_transactions (default 64; 0 disables PREPARE TRANSACTION)
#   PG_VERSION        the Debian server version (default 15, Debian 12's)
#
# Authentication: the superuser `postgres` connects without a password (trust) over TCP on
# 127.0.0.1 and over the socket; every other role needs its password (scram-sha-256), so
# tests can create a role with a password and check how a wrong one is reported.
#
# As root, initdb and the server run as the `postgres` user (they refuse to run as root),
# so PG_WORK_DIR and its parents must be traversable by that user. fsync is off: this is a
# throwaway server for tests (process kills, not power loss).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PG_VERSION="${PG_VERSION:-15}"
PG_PORT_GIVEN="${PG_PORT:-}"
if [[ -n "$PG_PORT_GIVEN" ]]; then
  PG_WORK_DIR="${PG_WORK_DIR:-/tmp/weir-pg-$PG_PORT}"
else
  PG_WORK_DIR="${PG_WORK_DIR:-/tmp/weir-pg}"
  # The port `start` chose; `start` itself takes a free one (see cmd_start).
  PG_PORT="$(cat "$PG_WORK_DIR/port" 2>/dev/null || true)"
fi
PG_MAX_PREPARED="${PG_MAX_PREPARED:-64}"
PGBIN="/usr/lib/postgresql/$PG_VERSION/bin"
DATA="$PG_WORK_DIR/data"
LOG="$PG_WORK_DIR/pg.log"

# as_owner CMD...: runs CMD as the server's owner (postgres when we are root).
as_owner() {
  if [[ "$(id -u)" -eq 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

conninfo() { echo "host=127.0.0.1 port=$PG_PORT user=postgres dbname=postgres"; }

require_install() {
  [[ -x "$PGBIN/initdb" && -x "$PGBIN/pg_ctl" ]] ||
    die "PostgreSQL $PG_VERSION is not installed ('$PGBIN/initdb' is missing)" "run '$0 install' (as root)"
  command -v psql >/dev/null || die "'psql' is not on the PATH" "run '$0 install' (as root)"
}

cmd_install() {
  if [[ -x "$PGBIN/initdb" ]] && command -v psql >/dev/null; then
    say "already installed: $PGBIN"
    return 0
  fi
  [[ "$(id -u)" -eq 0 ]] ||
    die "PostgreSQL $PG_VERSION is missing and installing it needs root" \
      "as root: apt-get install -y --no-install-recommends postgresql-$PG_VERSION postgresql-client-$PG_VERSION"
  # The package would create and start a stock cluster on 5432; the tests use their own.
  mkdir -p /etc/postgresql-common
  if ! grep -qs '^create_main_cluster *= *false' /etc/postgresql-common/createcluster.conf; then
    echo 'create_main_cluster = false' >>/etc/postgresql-common/createcluster.conf
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "postgresql-$PG_VERSION" "postgresql-client-$PG_VERSION" ||
    { apt-get -o DPkg::Lock::Timeout=600 update && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "postgresql-$PG_VERSION" "postgresql-client-$PG_VERSION"; } ||
    die "apt-get could not install postgresql-$PG_VERSION"
  say "installed: $PGBIN"
}

is_ready() { "$PGBIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" -t 2; }

server_start() {
  as_owner "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start >/dev/null ||
    die "the server did not start on 127.0.0.1:$PG_PORT; the end of its log:
$(tail -n 5 "$LOG" 2>/dev/null)" "is the port taken? pick another with PG_PORT"
}

cmd_start() {
  require_install
  [[ "$PG_MAX_PREPARED" =~ ^[0-9]+$ ]] || die "PG_MAX_PREPARED must be a number, not '$PG_MAX_PREPARED'"
  if [[ -n "$PG_PORT" ]] && is_ready; then
    die "something already answers on 127.0.0.1:$PG_PORT" "stop it ('$0 stop') or pick another PG_PORT"
  fi
  [[ -n "${PG_PORT_GIVEN:-}" ]] || PG_PORT="$(free_port)"
  rm -rf "$PG_WORK_DIR"
  mkdir -p "$PG_WORK_DIR"
  echo "$PG_PORT" >"$PG_WORK_DIR/port"
  chmod 700 "$PG_WORK_DIR"
  [[ "$(id -u)" -ne 0 ]] || chown postgres:postgres "$PG_WORK_DIR"
  as_owner "$PGBIN/initdb" -D "$DATA" -A trust -U postgres -E UTF8 --no-locale >"$PG_WORK_DIR/initdb.log" 2>&1 ||
    die "initdb failed: $(tail -n 3 "$PG_WORK_DIR/initdb.log")" \
      "as root, '$PG_WORK_DIR' and its parents must be traversable by the postgres user"
  cat >"$DATA/pg_hba.conf" <<EOF
# weir test server: the superuser without a password, every other role with its password.
local all all                       trust
host  all postgres  127.0.0.1/32    trust
host  all all       127.0.0.1/32    scram-sha-256
EOF
  cat >>"$DATA/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_WORK_DIR'
max_prepared_transactions = $PG_MAX_PREPARED
max_connections = 200
fsync = off
EOF
  server_start
  say "running on 127.0.0.1:$PG_PORT (data in $DATA, log $LOG, max_prepared_transactions=$PG_MAX_PREPARED)"
  echo "conninfo=$(conninfo)"
}

cmd_restart() {
  require_install
  [[ -d "$DATA" ]] || die "no data directory '$DATA'" "start it first: '$0 start'"
  as_owner "$PGBIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null 2>&1 || true
  sleep "${PG_DOWN_SECONDS:-0}"
  server_start
  say "restarted on 127.0.0.1:$PG_PORT"
}

cmd_stop() {
  if [[ -f "$DATA/postmaster.pid" ]]; then
    as_owner "$PGBIN/pg_ctl" -D "$DATA" -m fast -w -t 60 stop >/dev/null 2>&1 ||
      say "pg_ctl stop failed; see $LOG"
  fi
  if [[ "${PG_KEEP_WORK:-0}" != 1 ]]; then
    rm -rf "$PG_WORK_DIR"
  fi
  say "stopped 127.0.0.1:$PG_PORT"
}

cmd_status() {
  if [[ -n "$PG_PORT" ]] && is_ready; then
    say "running on 127.0.0.1:$PG_PORT"
    echo "conninfo=$(conninfo)"
    return 0
  fi
  if [[ -n "$PG_PORT" ]]; then
    say "not running on 127.0.0.1:$PG_PORT"
  else
    say "not running (no server started in $PG_WORK_DIR)"
  fi
  return 1
}

peer_main "install|start|status|restart|stop" "$@"
