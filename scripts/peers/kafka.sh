#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft, broker and controller in one JVM) on loopback,
# from Maven Central's jars, for weir's Kafka connector tests.
#
#   scripts/peers/kafka.sh install   # once per machine: the broker's jars (about 55 MB)
#   scripts/peers/kafka.sh start     # starts it; waits until it answers; prints the line below
#   scripts/peers/kafka.sh status    # exit 0 when it runs and answers
#   scripts/peers/kafka.sh stop      # stops it by pid (SIGTERM, then SIGKILL)
#   scripts/peers/kafka.sh kill      # SIGKILL, as a crash would (the data stays)
#   scripts/peers/kafka.sh topic NAME PARTITIONS   # creates a topic
#   scripts/peers/kafka.sh partitions NAME N       # raises a topic's partition count to N
#   scripts/peers/kafka.sh transactions ARGS...   # Kafka's TransactionsCommand (list, describe ...)
#
# `start` prints `bootstrap.servers=127.0.0.1:PORT` as its last line on stdout. A work
# directory that already holds a broker's data (after `stop` or `kill`) is started again
# with that data on the same port: a broker restart. Remove the directory for a fresh one.
#
# Topics are created automatically on first use, with one partition.
#
# Environment (all optional):
#   KAFKA_WORK_DIR   data, log, configuration and pid of this broker (default /tmp/weir-kafka)
#   KAFKA_PORT       the client port (default: a free one); the controller takes another
#   KAFKA_PEERS_DIR  where `install` puts the jars (default /opt/weir-peers/kafka)
#   KAFKA_VERSION    org.apache.kafka:kafka_2.13 version (default 4.1.2, which works with
#                    Debian 12's librdkafka 2.0.2)
#   JAVA_HOME        (default /usr/lib/jvm/java-17-openjdk-amd64)
#   PEER_OWNER_PID   the broker is stopped once this process is gone (a test that crashed)
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

KAFKA_PEERS_DIR="${KAFKA_PEERS_DIR:-$PEERS_ROOT/kafka}"
KAFKA_VERSION="${KAFKA_VERSION:-4.1.2}"
KAFKA_WORK_DIR="${KAFKA_WORK_DIR:-/tmp/weir-kafka}"
use_java17
JAVA="$JAVA_HOME/bin/java"
CP="$KAFKA_PEERS_DIR/lib/*"
W="$KAFKA_WORK_DIR"
PIDFILE="$W/broker.pid"
LOG="$W/broker.log"
LOGOPT="-Dlog4j2.configurationFile=$W/log4j2.properties"

# kafka_tool CLASS ARGS...: one of Kafka's command-line tools (a small JVM).
kafka_tool() {
  "$JAVA" -Xmx128m -XX:TieredStopAtLevel=1 $LOGOPT -cp "$CP" "$@"
}

installed_ok() {
  [[ -f "$KAFKA_PEERS_DIR/version" && "$(<"$KAFKA_PEERS_DIR/version")" == "$KAFKA_VERSION" ]] &&
    compgen -G "$KAFKA_PEERS_DIR/lib/kafka_2.13-*.jar" >/dev/null
}

cmd_install() {
  if installed_ok; then
    say "already installed: $KAFKA_PEERS_DIR (Kafka $KAFKA_VERSION)"
    return 0
  fi
  [[ -x "$JAVA" ]] || die "no java in '$JAVA_HOME'" "apt-get install -y openjdk-17-jre-headless"
  local t0
  t0=$(now_ms)
  rm -rf "$KAFKA_PEERS_DIR"
  # The broker's POM brings no logging backend: add Log4j 2 and its slf4j binding.
  maven_jars "$KAFKA_PEERS_DIR" kafka-broker-classpath "org.apache.kafka:kafka_2.13:$KAFKA_VERSION" \
    "org.apache.kafka:kafka-tools:$KAFKA_VERSION" org.apache.logging.log4j:log4j-core:2.24.3 \
    org.apache.logging.log4j:log4j-slf4j-impl:2.24.3 ||
    die "mvn could not fetch kafka_2.13 $KAFKA_VERSION" "check that Maven reaches its registry"
  echo "$KAFKA_VERSION" >"$KAFKA_PEERS_DIR/version"
  say "installed Kafka $KAFKA_VERSION in $(took "$t0") ($(du -sh "$KAFKA_PEERS_DIR/lib" | cut -f1)): $KAFKA_PEERS_DIR"
}

