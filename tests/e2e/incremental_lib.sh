# Incremental rocksdb checkpoints on remote storage (bash), sourced after lib.sh by
# s3_incremental.sh and hdfs_incremental.sh, which start the server and then define
#
#   cpdir: the checkpoint directory (s3://... or hdfs://...);
#   storage_files DIR FILE: "<path> <size>" of every file under DIR (recursively), sorted,
#     into FILE; nothing when DIR does not exist.
#
# What sourcing gives the script:
#   shared_refs SNAPSHOT FILE: the shared files a rocksdb native snapshot references;
#   expect_shared_stored JOBDIR: the newest checkpoint's shared files are stored as recorded;
#   incremental_rounds COUNT RATE P...: the whole test (see there).

if [[ ! -e "$BUILD_DIR/lib/libweir_rocksdb.so" ]]; then
  echo "FAIL: $E2E_NAME: '$BUILD_DIR/lib/libweir_rocksdb.so' was not built (ninja -C $BUILD_DIR weir_rocksdb)" >&2
  exit 1
fi

# shared_refs SNAPSHOT FILE: "<path> <size>" of every shared file the snapshot (a chk-<n>,
# or a job's checkpoint directory: its newest) references, sorted, into FILE; sets
# snapshot_id and snapshot_reused (bytes of them written by earlier checkpoints). Fails the
# check when it is not a rocksdb native (incremental) snapshot.
shared_refs() {
  run "$WEIR" inspect --output json "$1"
  expect_rc 0
  _parse_refs "$OUT_FILE" "$2" || fail "'$1' is not a rocksdb native (incremental) snapshot: $(head -c 300 "$OUT_FILE")"
}
# _parse_refs JSON FILE: shared_refs on the output of `weir inspect --output json`.
_parse_refs() {
  local parsed
  parsed="$(python3 - "$1" "$2" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["stateBackend"] == "rocksdb", doc["stateBackend"]
keyed = [k for op in doc["operators"] for s in op["subtasks"] for k in s["keyed"]]
assert keyed and all(k["format"] == "native" for k in keyed), keyed
files = sorted({f"{f['path']} {f['size']}" for k in keyed for f in k["sharedFiles"]})
open(sys.argv[2], "w").write("".join(line + "\n" for line in files))
# Bytes of shared files it references but did not write (an earlier checkpoint did).
print(doc["checkpointId"], sum(k["stateSize"] - k["checkpointedSize"] for k in keyed))
EOF
)" || return 1
  read -r snapshot_id snapshot_reused <<<"$parsed"
}

# expect_shared_stored JOBDIR: the newest checkpoint of JOBDIR references shared files, all
# in JOBDIR/shared/, each stored there at the size the checkpoint records.
expect_shared_stored() {
  run "$WEIR" inspect "$1"
  expect_rc 0
  expect_out_line "State backend: +rocksdb"
  expect_out_has "rocksdb native"
  expect_out_has "shared file: $1/shared/"
  shared_refs "$1" "$tmp/refs"
  [[ -s "$tmp/refs" ]] || fail "checkpoint $snapshot_id of '$1' references no shared file"
  if grep -qvF "$1/shared/" "$tmp/refs"; then
    fail "shared files outside '$1/shared/': $(grep -vF "$1/shared/" "$tmp/refs" | head -n 3 | tr '\n' ' ')"
  fi
  storage_files "$1/shared" "$tmp/stored"
  local missing
  missing="$(comm -23 "$tmp/refs" "$tmp/stored")"
  [[ -z "$missing" ]] || fail "checkpoint $snapshot_id references shared files not stored at that size: $missing"
}

