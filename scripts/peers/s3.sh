#!/usr/bin/env bash
# An S3-compatible server on loopback that verifies AWS Signature V4 (versitygw, POSIX
# backend), for weir's checkpoint-storage tests.
#
#   scripts/peers/s3.sh install   # once per machine: `go install` of versitygw (about 1.5 min)
#   scripts/peers/s3.sh start     # starts it, creates the bucket, prints the lines below
#   scripts/peers/s3.sh status    # exit 0 when it answers signed requests
#   scripts/peers/s3.sh stop      # stops it by pid (SIGTERM, then SIGKILL); keeps the data
#
# `start` prints, one per line (a test reads them with `sed -n 's/^s3.endpoint=//p'`):
#   s3.endpoint=http://127.0.0.1:PORT
#   s3.access-key=...
#   s3.secret-key=...
#   bucket=...
#
# Environment (all optional):
#   S3_WORK_DIR    data, metadata, log, pid and port of this server (default /tmp/weir-s3);
#                  `start` keeps what is there, so a stopped server comes back with its
#                  data on the same port
#   S3_PORT        the port (default: the one used last in S3_WORK_DIR, else a free one)
#   S3_ACCESS_KEY  (default weiradmin)    S3_SECRET_KEY (default weirsecret123)
#   S3_BUCKET      the bucket to create (default weir)
#   PEER_OWNER_PID the server is stopped once this process is gone (a test that crashed)
#   S3_VIRTUAL_DOMAIN  also serve virtual-host style requests (http://<bucket>.DOMAIN:PORT/key);
#                  "localhost" works without DNS (curl resolves *.localhost to 127.0.0.1).
#                  Path-style requests keep working.
#   S3_PEERS_DIR   where `install` puts the binary (default /opt/weir-peers)
#   VERSITYGW_VERSION (default v1.7.0)
#
# Everything binds to 127.0.0.1. The region is us-east-1 (versitygw's default).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

S3_PEERS_DIR="${S3_PEERS_DIR:-$PEERS_ROOT}"
VERSITYGW_VERSION="${VERSITYGW_VERSION:-v1.7.0}"
VGW="$S3_PEERS_DIR/bin/versitygw"
S3_WORK_DIR="${S3_WORK_DIR:-/tmp/weir-s3}"
S3_ACCESS_KEY="${S3_ACCESS_KEY:-weiradmin}"
S3_SECRET_KEY="${S3_SECRET_KEY:-weirsecret123}"
S3_BUCKET="${S3_BUCKET:-weir}"
S3_REGION=us-east-1
PIDFILE="$S3_WORK_DIR/vgw.pid"
LOG="$S3_WORK_DIR/vgw.log"

cmd_install() {
  if [[ -x "$VGW" ]]; then
    say "already installed: $VGW"
    return 0
  fi
  command -v go >/dev/null || die "'go' is not on PATH; versitygw is built with 'go install'" \
    "install Go 1.25 or newer, then run '$0 install' again"
  local t0
  t0=$(now_ms)
  mkdir -p "$S3_PEERS_DIR/bin" "$S3_PEERS_DIR/go"
  # Keep Go's caches out of the home directory.
  GOBIN="$S3_PEERS_DIR/bin" GOMODCACHE="$S3_PEERS_DIR/go/mod" GOCACHE="$S3_PEERS_DIR/go/cache" \
    GOPATH="$S3_PEERS_DIR/go" CGO_ENABLED=0 GOFLAGS=-modcacherw \
    go install "github.com/versity/versitygw/cmd/versitygw@$VERSITYGW_VERSION" ||
    die "go install of versitygw $VERSITYGW_VERSION failed" "check that the Go module proxy is reachable"
  rm -rf "$S3_PEERS_DIR/go/cache"
  say "installed versitygw $VERSITYGW_VERSION in $(took "$t0"): $VGW"
}

current_port() { [[ -s "$S3_WORK_DIR/port" ]] && cat "$S3_WORK_DIR/port"; }

# signed_request ARGS...: curl ARGS signed with this server's credentials (AWS Signature V4);
# prints the HTTP status (000 when there is no answer).
signed_request() {
  curl -s -w '%{http_code}' --aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" \
    -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$@" 2>/dev/null || true
}

# 200 on a signed ListBuckets: up and checking our signature.
answers() { [[ "$(signed_request -o /dev/null --max-time 3 "http://127.0.0.1:$1/")" == 200 ]]; }

print_lines() {
  local port="$1"
  echo "s3.endpoint=http://127.0.0.1:$port"
  echo "s3.access-key=$S3_ACCESS_KEY"
  echo "s3.secret-key=$S3_SECRET_KEY"
  echo "bucket=$S3_BUCKET"
}

cmd_start() {
  [[ -x "$VGW" ]] || die "versitygw is not installed in '$VGW'" "run: $0 install"
  mkdir -p "$S3_WORK_DIR/data" "$S3_WORK_DIR/meta"
  local port="${S3_PORT:-$(current_port || true)}"
  if pid_alive "$PIDFILE"; then
    [[ -n "$port" ]] && answers "$port" || die "a server runs (pid $(<"$PIDFILE")) but does not answer"
    say "already running on 127.0.0.1:$port"
    print_lines "$port"
    return 0
  fi
  [[ -n "$port" ]] || port="$(free_port)"
  if port_taken "$port"; then
    die "port $port is taken by another process" "set S3_PORT to a free port, or use a fresh S3_WORK_DIR"
  fi
  echo "$port" >"$S3_WORK_DIR/port"
  local t0
  t0=$(now_ms)
  start_daemon "$PIDFILE" "$LOG" env ROOT_ACCESS_KEY="$S3_ACCESS_KEY" ROOT_SECRET_KEY="$S3_SECRET_KEY" \
    "$VGW" --port "127.0.0.1:$port" ${S3_VIRTUAL_DOMAIN:+--virtual-domain "$S3_VIRTUAL_DOMAIN"} \
    posix --sidecar "$S3_WORK_DIR/meta" "$S3_WORK_DIR/data"
  wait_ready "$PIDFILE" "$LOG" 30 "versitygw on 127.0.0.1:$port" answers "$port"
  if [[ ! -d "$S3_WORK_DIR/data/$S3_BUCKET" ]]; then
    local code
    code="$(signed_request -o "$S3_WORK_DIR/create-bucket.out" --max-time 5 -X PUT "http://127.0.0.1:$port/$S3_BUCKET")"
    [[ "$code" == 200 ]] || die "cannot create bucket '$S3_BUCKET' (HTTP $code): $(cat "$S3_WORK_DIR/create-bucket.out")"
  fi
  say "started versitygw on 127.0.0.1:$port in $(took "$t0") (work dir $S3_WORK_DIR)"
  print_lines "$port"
}

cmd_stop() {
  stop_daemon "$PIDFILE" 5 || return 0
  say "stopped (data kept in $S3_WORK_DIR)"
}

cmd_status() {
  local port
  port="$(current_port || true)"
  if pid_alive "$PIDFILE" && [[ -n "$port" ]] && answers "$port"; then
    say "running on 127.0.0.1:$port"
    print_lines "$port"
    return 0
  fi
  say "not running (work dir $S3_WORK_DIR)"
  return 1
}

peer_main "install|start|stop|status" "$@"
