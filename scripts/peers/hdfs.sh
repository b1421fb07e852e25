#!/usr/bin/env bash
# A single-node HDFS on loopback (a namenode and a datanode in one JVM, WebHDFS on), from
# Maven Central's hadoop-client-minicluster jars, for weir's checkpoint-storage tests.
#
#   scripts/peers/hdfs.sh install   # once per machine: the jars (about 104 MB) + a small main
#   scripts/peers/hdfs.sh start     # formats and starts it; prints the lines below
#   scripts/peers/hdfs.sh status    # exit 0 when WebHDFS answers
#   scripts/peers/hdfs.sh stop      # stops it by pid (SIGTERM, then SIGKILL)
#
# `start` prints, one per line:
#   fs.defaultFS=hdfs://127.0.0.1:RPC_PORT
#   webhdfs=http://127.0.0.1:HTTP_PORT
#
# Environment (all optional):
#   HDFS_WORK_DIR   data, log and pid of this cluster (default /tmp/weir-hdfs); every start
#                   formats a fresh file system
#   HDFS_RPC_PORT, HDFS_HTTP_PORT   the namenode's ports (default: free ones)
#   HDFS_PEERS_DIR  where `install` puts the jars (default /opt/weir-peers/hdfs)
#   HADOOP_VERSION  (default 3.5.0; needs Java 17)
#   JAVA_HOME       (default /usr/lib/jvm/java-17-openjdk-amd64)
#   PEER_OWNER_PID  the cluster is stopped once this process is gone (a test that crashed)
#
# Permission checks are off (dfs.permissions.enabled=false): any HADOOP_USER_NAME may write.
set -euo pipefail

HDFS_PEERS_DIR="${HDFS_PEERS_DIR:-/opt/weir-peers/hdfs}"
HADOOP_VERSION="${HADOOP_VERSION:-3.5.0}"
HDFS_WORK_DIR="${HDFS_WORK_DIR:-/tmp/weir-hdfs}"
JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
[[ -x "$JAVA_HOME/bin/java" ]] || JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
export JAVA_HOME

say() { echo "hdfs.sh: $*" >&2; }
die() {
  echo "hdfs.sh: error: $1" >&2
  [[ -z "${2:-}" ]] || echo "hint: $2" >&2
  exit 1
}
now_ms() { date +%s%3N; }
took() { echo "$(($(now_ms) - $1))" | awk '{ printf "%.1f s", $1 / 1000 }'; }
# watch_owner PID: with PEER_OWNER_PID set, stops PID (SIGTERM) once that process is gone.
watch_owner() {
  [[ -n "${PEER_OWNER_PID:-}" ]] || return 0
  setsid bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
kill -TERM "$2" 2>/dev/null' _ "$PEER_OWNER_PID" "$1" </dev/null >/dev/null 2>&1 &
}
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Bumped when HdfsPeer.java changes, so that `install` rebuilds it.
PEER_REVISION=3
installed_ok() {
  [[ -f "$HDFS_PEERS_DIR/classes/HdfsPeer.class" && -f "$HDFS_PEERS_DIR/version" &&
    "$(<"$HDFS_PEERS_DIR/version")" == "$HADOOP_VERSION-$PEER_REVISION" ]]
}

cmd_install() {
  if installed_ok; then
    say "already installed: $HDFS_PEERS_DIR (Hadoop $HADOOP_VERSION)"
    return 0
  fi
  [[ -x "$JAVA_HOME/bin/javac" ]] || die "no javac in '$JAVA_HOME'" "apt-get install -y openjdk-17-jdk-headless"
  command -v mvn >/dev/null || die "'mvn' is not installed" "apt-get install -y maven"
  local t0
  t0=$(now_ms)
  if [[ "$(cat "$HDFS_PEERS_DIR/version" 2>/dev/null)" != "$HADOOP_VERSION"-* ]]; then
    rm -rf "$HDFS_PEERS_DIR"
  fi
  rm -rf "$HDFS_PEERS_DIR/classes"
  mkdir -p "$HDFS_PEERS_DIR/lib" "$HDFS_PEERS_DIR/classes"
  cat >"$HDFS_PEERS_DIR/pom.xml" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>weir.peers</groupId>
  <artifactId>hdfs-minicluster-classpath</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-minicluster</artifactId><version>$HADOOP_VERSION</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-api</artifactId><version>$HADOOP_VERSION</version></dependency>
    <dependency><groupId>org.apache.hadoop</groupId><artifactId>hadoop-client-runtime</artifactId><version>$HADOOP_VERSION</version></dependency>
  </dependencies>
</project>
EOF
  (cd "$HDFS_PEERS_DIR" && mvn -B -q -Dstyle.color=never \
    org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$HDFS_PEERS_DIR/lib") ||
    die "mvn could not fetch hadoop-client-minicluster $HADOOP_VERSION" "check that Maven reaches its registry"
  cat >"$HDFS_PEERS_DIR/HdfsPeer.java" <<'EOF'
// A namenode and a datanode in one JVM on 127.0.0.1, WebHDFS on. Args: baseDir rpcPort httpPort.
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

public class HdfsPeer {
  public static void main(String[] args) throws Exception {
    String base = args[0];
    int rpc = Integer.parseInt(args[1]);
    int http = Integer.parseInt(args[2]);
    Configuration conf = new Configuration();
    conf.set("hadoop.tmp.dir", base + "/tmp");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base + "/dfs");
    conf.set("dfs.namenode.rpc-address", "127.0.0.1:" + rpc);
    conf.set("dfs.namenode.http-address", "127.0.0.1:" + http);
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    conf.set("dfs.datanode.hostname", "127.0.0.1");
    conf.setBoolean("dfs.webhdfs.enabled", true);
    conf.setBoolean("dfs.permissions.enabled", false);
    conf.setInt("dfs.replication", 1);
    // Closing a file waits for its last block; the client polls the namenode from 400 ms
    // on by default, which made every small file take ~0.45 s here.
    conf.setInt("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", 10);
    // A throwaway test cluster: no flush of the namenode's edit log on every operation.
    conf.setBoolean("dfs.namenode.edits.noeditlogchannelflush", true);
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).nameNodePort(rpc).nameNodeHttpPort(http)
        .numDataNodes(1).format(true).build();
    cluster.waitActive();
    System.out.println("HDFS_READY");
    System.out.flush();
    Runtime.getRuntime().addShutdownHook(new Thread(cluster::shutdown));
    Thread.currentThread().join();
  }
}
EOF
  "$JAVA_HOME/bin/javac" -d "$HDFS_PEERS_DIR/classes" -cp "$HDFS_PEERS_DIR/lib/*" "$HDFS_PEERS_DIR/HdfsPeer.java" ||
    die "javac of HdfsPeer.java failed"
  echo "$HADOOP_VERSION-$PEER_REVISION" >"$HDFS_PEERS_DIR/version"
  say "installed Hadoop $HADOOP_VERSION minicluster in $(took "$t0") ($(du -sh "$HDFS_PEERS_DIR/lib" | cut -f1)): $HDFS_PEERS_DIR"
}

