#!/usr/bin/env bash
# Usage: scripts/supervise-runtime.sh WEIR_RUNTIME [ARGS...]
#
# A plain restart loop for machines without systemd (conf/weir-runtime.service is the
# systemd way): runs WEIR_RUNTIME ARGS... in the foreground and starts it again, after
# WEIR_RESTART_DELAY seconds, whenever it dies (killed, crashed, or exited with 1).
# With high-availability.type: filesystem the restarted runtime resumes its jobs.
# scripts/start-cluster.sh --supervise runs this in the background.
#
#   WEIR_RUN_DIR        where the runtime's pid file (weir-runtime.pid) is written at each
#                       start, default <repo>/.weir-run
#   WEIR_RESTART_DELAY  seconds between an exit and the next start, default 1
#
# It ends when the runtime exits with 0 (stopped by SIGTERM, as by stop-cluster.sh) or 2
# (bad settings: starting again would not help), and on SIGTERM or SIGINT, which it passes
# to the runtime first. Its own lines (each restart, with the exit status) go to stderr,
# prefixed with "supervise-runtime:". Exit status: the runtime's last one, 2 for usage.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN_DIR="${WEIR_RUN_DIR:-$ROOT/.weir-run}"
DELAY="${WEIR_RESTART_DELAY:-1}"
PID_FILE="$RUN_DIR/weir-runtime.pid"

say() { echo "supervise-runtime: $(date '+%Y-%m-%d %H:%M:%S') $*" >&2; }

if (($# < 1)) || [[ "$1" == -h || "$1" == --help ]]; then
  echo "usage: scripts/supervise-runtime.sh WEIR_RUNTIME [ARGS...]"
  (($# >= 1)) && exit 0
  exit 2
fi
if [[ ! -x "$1" ]]; then
  echo "supervise-runtime: '$1' is not an executable" >&2
  echo "hint: give the path of weir-runtime, e.g. build/bin/weir-runtime" >&2
  exit 2
fi
if ! [[ "$DELAY" =~ ^[0-9]+(\.[0-9]+)?$ ]]; then
  echo "supervise-runtime: invalid WEIR_RESTART_DELAY '$DELAY': expected a number of seconds" >&2
  exit 2
fi
mkdir -p "$RUN_DIR" || exit 1

child=""
stopping=0
on_signal() {
  stopping=1
  [[ -n "$child" ]] && kill -TERM "$child" 2>/dev/null
}
trap on_signal TERM INT

starts=0
while true; do
  "$@" &
  child=$!
  echo "$child" >"$PID_FILE"
  starts=$((starts + 1))
  ((starts > 1)) && say "started weir-runtime again (pid $child, start $starts)"
  # A trapped signal interrupts `wait`; wait again until the runtime is gone.
  while true; do
    wait "$child"
    rc=$?
    kill -0 "$child" 2>/dev/null || break
  done
  child=""
  if ((stopping)); then
    say "stopped (weir-runtime exited with status $rc)"
    rm -f "$PID_FILE"
    exit 0
  fi
  case "$rc" in
    0)
      say "weir-runtime stopped (status 0); not restarting it"
      rm -f "$PID_FILE"
      exit 0
      ;;
    2)
      say "weir-runtime refused its settings (status 2); not restarting it"
      rm -f "$PID_FILE"
      exit 2
      ;;
  esac
  if ((rc > 128)); then
    say "weir-runtime was killed by signal $((rc - 128)); restarting it in $DELAY s"
  else
    say "weir-runtime exited with status $rc; restarting it in $DELAY s"
  fi
  sleep "$DELAY" &
  wait $! 2>/dev/null
  if ((stopping)); then
    say "stopped"
    rm -f "$PID_FILE"
    exit 0
  fi
done
