# Shared by the peer scripts (scripts/peers/<name>.sh), each of which starts with
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# What sourcing gives the script (set -euo pipefail is on):
#   PEERS_ROOT: where installs go (/opt/weir-peers); PEER: the script's name, the prefix
#     of its messages; MAVEN_DEPENDENCY_PLUGIN: the plugin (and version) that fetches jars;
#   say MSG / die MSG [HINT]: "<name>.sh: MSG" on stderr / "<name>.sh: error: MSG" and
#     "hint: HINT" on stderr, then exit 1;
#   now_ms, took T0 ("1.2 s" since T0 = $(now_ms)), free_port, port_taken PORT;
#   use_java17: JAVA_HOME (default, or when it has no bin/java: Debian's Java 17), exported;
#   maven_jars DIR NAME GROUP:ARTIFACT:VERSION...: the artifacts and what they need at run
#     time, fetched into DIR/lib by Maven;
#   pid_alive PIDFILE, start_daemon PIDFILE LOG CMD..., wait_ready PIDFILE LOG SECONDS WHAT
#     CMD..., stop_pid PID SECONDS, stop_daemon PIDFILE SECONDS: a daemon run by pid file
#     (see each function);
#   peer_main USAGE ARGS...: runs the command ARGS name, the script's function cmd_<name>.
#
# PEER_OWNER_PID (optional, for every peer started with start_daemon): the peer is stopped
# (SIGTERM) once that process is gone, e.g. a test that crashed.
set -euo pipefail

PEERS_ROOT=/opt/weir-peers
PEER="$(basename "$0")"
MAVEN_DEPENDENCY_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:3.6.1

say() { echo "$PEER: $*" >&2; }
die() {
  echo "$PEER: error: $1" >&2
  [[ -z "${2:-}" ]] || echo "hint: $2" >&2
  exit 1
}
now_ms() { date +%s%3N; }
took() { echo "$(($(now_ms) - $1))" | awk '{ printf "%.1f s", $1 / 1000 }'; }

# free_port: a TCP port on 127.0.0.1 that nobody listens on right now.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# port_taken PORT: succeeds when something accepts connections on 127.0.0.1:PORT.
port_taken() { (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

use_java17() {
  JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
  [[ -x "$JAVA_HOME/bin/java" ]] || JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
  export JAVA_HOME
}

# maven_jars DIR NAME GROUP:ARTIFACT:VERSION...: writes DIR/pom.xml (artifact NAME) that
# depends on the given artifacts and copies them and their run-time dependencies into
# DIR/lib. Returns Maven's status (the caller says what could not be fetched).
maven_jars() {
  local dir="$1" name="$2" dep group artifact version
  shift 2
  command -v mvn >/dev/null || die "'mvn' is not installed" "apt-get install -y maven"
  mkdir -p "$dir/lib"
  {
    echo '<project xmlns="http://maven.apache.org/POM/4.0.0">'
    echo '  <modelVersion>4.0.0</modelVersion>'
    echo "  <groupId>weir.peers</groupId><artifactId>$name</artifactId><version>1</version>"
    echo '  <packaging>pom</packaging>'
    echo '  <dependencies>'
    for dep in "$@"; do
      IFS=: read -r group artifact version <<<"$dep"
      echo "    <dependency><groupId>$group</groupId><artifactId>$artifact</artifactId><version>$version</version></dependency>"
    done
    echo '  </dependencies>'
    echo '</project>'
  } >"$dir/pom.xml"
  (cd "$dir" && mvn -B -q -Dstyle.color=never "$MAVEN_DEPENDENCY_PLUGIN:copy-dependencies" \
    -DincludeScope=runtime -DoutputDirectory="$dir/lib")
}

# pid_alive PIDFILE: the process whose pid PIDFILE holds is alive.
pid_alive() { [[ -s "$1" ]] && kill -0 "$(<"$1")" 2>/dev/null; }

# start_daemon PIDFILE LOG CMD...: runs CMD in the background in a session of its own
# (stdout and stderr appended to LOG), writes its pid to PIDFILE and, with PEER_OWNER_PID
# set, has it stopped once that process is gone. Does not wait: see wait_ready.
start_daemon() {
  local pidfile="$1" log="$2"
  shift 2
  setsid "$@" >>"$log" 2>&1 </dev/null &
  echo $! >"$pidfile"
  [[ -n "${PEER_OWNER_PID:-}" ]] || return 0
  setsid bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
kill -TERM "$2" 2>/dev/null' _ "$PEER_OWNER_PID" "$(<"$pidfile")" </dev/null >/dev/null 2>&1 &
}

# wait_ready PIDFILE LOG SECONDS WHAT CMD...: runs CMD every 0.1 s until it succeeds. Dies
# with the end of LOG when the daemon exits first, or when SECONDS pass; WHAT names it.
wait_ready() {
  local pidfile="$1" log="$2" seconds="$3" what="$4"
  local deadline=$((SECONDS + seconds))
  shift 4
  until "$@"; do
    if ! pid_alive "$pidfile"; then
      tail -n 20 "$log" >&2 || true
      die "$what exited during start" "see $log"
    fi
    ((SECONDS < deadline)) || die "$what was not ready within $seconds s" "see $log"
    sleep 0.1
  done
}

# stop_pid PID SECONDS: SIGTERM, then SIGKILL when PID is still alive after SECONDS.
stop_pid() {
  local pid="$1" i
  kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < $2 * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    say "pid $pid did not exit within $2 s of SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
}

# stop_daemon PIDFILE SECONDS: stops the daemon of PIDFILE (stop_pid) and removes PIDFILE.
# Returns 1 (and says so) when it was not running.
stop_daemon() {
  if ! pid_alive "$1"; then
    say "not running (no live pid in $1)"
    rm -f "$1"
    return 1
  fi
  stop_pid "$(<"$1")" "$2"
  rm -f "$1"
}

# peer_main USAGE ARGS...: runs the script's function cmd_<first of ARGS> with the rest of
# ARGS; without such a function prints "usage: <script> USAGE" and exits 2.
peer_main() {
  local usage="$1"
  shift
  if [[ $# -eq 0 || ! "$1" =~ ^[a-z]+$ ]] || ! declare -F "cmd_$1" >/dev/null; then
    echo "usage: $0 $usage" >&2
    exit 2
  fi
  "cmd_$1" "${@:2}"
}