# incremental_rounds COUNT RATE P...: number_sum --count COUNT --rate RATE on weir-runtime
# with rocksdb and incremental checkpoints every 100 ms into $cpdir:
#   - one kill -9 round per P (crash_round, 0.8-1.6 s after its first complete checkpoint),
#     the first fresh, the others restored from the job's checkpoint directory; after
#     each, expect_shared_stored;
#   - a run at p=2 restored from it, whose newest checkpoint is sampled for 3 s, cancelled
#     with its checkpoint retained: its shared/ ends up holding every file the retained
#     checkpoint references, some written by earlier (subsumed) checkpoints, and none of
#     the files only the sampled earlier checkpoints referenced;
#   - the last run restores the retained checkpoint at p=1 and runs to the end: the
#     committed output is exact, nothing of its own is left in $cpdir, and the checkpoint
#     it restored from (not claimed) is untouched and verifies.
incremental_rounds() {
  local count="$1" rate="$2"
  shift 2
  local out="$tmp/out"
  conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir"
    -D state.backend.type=rocksdb -D execution.checkpointing.incremental=true
    -D "state.backend.rocksdb.localdir=$tmp/rocksdb-local")
  crash_conf=("${conf[@]}")
  crash_after="0.8 1.6"
  crash_after_checkpoint=1
  restore_from=""
  job_finished=0
  local p
  for p in "$@"; do
    check "p=$p on rocksdb, incremental${restore_from:+, restored from the checkpoint directory of the job before}, then kill -9"
    crash_round "$p" "$NUMBER_SUM" --count "$count" --rate "$rate" --output "$out"
    ((job_finished)) && fail "the job ended before the kill: raise --count"
    pass

    check "after the kill: the newest checkpoint's shared files are stored in $restore_from/shared/"
    expect_shared_stored "$restore_from"
    pass
  done

  check "p=2, restored, cancelled: shared files of subsumed checkpoints go unless the retained one references them"
  local port
  port="$(free_port)"
  start_runtime "$port" "${conf[@]}" -D execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION
  submit_job "$port" -p 2 -s "$restore_from" "$NUMBER_SUM" --count "$count" --rate "$rate" --output "$out"
  jobdir="$cpdir/$job"
  wait_until 30 checkpoints_at_least "$port" "$job" completed 1 || fail "no checkpoint of job $job completed within 30 s"
  # The shared files of the newest checkpoint, sampled for 3 s: "<id> <path> <size>" lines.
  : >"$tmp/samples"
  local i reused_max=0
  # (A sample may miss: the newest checkpoint can be subsumed while it is resolved.)
  for ((i = 0; i < 12; i++)); do
    if "$WEIR" inspect --output json "$jobdir" >"$tmp/sample.json" 2>/dev/null &&
      _parse_refs "$tmp/sample.json" "$tmp/sample"; then
      sed "s/^/$snapshot_id /" "$tmp/sample" >>"$tmp/samples"
      reused_max=$((snapshot_reused > reused_max ? snapshot_reused : reused_max))
    fi
    sleep 0.25
  done
  run "$WEIR" cancel -m "localhost:$port" "$job"
  expect_rc 0
  wait_until 30 job_state_is "$port" "$job" CANCELED || fail "job $job was not CANCELED"
  # A checkpoint being written when the job was cancelled still completes (and subsumes
  # the one before): take the newest once it stays the same.
  wait_until 20 _newest_settled "$jobdir" || fail "the newest checkpoint of the cancelled job did not settle"
  shared_refs "$jobdir" "$tmp/final"
  local final_id="$snapshot_id"
  # One checkpoint is retained: every sampled one before final_id is subsumed, and what only
  # they referenced must go; what final_id references must stay.
  awk -v id="$final_id" '$1 < id { print $2 " " $3 }' "$tmp/samples" | sort -u >"$tmp/earlier"
  comm -23 "$tmp/earlier" "$tmp/final" >"$tmp/subsumed"
  if ! wait_until 20 _subsumed_gone "$jobdir"; then
    fail "'$jobdir/shared' after checkpoint $final_id: files only subsumed checkpoints referenced are left:" \
      "$(comm -12 "$tmp/subsumed" "$tmp/stored" | head -n 3 | tr '\n' ' '); referenced ones missing:" \
      "$(comm -23 "$tmp/final" "$tmp/stored" | head -n 3 | tr '\n' ' ')"
  fi
  cp "$tmp/stored" "$tmp/kept"
  if ! python3 - "$tmp/samples" "$tmp/final" "$final_id" "$reused_max" >"$tmp/verdict" <<'EOF'; then
