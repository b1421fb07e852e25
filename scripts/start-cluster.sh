#!/usr/bin/env bash
# Usage: scripts/start-cluster.sh [--supervise] [-D key=value]...
#
# Starts the local weir runtime (bin/weir-runtime) in the background, in its own
# session (it survives the end of the terminal), and waits until its REST endpoint
# answers GET /overview. Then `weir run -d`, `weir list` and `weir cancel` reach it at
# rest.address:rest.port (default localhost:8081). scripts/stop-cluster.sh stops it.
#
#   --supervise         run it under scripts/supervise-runtime.sh, a restart loop that
#                       starts it again whenever it dies (with high-availability.type:
#                       filesystem it then resumes its jobs); the loop's pid is in
#                       weir-supervisor.pid, its restarts in the log. On machines with
#                       systemd, conf/weir-runtime.service does the same.
#   -D key=value        configuration property for the runtime (repeatable), e.g.
#                       -D rest.port=8082; the rest comes from conf/config.yaml
#   WEIR_BUILD_DIR      the build tree holding bin/weir-runtime, default <repo>/build
#   WEIR_RUN_DIR        where the pid file (weir-runtime.pid) and the log
#                       (weir-runtime.log, the previous one kept as weir-runtime.log.1)
#                       go, default <repo>/.weir-run
#   WEIR_START_TIMEOUT  seconds to wait for the endpoint, default 30
#
# Exit status: 0 started; 1 a runtime of this WEIR_RUN_DIR is already running, or the
# runtime did not start (the end of its log is printed); 2 usage error.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${WEIR_BUILD_DIR:-$ROOT/build}"
RUN_DIR="${WEIR_RUN_DIR:-$ROOT/.weir-run}"
TIMEOUT="${WEIR_START_TIMEOUT:-30}"
RUNTIME="$BUILD_DIR/bin/weir-runtime"
PID_FILE="$RUN_DIR/weir-runtime.pid"
SUPERVISOR_PID_FILE="$RUN_DIR/weir-supervisor.pid"
LOG_FILE="$RUN_DIR/weir-runtime.log"

usage() {
  echo "usage: scripts/start-cluster.sh [--supervise] [-D key=value]..."
}

props=()
supervise=0
while (($# > 0)); do
  case "$1" in
    -h | --help)
      usage
      exit 0
      ;;
    --supervise)
      supervise=1
      shift
      ;;
    -D)
      if (($# < 2)); then
        echo "start-cluster: '-D' needs a value" >&2
        echo "hint: write -D key=value, e.g. -D rest.port=8082" >&2
        exit 2
      fi
      props+=(-D "$2")
      shift 2
      ;;
    -D?*)
      props+=(-D "${1#-D}")
      shift
      ;;
    *)
      echo "start-cluster: unknown argument '$1'" >&2
      echo "hint: $(usage)" >&2
      exit 2
      ;;
  esac
done
for p in "${props[@]}"; do
  if [[ "$p" != -D && "$p" != *=* ]]; then
    echo "start-cluster: invalid property '$p': expected key=value" >&2
    echo "hint: write -D key=value, e.g. -D rest.port=8082" >&2
    exit 2
  fi
done
if ! [[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]]; then
  echo "start-cluster: invalid WEIR_START_TIMEOUT '$TIMEOUT': expected a positive number of seconds" >&2
  exit 2
fi

if [[ ! -x "$RUNTIME" ]]; then
  echo "start-cluster: '$RUNTIME' not found" >&2
  echo "hint: build it with scripts/build.sh, or set WEIR_BUILD_DIR to your build directory" >&2
  exit 1
fi
if ! command -v curl >/dev/null 2>&1; then
  echo "start-cluster: 'curl' is not installed; it is needed to see when the runtime is ready" >&2
  echo "hint: run scripts/setup.sh" >&2
  exit 1
fi
if ! mkdir -p "$RUN_DIR" 2>/dev/null || [[ ! -w "$RUN_DIR" ]]; then
  echo "start-cluster: cannot write to the run directory '$RUN_DIR'" >&2
  echo "hint: set WEIR_RUN_DIR to a writable directory" >&2
  exit 1
fi

# One start or stop at a time per run directory. The daemon must not inherit the lock (9>&- below).
if command -v flock >/dev/null 2>&1; then
  exec 9>"$RUN_DIR/weir-runtime.lock"
  if ! flock -w 15 9; then
    echo "start-cluster: another start-cluster.sh or stop-cluster.sh holds '$RUN_DIR/weir-runtime.lock'" >&2
    exit 1
  fi
fi

# is_weir_runtime PID: PID is alive and runs weir-runtime (not a process that reused the pid).
is_weir_runtime() {
  kill -0 "$1" 2>/dev/null || return 1
  [[ -r "/proc/$1/cmdline" ]] || return 0
  local exe
  exe="$(tr '\0' '\n' <"/proc/$1/cmdline" | head -n 1)"
  [[ "$(basename "$exe")" == weir-runtime ]]
}

