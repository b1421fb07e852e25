#!/usr/bin/env bash
# End-to-end: incremental rocksdb checkpoints on a real S3-compatible server (versitygw,
# started here by scripts/peers/s3.sh): the SST files under <job>/shared/ that several
# checkpoints reference. number_sum runs on weir-runtime with state.backend.type=rocksdb,
# execution.checkpointing.incremental=true and checkpoints every 100 ms to s3://; the
# runtime is killed with SIGKILL twice (p=2, then restored at p=3 from the job's checkpoint
# directory on S3), and after each kill the newest checkpoint's shared files are objects on
# S3 of the sizes it records. A run restored at p=2 is sampled while it checkpoints, then
# cancelled with its checkpoint retained: the shared objects of subsumed checkpoints that
# the retained one does not reference are deleted, those it references stay. The last run
# restores that checkpoint at p=1 and runs to the end with every n exactly once; its own
# objects are gone with it, the checkpoint it restored from is untouched
# (incremental_lib.sh).
#
#   bash tests/e2e/s3_incremental.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/incremental_lib.sh"

check "the S3 server starts"
start_s3_peer
cpdir="s3://$s3_bucket/checkpoints"
pass

# storage_files s3://BUCKET/DIR FILE: every object under DIR/ (ListObjectsV2, signed by curl).
storage_files() {
  local prefix="${1#s3://"$s3_bucket"/}/" token="" page="$tmp/.s3-list.xml" query
  : >"$2.unsorted"
  while :; do
    query="list-type=2&prefix=$(_s3_encode "$prefix")"
    [[ -n "$token" ]] && query="continuation-token=$(_s3_encode "$token")&$query"
    curl -sf --max-time 10 --aws-sigv4 "aws:amz:us-east-1:s3" -u "$s3_access_key:$s3_secret_key" \
      -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" "$s3_endpoint/$s3_bucket?$query" >"$page" ||
      fail "cannot list '$1/' on the S3 server"
    python3 - "$page" "$s3_bucket" >>"$2.unsorted" <<'PY'
import re, sys
xml = open(sys.argv[1]).read()
for c in re.findall(r"<Contents>(.*?)</Contents>", xml, re.S):
    key = re.search(r"<Key>(.*?)</Key>", c).group(1)
    size = re.search(r"<Size>(\d+)</Size>", c).group(1)
    print(f"s3://{sys.argv[2]}/{key} {size}")
PY
    grep -q "<IsTruncated>true</IsTruncated>" "$page" || break
    token="$(sed -n 's/.*<NextContinuationToken>\([^<]*\)<.*/\1/p' "$page")"
  done
  sort "$2.unsorted" >"$2"
}
_s3_encode() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }

incremental_rounds 300000 8000 2 3

finish
