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
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HDFS_PEERS_DIR="${HDFS_PEERS_DIR:-$PEERS_ROOT/hdfs}"
HADOOP_VERSION="${HADOOP_VERSION:-3.5.0}"
HDFS_WORK_DIR="${HDFS_WORK_DIR:-/tmp/weir-hdfs}"
use_java17
PIDFILE="$HDFS_WORK_DIR/hdfs.pid"
LOG="$HDFS_WORK_DIR/hdfs.log"

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
  local t0
  t0=$(now_ms)
  if [[ "$(cat "$HDFS_PEERS_DIR/version" 2>/dev/null)" != "$HADOOP_VERSION"-* ]]; then
    rm -rf "$HDFS_PEERS_DIR"
  fi
  rm -rf "$HDFS_PEERS_DIR/classes"
  mkdir -p "$HDFS_PEERS_DIR/classes"
  maven_jars "$HDFS_PEERS_DIR" hdfs-minicluster-classpath \
    "org.apache.hadoop:hadoop-client-minicluster:$HADOOP_VERSION" \
    "org.apache.hadoop:hadoop-client-api:$HADOOP_VERSION" "org.apache.hadoop:hadoop-client-runtime:$HADOOP_VERSION" ||
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

answers() { curl -sf --max-time 3 "http://127.0.0.1:$1/webhdfs/v1/?op=GETFILESTATUS" >/dev/null 2>&1; }
# ready HTTP_PORT: the cluster is up (its main said so) and WebHDFS answers.
ready() { grep -q '^HDFS_READY' "$LOG" && answers "$1"; }

print_lines() {
  echo "fs.defaultFS=hdfs://127.0.0.1:$(<"$HDFS_WORK_DIR/rpc-port")"
  echo "webhdfs=http://127.0.0.1:$(<"$HDFS_WORK_DIR/http-port")"
}

cmd_start() {
  installed_ok || die "the HDFS minicluster is not installed in '$HDFS_PEERS_DIR'" "run: $0 install"
  if pid_alive "$PIDFILE"; then
    say "already running (pid $(<"$PIDFILE"))"
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
  start_daemon "$PIDFILE" "$LOG" "$JAVA_HOME/bin/java" -Xmx512m -Djava.io.tmpdir="$HDFS_WORK_DIR/tmp" \
    -cp "$HDFS_PEERS_DIR/classes:$HDFS_PEERS_DIR/lib/*" HdfsPeer "$HDFS_WORK_DIR" "$rpc" "$http"
  wait_ready "$PIDFILE" "$LOG" 120 "the HDFS minicluster" ready "$http"
  say "started HDFS (namenode 127.0.0.1:$rpc, WebHDFS 127.0.0.1:$http) in $(took "$t0")"
  print_lines
}

cmd_stop() {
  stop_daemon "$PIDFILE" 10 || return 0
  say "stopped"
}

cmd_status() {
  if pid_alive "$PIDFILE" && answers "$(<"$HDFS_WORK_DIR/http-port")"; then
    say "running"
    print_lines
    return 0
  fi
  say "not running (work dir $HDFS_WORK_DIR)"
  return 1
}

peer_main "install|start|stop|status" "$@"