# answers PORT: the broker lists its metadata (a positive readiness signal, not an open port).
answers() { kafka_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$1" --list >/dev/null 2>&1; }

write_config() {
  local port="$1" controller="$2"
  cat >"$W/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$W/kafka-data
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=3
transaction.max.timeout.ms=3600000
group.initial.rebalance.delay.ms=0
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
EOF
  cat >"$W/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.out.ref = STDOUT
logger.req.name = kafka.request.logger
logger.req.level = warn
EOF
}

cmd_start() {
  installed_ok || die "Kafka is not installed in '$KAFKA_PEERS_DIR'" "run: $0 install"
  if pid_alive "$PIDFILE"; then
    say "already running (pid $(<"$PIDFILE"))"
    echo "bootstrap.servers=127.0.0.1:$(<"$W/port")"
    return 0
  fi
  local t0 port controller
  t0=$(now_ms)
  if [[ -f "$W/kafka-data/meta.properties" && -s "$W/port" && -s "$W/controller-port" ]]; then
    port="$(<"$W/port")"
    controller="$(<"$W/controller-port")"
    say "restarting the broker on its data in $W (port $port)"
  else
    rm -rf "$W"
    mkdir -p "$W"
    port="${KAFKA_PORT:-$(free_port)}"
    controller="$(free_port)"
    while [[ "$controller" == "$port" ]]; do controller="$(free_port)"; done
    echo "$port" >"$W/port"
    echo "$controller" >"$W/controller-port"
    write_config "$port" "$controller"
    "$JAVA" -Xmx256m -XX:TieredStopAtLevel=1 $LOGOPT -cp "$CP" kafka.tools.StorageTool format \
      -t "$("$JAVA" -Xmx64m $LOGOPT -cp "$CP" kafka.tools.StorageTool random-uuid | tail -n 1)" \
      -c "$W/server.properties" >"$W/format.log" 2>&1 || {
      cat "$W/format.log" >&2
      die "formatting the broker's storage failed" "see $W/format.log"
    }
  fi
  # A fresh log (the previous ones appended to broker.log.old): readiness is read from it.
  [[ ! -f "$LOG" ]] || cat "$LOG" >>"$LOG.old"
  : >"$LOG"
  start_daemon "$PIDFILE" "$LOG" "$JAVA" -Xms256m -Xmx512m -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -Djava.awt.headless=true $LOGOPT -cp "$CP" kafka.Kafka "$W/server.properties"
  wait_ready "$PIDFILE" "$LOG" 90 "the Kafka broker" grep -q 'Kafka Server started' "$LOG"
  say "started Kafka $KAFKA_VERSION on 127.0.0.1:$port (pid $(<"$PIDFILE")) in $(took "$t0")"
  echo "bootstrap.servers=127.0.0.1:$port"
}

cmd_stop() {
  stop_daemon "$PIDFILE" 30 || return 0
  say "stopped"
}

cmd_kill() {
  if pid_alive "$PIDFILE"; then
    kill -KILL "$(<"$PIDFILE")" 2>/dev/null || true
    say "killed"
  fi
  rm -f "$PIDFILE"
}

cmd_status() {
  if pid_alive "$PIDFILE" && answers "$(<"$W/port")"; then
    say "running"
    echo "bootstrap.servers=127.0.0.1:$(<"$W/port")"
    return 0
  fi
  say "not running (work dir $W)"
  return 1
}

# broker_tool CLASS ARGS...: one of Kafka's tools against the running broker.
broker_tool() {
  pid_alive "$PIDFILE" || die "the broker is not running (work dir $W)" "run: $0 start"
  kafka_tool "$1" --bootstrap-server "127.0.0.1:$(<"$W/port")" "${@:2}"
}

cmd_topic() {
  [[ $# -eq 2 ]] || die "usage: $0 topic NAME PARTITIONS"
  broker_tool org.apache.kafka.tools.TopicCommand --create --if-not-exists --topic "$1" \
    --partitions "$2" --replication-factor 1 >/dev/null
}

cmd_partitions() {
  [[ $# -eq 2 ]] || die "usage: $0 partitions NAME N"
  broker_tool org.apache.kafka.tools.TopicCommand --alter --topic "$1" --partitions "$2" >/dev/null
}

cmd_transactions() { broker_tool org.apache.kafka.tools.TransactionsCommand "$@"; }

peer_main "install|start|stop|kill|status|topic NAME PARTITIONS|partitions NAME N|transactions ARGS..." "$@"
