#!/usr/bin/env bash
# A real Apache Flink standalone session cluster on loopback, for weir's compatibility tests.
#
#   scripts/peers/flink.sh install   # once per machine: venv + the two PyPI wheels (~320 MB)
#   scripts/peers/flink.sh start     # JobManager + one TaskManager; waits for the TaskManager
#   scripts/peers/flink.sh status    # exit 0 when the cluster answers with a TaskManager
#   scripts/peers/flink.sh stop      # stops it by pid (SIGTERM, then SIGKILL)
#   scripts/peers/flink.sh home      # prints FLINK_HOME (the installed pyflink directory)
#   scripts/peers/flink.sh env       # prints export lines for FLINK_HOME/FLINK_CONF_DIR/JAVA_HOME
#
# Environment (all optional):
#   FLINK_VERSION     the PyPI version to install (default 2.3.0; when pip cannot fetch it, the
#                     newest 2.x, else 1.20.x, that `pip index versions` lists)
#   FLINK_VENV        the venv (default /opt/weir-peers/flink-venv)
#   FLINK_REST_PORT   REST port (default 18081); the RPC port is FLINK_RPC_PORT (default 16123)
#   FLINK_WORK_DIR    the per-run directory: conf/, log/, pid/, savepoints/ ... (default
#                     /tmp/weir-flink-<rest port>); `start` recreates it, `stop` leaves it
#                     (logs) unless FLINK_KEEP_WORK=0
#   JAVA_HOME         default /usr/lib/jvm/java-17-openjdk-amd64
#   FLINK_START_TIMEOUT seconds to wait for the TaskManager (default 120)
#   FLINK_IDENT_STRING part of the pid file names (default weir)
#
# `install` also fetches opt/flink-sql-gateway-<version>.jar with Maven (the wheels lack it and
# bin/sql-client.sh needs it).
#
# Everything binds to 127.0.0.1. Each step prints how long it took.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

FLINK_VERSION="${FLINK_VERSION:-2.3.0}"
FLINK_VENV="${FLINK_VENV:-$PEERS_ROOT/flink-venv}"
FLINK_REST_PORT="${FLINK_REST_PORT:-18081}"
FLINK_RPC_PORT="${FLINK_RPC_PORT:-16123}"
FLINK_WORK_DIR="${FLINK_WORK_DIR:-/tmp/weir-flink-$FLINK_REST_PORT}"
FLINK_START_TIMEOUT="${FLINK_START_TIMEOUT:-120}"
use_java17
# Fixes the pid file names: $FLINK_WORK_DIR/pid/flink-weir-{standalonesession,taskexecutor}.pid.
export FLINK_IDENT_STRING="${FLINK_IDENT_STRING:-weir}"

# The installed pyflink directory (FLINK_HOME), found without importing pyflink (py4j is not
# installed with --no-deps). Empty when not installed.
flink_home() {
  [[ -x "$FLINK_VENV/bin/python" ]] || return 0
  "$FLINK_VENV/bin/python" -c 'import importlib.util, os
s = importlib.util.find_spec("pyflink")
print(os.path.dirname(s.origin) if s and s.origin else "")' 2>/dev/null || true
}

installed_ok() {
  local home
  home="$(flink_home)"
  [[ -n "$home" ]] && compgen -G "$home/lib/flink-dist*.jar" >/dev/null &&
    [[ -f "$home/bin/bash-java-utils.jar" && -f "$home/bin/start-cluster.sh" ]]
}

# Picks the version to install: FLINK_VERSION when pip lists it, else the newest 2.x, else
# the newest 1.20.x.
pick_version() {
  local pip="$FLINK_VENV/bin/pip" listed
  listed="$("$pip" index versions apache-flink-libraries 2>/dev/null | sed -n 's/^Available versions: //p' | tr -d ' ')"
  if [[ -z "$listed" ]]; then
    echo "$FLINK_VERSION" # let pip report why it cannot fetch it
    return
  fi
  if tr ',' '\n' <<<"$listed" | grep -qx "$FLINK_VERSION"; then
    echo "$FLINK_VERSION"
    return
  fi
  local v
  v="$(tr ',' '\n' <<<"$listed" | grep -E '^2\.[0-9]+\.[0-9]+$' | sort -V | tail -n1)"
  [[ -n "$v" ]] || v="$(tr ',' '\n' <<<"$listed" | grep -E '^1\.20\.[0-9]+$' | sort -V | tail -n1)"
  [[ -n "$v" ]] || die "pip lists no apache-flink-libraries 2.x or 1.20.x (it lists: $listed)"
  say "version $FLINK_VERSION is not listed by pip; using $v"
  echo "$v"
}

