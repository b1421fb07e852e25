#!/usr/bin/env bash
# End-to-end: incremental rocksdb checkpoints on a real HDFS (a namenode and a datanode
# from Hadoop's minicluster, started here by scripts/peers/hdfs.sh), through WebHDFS; the
# shorter sibling of s3_incremental.sh (incremental_lib.sh): number_sum on rocksdb with
# incremental checkpoints every 100 ms to hdfs://, killed with SIGKILL once at p=2; the
# newest checkpoint's shared files are in <job>/shared/ at the sizes it records. A run
# restored at p=2 is sampled while it checkpoints, then cancelled with its checkpoint
# retained: shared files of subsumed checkpoints that the retained one does not reference
# are deleted, those it references stay. The last run restores that checkpoint at p=1 and
# runs to the end with every n exactly once; its own files are gone with it.
#
#   bash tests/e2e/hdfs_incremental.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/incremental_lib.sh"


check "HDFS starts (namenode + datanode, WebHDFS on)"
start_hdfs_peer
cpdir="$fs_default/weir/checkpoints"
pass

# storage_files hdfs://HOST:PORT/DIR FILE: every file under DIR (WebHDFS LISTSTATUS).
storage_files() {
  python3 - "$webhdfs" "$fs_default" "$1" >"$2.unsorted" <<'PY' || fail "cannot list '$1' through WebHDFS"
import json, sys, urllib.error, urllib.parse, urllib.request
webhdfs, fs_default, root = sys.argv[1], sys.argv[2], sys.argv[3]
def walk(path):
    url = f"{webhdfs}/webhdfs/v1{urllib.parse.quote(path)}?op=LISTSTATUS&user.name=weir"
    try:
        statuses = json.load(urllib.request.urlopen(url, timeout=10))["FileStatuses"]["FileStatus"]
    except urllib.error.HTTPError as e:
        if e.code == 404:
            return
        raise
    for s in statuses:
        child = f"{path}/{s['pathSuffix']}"
        if s["type"] == "DIRECTORY":
            walk(child)
        else:
            print(f"{fs_default}{child} {s['length']}")
walk(root[len(fs_default):])
PY
  sort "$2.unsorted" >"$2"
}

incremental_rounds 600000 8000 2

finish