import sys
final_id = int(sys.argv[3])
final = {line.split()[0] for line in open(sys.argv[2])}
earlier, ids = set(), set()
for line in open(sys.argv[1]):
    cid, path, size = line.split()
    if int(cid) < final_id:
        earlier.add(path)
        ids.add(int(cid))
if len(ids) < 2:
    print(f"only {len(ids)} checkpoints before {final_id} were sampled")
    sys.exit(1)
# One checkpoint is retained: every one before final_id is subsumed. What only they
# referenced is gone, what final_id references is kept (checked above: shared/ holds all
# files of final_id and none of those only earlier ones had).
gone = earlier - final
if not gone:
    print(f"checkpoints {sorted(ids)} referenced no file that checkpoint {final_id} does not: nothing was deleted")
    sys.exit(1)
reused = int(sys.argv[4])
if reused <= 0:
    print(f"no sampled checkpoint references a shared file an earlier one wrote: not incremental")
    sys.exit(1)
print(f"checkpoints {min(ids)}..{final_id}: {len(gone)} shared files of sampled ones deleted,"
      f" {len(earlier & final)} kept for {final_id}; sampled ones reused up to {reused} bytes of earlier files")
EOF
    fail "$(cat "$tmp/verdict")"
  fi
  echo "  note: $(cat "$tmp/verdict")"
  # Files no sampled checkpoint referenced: a snapshot cut off by the cancellation deletes
  # the files it had completed (SharedFileTracker); a file whose own upload was cut off
  # midway may still be left, so this is a note, not a failure.
  local orphans
  orphans="$(comm -23 "$tmp/kept" "$tmp/final" | wc -l)"
  ((orphans == 0)) || echo "  note: $orphans shared files that checkpoint $final_id does not reference are left"
  pass
  restore_from="$jobdir"
  local restored_job="$job"

  check "the last run restores the retained checkpoint at p=1 and runs to the end (embedded, attached)"
  run "$WEIR" run -p 1 -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" \
    "$NUMBER_SUM" --count "$count" --output "$out"
  expect_rc 0
  expect_out_has "has finished."
  expect_err_has "restoring from the newest complete checkpoint '$restore_from/chk-"
  local last_job
  last_job="$(submitted_job)"
  [[ -n "$last_job" ]] || fail "no job id printed"
  pass

  check "the committed output holds every n in 1..$count exactly once with correct running sums"
  expect_number_sum_committed "$out" "$count"
  pass

  check "nothing of the finished job is left; the checkpoint it restored from (not claimed) is untouched"
  storage_files "$cpdir/$last_job" "$tmp/last"
  [[ ! -s "$tmp/last" ]] || fail "the finished job left $(wc -l <"$tmp/last") files: $(head -n 3 "$tmp/last" | tr '\n' ' ')"
  _shared_is "$jobdir" "$tmp/kept" ||
    fail "'$jobdir/shared' changed: $(diff "$tmp/kept" "$tmp/stored" | head -n 4 | tr '\n' ' ')"
  run "$WEIR" inspect --verify "$restore_from"
  expect_rc 0
  expect_out_has "all checksums match"
  pass
}

_newest_chk() { "$WEIR" inspect "$1" 2>/dev/null | sed -n 's/^Snapshot: *//p'; }
_newest_settled() {
  local a
  a="$(_newest_chk "$1")"
  sleep 1
  [[ -n "$a" && "$a" == "$(_newest_chk "$1")" ]]
}
# _shared_is JOBDIR FILE: JOBDIR/shared holds exactly the files of FILE (its listing in $tmp/stored).
_shared_is() {
  storage_files "$1/shared" "$tmp/stored"
  cmp -s "$tmp/stored" "$2"
}
# _subsumed_gone JOBDIR: JOBDIR/shared holds every file of $tmp/final and none of $tmp/subsumed.
_subsumed_gone() {
  storage_files "$1/shared" "$tmp/stored"
  [[ -z "$(comm -12 "$tmp/subsumed" "$tmp/stored")" && -z "$(comm -23 "$tmp/final" "$tmp/stored")" ]]
}