cmd_install() {
  local t0 t1
  t0=$(now_ms)
  if installed_ok; then
    install_sql_gateway "$(flink_home)" "$(installed_version)"
    say "already installed: $(flink_home) ($(installed_version))"
    return 0
  fi
  [[ -x "$JAVA_HOME/bin/java" ]] || die "no java in '$JAVA_HOME'" "apt-get install -y openjdk-17-jre-headless"
  command -v ps >/dev/null || die "'ps' is missing (flink-daemon.sh needs it)" "apt-get install -y procps"
  local py=/usr/bin/python3
  [[ -x "$py" ]] || py="$(command -v python3)"
  mkdir -p "$(dirname "$FLINK_VENV")"
  if [[ ! -x "$FLINK_VENV/bin/pip" ]]; then
    t1=$(now_ms)
    "$py" -m venv "$FLINK_VENV" ||
      die "'$py -m venv $FLINK_VENV' failed" "apt-get install -y python3-venv"
    say "venv created in $(took "$t1")"
  fi
  local version
  version="$(pick_version)"
  t1=$(now_ms)
  local dl="$FLINK_VENV/.download"
  rm -rf "$dl"
  mkdir -p "$dl"
  # Download first (to measure the size), then install from the local files.
  "$FLINK_VENV/bin/pip" download --no-deps --only-binary=:all: -d "$dl" \
    "apache-flink==$version" "apache-flink-libraries==$version" ||
    "$FLINK_VENV/bin/pip" download --no-deps -d "$dl" \
      "apache-flink==$version" "apache-flink-libraries==$version" ||
    die "pip could not download apache-flink $version" "check: $FLINK_VENV/bin/pip index versions apache-flink"
  say "downloaded $(du -sh "$dl" | cut -f1) in $(took "$t1")"
  t1=$(now_ms)
  "$FLINK_VENV/bin/pip" install --no-deps --no-index --find-links "$dl" \
    "apache-flink==$version" "apache-flink-libraries==$version"
  rm -rf "$dl"
  local home
  home="$(flink_home)"
  [[ -n "$home" ]] || die "pyflink is not importable from $FLINK_VENV after the install"
  chmod +x "$home"/bin/*.sh "$home/bin/flink" 2>/dev/null || true
  installed_ok || die "the install in '$home' lacks lib/flink-dist*.jar or bin/bash-java-utils.jar"
  say "installed in $(took "$t1") ($(du -sh "$home" | cut -f1) on disk): $home"
  install_sql_gateway "$home" "$version"
  say "install total $(took "$t0")"
}

# The wheels ship opt/flink-sql-client*.jar but not opt/flink-sql-gateway*.jar, without which
# sql-client.sh fails (NoClassDefFoundError .../gateway/service/context/DefaultContext). It is
# a ~1 MB jar from Maven Central; fetched with Maven when Maven is there.
install_sql_gateway() {
  local home="$1" version="$2" t1
  compgen -G "$home/opt/flink-sql-gateway*.jar" >/dev/null && return 0
  if ! command -v mvn >/dev/null; then
    say "note: no mvn, so no opt/flink-sql-gateway jar: sql-client.sh will not work"
    return 0
  fi
  t1=$(now_ms)
  mvn -B -q -Dstyle.color=never "$MAVEN_DEPENDENCY_PLUGIN:copy" \
    -Dartifact="org.apache.flink:flink-sql-gateway:$version" -DoutputDirectory="$home/opt" ||
    die "mvn could not fetch org.apache.flink:flink-sql-gateway:$version" \
      "sql-client.sh needs it; re-run '$0 install' once Maven can reach its registry"
  say "fetched opt/flink-sql-gateway-$version.jar in $(took "$t1")"
}

installed_version() {
  "$FLINK_VENV/bin/pip" show apache-flink-libraries 2>/dev/null | sed -n 's/^Version: //p'
}

require_install() {
  installed_ok || die "Flink is not installed in '$FLINK_VENV'" "run: $0 install"
  FLINK_HOME="$(flink_home)"
  export FLINK_HOME
}

set_run_env() {
  export FLINK_CONF_DIR="$FLINK_WORK_DIR/conf" FLINK_LOG_DIR="$FLINK_WORK_DIR/log" \
    FLINK_PID_DIR="$FLINK_WORK_DIR/pid"
}

overview() { curl -sf --max-time 3 "http://127.0.0.1:$FLINK_REST_PORT/overview" 2>/dev/null; }
has_taskmanager() { overview | grep -qE '"taskmanagers":[1-9]'; }

write_config() {
  local W="$FLINK_WORK_DIR"
  rm -rf "$W"
  mkdir -p "$W"/{log,pid,tmp,blob,checkpoints,savepoints}
  cp -r "$FLINK_HOME/conf" "$W/conf"
  chmod -R u+w "$W/conf"
  # The Java 17 --add-opens/--add-exports list of the shipped config (nested or flat form).
  local jopts
  jopts="$(sed -n 's/^[[:space:]]*\(env\.java\.opts\.\)\{0,1\}all:[[:space:]]*//p' "$FLINK_HOME/conf/config.yaml" | head -n1)"
  [[ -n "$jopts" ]] || die "env.java.opts.all not found in '$FLINK_HOME/conf/config.yaml'"
  jopts="${jopts#\"}"
  jopts="${jopts%\"}"
  cat >"$W/conf/config.yaml" <<EOF
env.java.opts.all: "$jopts"
env.java.home: $JAVA_HOME
jobmanager.rpc.address: 127.0.0.1
jobmanager.rpc.port: $FLINK_RPC_PORT
jobmanager.bind-host: 127.0.0.1
jobmanager.memory.process.size: 1024m
jobmanager.execution.failover-strategy: region
taskmanager.bind-host: 127.0.0.1
taskmanager.host: 127.0.0.1
taskmanager.numberOfTaskSlots: 4
taskmanager.memory.process.size: 2048m
parallelism.default: 1
rest.address: 127.0.0.1
rest.bind-address: 127.0.0.1
rest.port: $FLINK_REST_PORT
execution.checkpointing.dir: file://$W/checkpoints
execution.checkpointing.savepoint-dir: file://$W/savepoints
io.tmp.dirs: $W/tmp
blob.storage.directory: $W/blob
env.log.dir: $W/log
env.pid.dir: $W/pid
EOF
  echo 127.0.0.1 >"$W/conf/workers"
  echo "127.0.0.1:$FLINK_REST_PORT" >"$W/conf/masters"
}