if [[ -f "$SUPERVISOR_PID_FILE" ]]; then
  old_pid="$(<"$SUPERVISOR_PID_FILE")"
  if [[ "$old_pid" =~ ^[0-9]+$ ]] && kill -0 "$old_pid" 2>/dev/null &&
    tr '\0' '\n' <"/proc/$old_pid/cmdline" 2>/dev/null | grep -q 'supervise-runtime.sh$'; then
    echo "start-cluster: a supervised weir runtime is already running (supervisor pid $old_pid, pid file '$SUPERVISOR_PID_FILE')" >&2
    echo "hint: stop it with scripts/stop-cluster.sh, or set WEIR_RUN_DIR to start another one" >&2
    exit 1
  fi
  rm -f "$SUPERVISOR_PID_FILE"
fi
if [[ -f "$PID_FILE" ]]; then
  old_pid="$(<"$PID_FILE")"
  if [[ "$old_pid" =~ ^[0-9]+$ ]] && is_weir_runtime "$old_pid"; then
    echo "start-cluster: a weir runtime is already running (pid $old_pid, pid file '$PID_FILE')" >&2
    echo "hint: stop it with scripts/stop-cluster.sh, or set WEIR_RUN_DIR to start another one" >&2
    exit 1
  fi
  echo "start-cluster: removing the stale pid file '$PID_FILE' (pid '$old_pid' is not running)" >&2
  rm -f "$PID_FILE"
fi

[[ -f "$LOG_FILE" ]] && mv -f "$LOG_FILE" "$LOG_FILE.1"

printf 'Starting weir runtime ... '

# The child writes its own pid before it becomes weir-runtime (exec keeps the pid), so the
# pid file is right even when setsid has to fork. Supervised, the loop writes the runtime's
# pid file at each start and the launcher writes the loop's.
supervisor=""
if ((supervise)); then
  rm -f "$PID_FILE"
  WEIR_RUN_DIR="$RUN_DIR" setsid bash -c 'echo $$ >"$0" && exec "$@"' "$SUPERVISOR_PID_FILE" \
    "$ROOT/scripts/supervise-runtime.sh" "$RUNTIME" "${props[@]}" </dev/null >"$LOG_FILE" 2>&1 9>&- &
else
  setsid bash -c 'echo $$ >"$0" && exec "$@"' "$PID_FILE" "$RUNTIME" "${props[@]}" \
    </dev/null >"$LOG_FILE" 2>&1 9>&- &
fi
launcher=$!

# fail_start MESSAGE: ends the "Starting" line, prints MESSAGE and the end of the log, exits 1.
fail_start() {
  echo "failed"
  {
    echo "start-cluster: $1"
    if [[ -s "$LOG_FILE" ]]; then
      echo "last lines of '$LOG_FILE':"
      tail -n 20 "$LOG_FILE" | sed 's/^/  /'
    else
      echo "the log '$LOG_FILE' is empty"
    fi
  } >&2
  if [[ -n "$supervisor" ]]; then
    kill -TERM "$supervisor" 2>/dev/null
    rm -f "$SUPERVISOR_PID_FILE"
  fi
  rm -f "$PID_FILE"
  exit 1
}

deadline=$((SECONDS + TIMEOUT))
pid=""
url=""
while true; do
  if ((supervise)) && [[ -z "$supervisor" && -s "$SUPERVISOR_PID_FILE" ]]; then
    supervisor="$(<"$SUPERVISOR_PID_FILE")"
  fi
  if [[ -z "$pid" && -s "$PID_FILE" ]]; then
    pid="$(<"$PID_FILE")"
  fi
  if [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null; then
    if ((supervise)); then
      # The loop would start it again; a runtime that cannot start once is not retried.
      fail_start "weir-runtime exited before its REST endpoint answered; the supervisor was stopped"
    fi
    status=""
    if wait "$launcher" 2>/dev/null; then status=0; else status=$?; fi
    fail_start "weir-runtime exited (status $status) before its REST endpoint answered"
  fi
  if [[ -z "$pid" ]] && ! kill -0 "${supervisor:-$launcher}" 2>/dev/null; then
    fail_start "weir-runtime could not be launched"
  fi
  if [[ -n "$pid" && -z "$url" ]]; then
    url="$(sed -n 's#^weir runtime listening on \(https\?://[^[:space:]]*\).*#\1#p' "$LOG_FILE" | head -n 1)"
  fi
  if [[ -n "$url" ]] && curl -sf -o /dev/null --max-time 2 "$url/overview"; then
    break
  fi
  if ((SECONDS >= deadline)); then
    [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null
    fail_start "weir-runtime did not answer GET ${url:-<its REST endpoint>}/overview within $TIMEOUT s; it was stopped"
  fi
  sleep 0.1
done

if [[ -n "$supervisor" ]]; then
  echo "started (pid $pid, supervised by pid $supervisor) on $url"
else
  echo "started (pid $pid) on $url"
fi