pid_alive() { [[ -s "$HDFS_WORK_DIR/hdfs.pid" ]] && kill -0 "$(<"$HDFS_WORK_DIR/hdfs.pid")" 2>/dev/null; }
answers() { curl -sf --max-time 3 "http://127.0.0.1:$1/webhdfs/v1/?op=GETFILESTATUS" >/dev/null 2>&1; }

print_lines() {
  echo "fs.defaultFS=hdfs://127.0.0.1:$(<"$HDFS_WORK_DIR/rpc-port")"
  echo "webhdfs=http://127.0.0.1:$(<"$HDFS_WORK_DIR/http-port")"
}

cmd_start() {
  installed_ok || die "the HDFS minicluster is not installed in '$HDFS_PEERS_DIR'" "run: $0 install"
  if pid_alive; then
    say "already running (pid $(<"$HDFS_WORK_DIR/hdfs.pid"))"
    print_lines
    return 0
  fi
  local rpc="${HDFS_RPC_PORT:-$(free_port)}" http="${HDFS_HTTP_PORT:-$(free_port)}"
  while [[ "$http" == "$rpc" ]]; do http="$(free_port)"; done
  rm -rf "$HDFS_WORK_DIR"
  mkdir -p "$HDFS_WORK_DIR/tmp"
  echo "$rpc" >"$HDFS_WORK_DIR/rpc-port"
  echo "$http" >"$HDFS_WORK_DIR/http-port"
  local t0
  t0=$(now_ms)
  setsid "$JAVA_HOME/bin/java" -Xmx512m -Djava.io.tmpdir="$HDFS_WORK_DIR/tmp" \
    -cp "$HDFS_PEERS_DIR/classes:$HDFS_PEERS_DIR/lib/*" HdfsPeer "$HDFS_WORK_DIR" "$rpc" "$http" \
    >"$HDFS_WORK_DIR/hdfs.log" 2>&1 </dev/null &
  echo $! >"$HDFS_WORK_DIR/hdfs.pid"
  watch_owner "$(<"$HDFS_WORK_DIR/hdfs.pid")"
  local deadline=$((SECONDS + 120))
  until grep -q '^HDFS_READY' "$HDFS_WORK_DIR/hdfs.log" && answers "$http"; do
    if ! pid_alive; then
      tail -n 20 "$HDFS_WORK_DIR/hdfs.log" >&2 || true
      die "the HDFS JVM exited during start" "see $HDFS_WORK_DIR/hdfs.log"
    fi
    ((SECONDS < deadline)) || die "HDFS was not ready within 120 s" "see $HDFS_WORK_DIR/hdfs.log"
    sleep 0.2
  done
  say "started HDFS (namenode 127.0.0.1:$rpc, WebHDFS 127.0.0.1:$http) in $(took "$t0")"
  print_lines
}

cmd_stop() {
  if ! pid_alive; then
    say "not running (work dir $HDFS_WORK_DIR)"
    rm -f "$HDFS_WORK_DIR/hdfs.pid"
    return 0
  fi
  local p i
  p="$(<"$HDFS_WORK_DIR/hdfs.pid")"
  kill -TERM "$p" 2>/dev/null || true
  for ((i = 0; i < 100; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then
    say "pid $p did not exit within 10 s of SIGTERM; sending SIGKILL"
    kill -KILL "$p" 2>/dev/null || true
  fi
  rm -f "$HDFS_WORK_DIR/hdfs.pid"
  say "stopped"
}

cmd_status() {
  if pid_alive && answers "$(<"$HDFS_WORK_DIR/http-port")"; then
    say "running"
    print_lines
    return 0
  fi
  say "not running (work dir $HDFS_WORK_DIR)"
  return 1
}

case "${1:-}" in
  install) cmd_install ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *)
    echo "usage: $0 install|start|stop|status" >&2
    exit 2
    ;;
esac