cmd_start() {
  require_install
  if has_taskmanager; then
    say "a cluster already answers on 127.0.0.1:$FLINK_REST_PORT"
    return 0
  fi
  if port_taken "$FLINK_REST_PORT"; then
    die "port $FLINK_REST_PORT is taken by something that is not a ready Flink cluster" \
      "set FLINK_REST_PORT to a free port"
  fi
  local t0
  t0=$(now_ms)
  write_config
  set_run_env
  "$FLINK_HOME/bin/start-cluster.sh" >"$FLINK_WORK_DIR/log/start-cluster.out" 2>&1 ||
    die "start-cluster.sh failed: $(tail -n 5 "$FLINK_WORK_DIR/log/start-cluster.out")"
  local deadline=$((SECONDS + FLINK_START_TIMEOUT))
  until has_taskmanager; do
    if ((SECONDS >= deadline)); then
      say "the last lines of the logs:"
      tail -n 20 "$FLINK_WORK_DIR"/log/*.log >&2 2>/dev/null || true
      die "no TaskManager registered within $FLINK_START_TIMEOUT s on 127.0.0.1:$FLINK_REST_PORT" \
        "see the logs in $FLINK_WORK_DIR/log"
    fi
    sleep 0.5
  done
  say "started Flink $(installed_version) on 127.0.0.1:$FLINK_REST_PORT in $(took "$t0") (work dir $FLINK_WORK_DIR)"
}

# The pids of this run's JobManager and TaskManager, from the pid files flink-daemon.sh wrote.
run_pids() {
  local f
  for f in "$FLINK_WORK_DIR"/pid/*.pid; do
    [[ -s "$f" ]] && cat "$f"
  done
  return 0
}

cmd_stop() {
  local t0
  t0=$(now_ms)
  if [[ ! -d "$FLINK_WORK_DIR/pid" ]]; then
    say "nothing to stop (no $FLINK_WORK_DIR/pid)"
    return 0
  fi
  if installed_ok; then
    require_install
    set_run_env
    "$FLINK_HOME/bin/stop-cluster.sh" >"$FLINK_WORK_DIR/log/stop-cluster.out" 2>&1 || true
  fi
  # stop-cluster.sh sends SIGTERM; make sure the JVMs are gone, by pid.
  local p
  for p in $(run_pids); do stop_pid "$p" 15; done
  rm -f "$FLINK_WORK_DIR"/pid/*.pid
  if [[ "${FLINK_KEEP_WORK:-1}" == 0 ]]; then
    rm -rf "$FLINK_WORK_DIR"
  fi
  say "stopped in $(took "$t0")"
}

cmd_status() {
  if has_taskmanager; then
    say "running on 127.0.0.1:$FLINK_REST_PORT: $(overview)"
    return 0
  fi
  say "not running on 127.0.0.1:$FLINK_REST_PORT"
  return 1
}

cmd_home() {
  require_install
  echo "$FLINK_HOME"
}

cmd_env() {
  require_install
  set_run_env
  printf 'export JAVA_HOME=%q FLINK_HOME=%q FLINK_CONF_DIR=%q FLINK_LOG_DIR=%q FLINK_PID_DIR=%q\n' \
    "$JAVA_HOME" "$FLINK_HOME" "$FLINK_CONF_DIR" "$FLINK_LOG_DIR" "$FLINK_PID_DIR"
}

peer_main "install|start|stop|status|home|env" "$@"
