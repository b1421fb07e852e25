#!/usr/bin/env bash
# Usage: scripts/stop-cluster.sh
#
# Stops the weir runtime that scripts/start-cluster.sh started: SIGTERM (the runtime
# cancels its jobs and exits; with high-availability.type: filesystem it leaves them
# recorded for the next runtime instead), then SIGKILL when it is still alive after
# WEIR_STOP_TIMEOUT seconds (default 10). Removes the pid file. A runtime started with
# --supervise is stopped through its restart loop (weir-supervisor.pid), which passes
# SIGTERM on and does not restart it.
#
#   WEIR_RUN_DIR      the run directory given to start-cluster.sh, default <repo>/.weir-run
#   WEIR_STOP_TIMEOUT seconds to wait after SIGTERM, default 10
#
# Exit status: 0 stopped, or no runtime was running (it says so); 1 it could not be
# stopped; 2 usage error.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="${WEIR_RUN_DIR:-$ROOT/.weir-run}"
TIMEOUT="${WEIR_STOP_TIMEOUT:-10}"
PID_FILE="$RUN_DIR/weir-runtime.pid"

case "${1:-}" in
  "") ;;
  -h | --help)
    echo "usage: scripts/stop-cluster.sh"
    exit 0
    ;;
  *)
    echo "stop-cluster: unknown argument '$1'" >&2
    echo "hint: usage: scripts/stop-cluster.sh (set WEIR_RUN_DIR to pick the runtime)" >&2
    exit 2
    ;;
esac
if ! [[ "$TIMEOUT" =~ ^[0-9]+$ ]]; then
  echo "stop-cluster: invalid WEIR_STOP_TIMEOUT '$TIMEOUT': expected a number of seconds" >&2
  exit 2
fi
SUPERVISOR_PID_FILE="$RUN_DIR/weir-supervisor.pid"

if [[ ! -f "$PID_FILE" && ! -f "$SUPERVISOR_PID_FILE" ]]; then
  echo "No weir runtime is running (no pid file '$PID_FILE')."
  exit 0
fi

if command -v flock >/dev/null 2>&1 && [[ -w "$RUN_DIR" ]]; then
  exec 9>"$RUN_DIR/weir-runtime.lock"
  if ! flock -w 15 9; then
    echo "stop-cluster: another start-cluster.sh or stop-cluster.sh holds '$RUN_DIR/weir-runtime.lock'" >&2
    exit 1
  fi
fi

# The restart loop first: it must not start the runtime again once that is stopped.
if [[ -f "$SUPERVISOR_PID_FILE" ]]; then
  spid="$(<"$SUPERVISOR_PID_FILE")"
  if [[ "$spid" =~ ^[0-9]+$ ]] && kill -0 "$spid" 2>/dev/null &&
    tr '\0' '\n' <"/proc/$spid/cmdline" 2>/dev/null | grep -q 'supervise-runtime.sh$'; then
    printf 'Stopping the restart loop (pid %s) ... ' "$spid"
    kill -TERM "$spid" 2>/dev/null || true
    for ((i = 0; i < TIMEOUT * 10 + 10; i++)); do
      kill -0 "$spid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$spid" 2>/dev/null; then
      kill -KILL "$spid" 2>/dev/null || true
      echo "killed."
    else
      echo "stopped."
    fi
  fi
  rm -f "$SUPERVISOR_PID_FILE"
  if [[ ! -f "$PID_FILE" ]]; then
    echo "The weir runtime is stopped."
    exit 0
  fi
fi

pid="$(<"$PID_FILE")"
if ! [[ "$pid" =~ ^[0-9]+$ ]]; then
  rm -f "$PID_FILE"
  echo "No weir runtime is running (the pid file '$PID_FILE' held '$pid'); removed it."
  exit 0
fi
if ! kill -0 "$pid" 2>/dev/null; then
  rm -f "$PID_FILE"
  echo "No weir runtime is running (pid $pid is gone); removed the stale pid file '$PID_FILE'."
  exit 0
fi
if [[ -r "/proc/$pid/cmdline" ]]; then
  exe="$(tr '\0' '\n' <"/proc/$pid/cmdline" | head -n 1)"
  if [[ "$(basename "$exe")" != weir-runtime ]]; then
    rm -f "$PID_FILE"
    echo "No weir runtime is running (pid $pid now belongs to '$exe', left alone); removed the stale pid file '$PID_FILE'."
    exit 0
  fi
fi

printf 'Stopping weir runtime (pid %s) ... ' "$pid"
if ! kill -TERM "$pid" 2>/dev/null; then
  if kill -0 "$pid" 2>/dev/null; then
    echo "failed"
    echo "stop-cluster: cannot signal pid $pid (not allowed)" >&2
    echo "hint: stop it as the user that started it" >&2
    exit 1
  fi
fi

# gone_within SECONDS: waits until the process is gone.
gone_within() {
  local deadline=$((SECONDS + $1))
  while kill -0 "$pid" 2>/dev/null; do
    ((SECONDS < deadline)) || return 1
    sleep 0.1
  done
  return 0
}

if gone_within "$TIMEOUT"; then
  rm -f "$PID_FILE"
  echo "stopped."
  exit 0
fi
kill -KILL "$pid" 2>/dev/null || true
if gone_within 5; then
  rm -f "$PID_FILE"
  echo "killed (it did not exit within $TIMEOUT s of SIGTERM)."
  exit 0
fi
echo "failed"
echo "stop-cluster: pid $pid is still alive after SIGKILL" >&2
exit 1
