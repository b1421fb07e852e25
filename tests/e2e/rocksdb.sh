#!/usr/bin/env bash
# End-to-end: the rocksdb state backend with incremental checkpoints. number_sum runs on
# weir-runtime with -D state.backend.type=rocksdb -D execution.checkpointing.incremental=true,
# the runtime is killed with SIGKILL at random moments and the job resubmitted from its
# newest checkpoint at p=2/1/3 (native incremental state restored, rescaled), with the
# backend's value cache at its default and at one entry (every write of the other key
# writes the one before into RocksDB); the committed output must hold every n exactly once. weir inspect shows the backend, the
# format and the shared files. A job switches backends rocksdb -> hashmap -> rocksdb
# through canonical savepoints with exact output, and a native savepoint restored into
# the hashmap backend is refused at submission (exit 1, naming format and backend).
# `weir checkpoint --full` on an incremental job uploads all of its state; a CONFIGURED
# one is incremental. With more keys than a core's caches hold, records read ahead and
# their cached values prefetched, the output is exact too.
#
#   bash tests/e2e/rocksdb.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

if [[ ! -e "$BUILD_DIR/lib/libweir_rocksdb.so" ]]; then
  echo "FAIL: $E2E_NAME: '$BUILD_DIR/lib/libweir_rocksdb.so' was not built (ninja -C $BUILD_DIR weir_rocksdb)" >&2
  exit 1
fi

count=120000
rate=8000
cpdir="$tmp/checkpoints"
localdir="$tmp/rocksdb-local"
out="$tmp/out"
# A checkpoint's statistics are read after it completes: with one every 100 ms, the
# default history of 10 can drop it within a second on a loaded machine.
conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir"
  -D "state.backend.rocksdb.localdir=$localdir" -D web.checkpoints.history=1000)
rocks=(-D state.backend.type=rocksdb -D execution.checkpointing.incremental=true)
restore_from=""

# crash_round P CACHE: a fresh runtime, number_sum submitted at parallelism P on rocksdb
# with value-cache.size CACHE (restored from $restore_from when set), SIGKILL 0.4 to 1.2 s
# into the run; sets restore_from to the job's checkpoint directory once it holds a
# complete checkpoint.
job_finished=0
crash_round() {
  local p="$1" cache="$2" port job
  port="$(free_port)"
  start_runtime "$port" "${conf[@]}"
  local args=(run -d -p "$p" -m "localhost:$port" "${rocks[@]}" -D "state.backend.rocksdb.value-cache.size=$cache")
  [[ -n "$restore_from" ]] && args+=(-s "$restore_from")
  run "$WEIR" "${args[@]}" "$NUMBER_SUM" --count "$count" --rate "$rate" --output "$out"
  expect_rc 0
  job="$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]\{32\}\)$/\1/p' "$OUT_FILE")"
  [[ -n "$job" ]] || fail "no job id printed"
  sleep "$(python3 -c "import random; print(round(random.uniform(0.4, 1.2), 2))")"
  kill -9 "$RUNTIME_PID"
  wait "$RUNTIME_PID" 2>/dev/null || true
  if finished_in_log "$job"; then
    job_finished=1
    return 0
  fi
  if compgen -G "$cpdir/$job/chk-*/_metadata" >/dev/null; then
    restore_from="$cpdir/$job"
  elif checkpointed_in_log "$job"; then
    fail "job $job completed checkpoints, but '$cpdir/$job' holds no complete one"
  fi
  [[ -n "$restore_from" ]] || fail "no complete checkpoint yet"
}

parallelism=(2 2 1 3 3 2)
caches=(16mb 1 1 16mb 1 16mb)
for ((k = 0; k < ${#parallelism[@]}; k++)); do
  p="${parallelism[$k]}"
  check "rocksdb round $((k + 1)) at p=$p, value cache ${caches[$k]}${restore_from:+, restored from the newest checkpoint}, then kill -9"
  crash_round "$p" "${caches[$k]}"
  pass
  ((job_finished)) && break
done

if ((!job_finished)); then
  check "weir inspect shows the rocksdb backend, the native format and the shared files of a checkpoint"
  # The newest complete one: the kill may have left a newer chk-<n> without _metadata.
  latest="$(dirname "$(ls -d "$restore_from"/chk-*/_metadata | sort -t- -k2,2n | tail -n 1)")"
  run "$WEIR" inspect "$latest"
  expect_rc 0
  expect_out_line "State backend: +rocksdb"
  expect_out_has "rocksdb native"
  expect_out_has "shared file: "
  expect_out_has "$restore_from/shared/"
  run "$WEIR" inspect --output json "$latest"
  expect_rc 0
  python3 - "$OUT_FILE" <<'EOF' || fail "the JSON does not list the shared files of the native keyed state"
import json, os, sys
doc = json.load(open(sys.argv[1]))
assert doc["stateBackend"] == "rocksdb", doc["stateBackend"]
keyed = [k for op in doc["operators"] for s in op["subtasks"] for k in s["keyed"]]
native = [k for k in keyed if k["format"] == "native"]
assert native and all(k["backend"] == "rocksdb" for k in native), keyed
files = [f for k in native for f in k["sharedFiles"]]
assert files and all(os.path.exists(f["path"]) for f in files), files
EOF
  pass

  check "the rocksdb checkpoint restored into the hashmap backend is refused (exit 1), naming the way out"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" -D state.backend.type=hashmap \
    -s "$restore_from" "$NUMBER_SUM" --count "$count" --output "$out"
  expect_rc 1
  expect_err_has "the checkpoint '"
  expect_err_has "native format of the 'rocksdb' state backend"
  expect_err_has "weir savepoint --type canonical"
  pass

  check "the last run, restored from the newest checkpoint at p=2 through two injected failures, runs to the end"
  # (the runtimes killed before left their working directories; this run must not.)
  # Each failure restores in the process from its newest checkpoint, whose shared
  # files the later incremental checkpoints go on referencing.
  ls "$localdir" | sort >"$tmp/local-before"
  attempts_before="$(ls "$out" | sed -n 's/^part-\([0-9a-f]*\)-.*/\1/p' | sort -u | wc -l)"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" "${rocks[@]}" -s "$restore_from" \
    -D restart-strategy.type=fixed-delay -D restart-strategy.fixed-delay.attempts=5 \
    -D restart-strategy.fixed-delay.delay=10ms \
    "$NUMBER_SUM" --count "$count" --rate 40000 --fail-at "$((count - 30000)),$((count - 10000))" --output "$out"
  expect_rc 0
  expect_out_has "has finished."
  attempts="$(($(ls "$out" | sed -n 's/^part-\([0-9a-f]*\)-.*/\1/p' | sort -u | wc -l) - attempts_before))"
  ((attempts >= 3)) || fail "this run committed files from $attempts attempt(s): the injected failures did not restart it"
  ls "$localdir" | sort >"$tmp/local-after"
  cmp -s "$tmp/local-before" "$tmp/local-after" ||
    fail "the job left rocksdb working directories behind: $(comm -13 "$tmp/local-before" "$tmp/local-after")"
  pass
fi

if ((!job_finished)); then
  check "restore modes: NO_CLAIM leaves the restored checkpoint alone; CLAIM takes it over and deletes it"
  newest="$(dirname "$(ls -d "$restore_from"/chk-*/_metadata | sort -t- -k2,2n | tail -n 1)")"
  shared_before="$(ls "$restore_from/shared" | wc -l)"
  # The last run restored it in NO_CLAIM mode (the default) and ended: it is all still there.
  [[ -f "$newest/_metadata" ]] || fail "'$newest' was deleted after a NO_CLAIM restore"
  ((shared_before > 0)) || fail "no shared files in '$restore_from/shared'"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" "${rocks[@]}" -s "$newest" -cm claim \
    "$NUMBER_SUM" --count "$count" --output "$tmp/out-claim"
  expect_rc 0
  expect_out_has "has finished."
  # Claimed, it was subsumed by the job's own checkpoints and deleted with its files that
  # no retained checkpoint references (the job ended: none).
  [[ ! -e "$newest" ]] || fail "'$newest' is still there after a CLAIM restore and the end of the job"
  shared_after="$(ls "$restore_from/shared" | wc -l)"
  echo "  shared files of the restored job: $shared_before before, $shared_after after the claiming run"
  ((shared_after < shared_before)) || fail "no shared file of the claimed checkpoint was deleted"
  pass
fi

check "the committed output holds every n in 1..$count exactly once with correct running sums"
expected_number_sum "$count" "$tmp/expected"
sort -t, -k1,1n "$tmp/expected" >"$tmp/expected.sorted"
cat "$out"/part-* | sort -t, -k1,1n >"$tmp/actual"
if ! cmp -s "$tmp/actual" "$tmp/expected.sorted"; then
  LAST_CMD="diff expected actual"
  fail "output differs: $(diff "$tmp/expected.sorted" "$tmp/actual" | head -n 5) ($(wc -l <"$tmp/actual") lines)"
fi
pass

# Backend switches through canonical savepoints, on one runtime, into one output.
port="$(free_port)"
start_runtime "$port" "${conf[@]}"
m=(-m "localhost:$port")
out="$tmp/out-switch"
count=40000
sp="$tmp/savepoints"

check "rocksdb -> canonical savepoint (weir stop --type canonical)"
submit_job "$port" -p 2 "${rocks[@]}" "$NUMBER_SUM" --count "$count" --rate 5000 --output "$out"
sleep 0.6
run "$WEIR" stop "${m[@]}" --type canonical -p "$sp" "$job"
expect_rc 0
sp1="$(savepoint_path)"
[[ -d "$sp1" ]] || fail "no savepoint directory printed"
wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop"
run "$WEIR" inspect "$sp1"
expect_out_line "Format: +canonical"
expect_out_line "State backend: +rocksdb"
pass

check "restored into hashmap at p=3, then a canonical savepoint again"
submit_job "$port" -p 3 -D state.backend.type=hashmap -s "$sp1" "$NUMBER_SUM" --count "$count" --rate 5000 \
  --output "$out"
sleep 0.6
run "$WEIR" stop "${m[@]}" -p "$sp" "$job"
expect_rc 0
sp2="$(savepoint_path)"
wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop"
pass

check "restored into rocksdb at p=1, it runs to the end with exact output"
submit_job "$port" -p 1 "${rocks[@]}" -s "$sp2" "$NUMBER_SUM" --count "$count" --output "$out"
wait_until 60 job_state_is "$port" "$job" FINISHED || fail "job $job did not finish"
expected_number_sum "$count" "$tmp/expected2"
sort -t, -k1,1n "$tmp/expected2" >"$tmp/expected2.sorted"
cat "$out"/part-* | sort -t, -k1,1n >"$tmp/actual2"
if ! cmp -s "$tmp/actual2" "$tmp/expected2.sorted"; then
  LAST_CMD="diff expected actual"
  fail "output differs: $(diff "$tmp/expected2.sorted" "$tmp/actual2" | head -n 5) ($(wc -l <"$tmp/actual2") lines)"
fi
pass

check "a native rocksdb savepoint restored into the hashmap backend is refused at submission (exit 1)"
submit_job "$port" -p 2 "${rocks[@]}" "$NUMBER_SUM" --count 0 --rate 5000 --sink discard
sleep 0.5
run "$WEIR" savepoint "${m[@]}" --type native "$job" "$sp"
expect_rc 0
native="$(savepoint_path)"
run "$WEIR" inspect "$native"
expect_out_line "Format: +native"
expect_out_has "rocksdb native"
expect_out_lacks "shared file: "
run "$WEIR" cancel "${m[@]}" "$job"
expect_rc 0
run "$WEIR" run -d "${m[@]}" -D state.backend.type=hashmap -s "$native" "$NUMBER_SUM" --count 10 --sink discard
expect_rc 1
expect_err_has "native format"
expect_err_has "'rocksdb' state backend"
expect_err_has "hashmap"
expect_out_lacks "Job has been submitted"
pass

check "the native savepoint restores into rocksdb"
run "$WEIR" run -d "${m[@]}" "${rocks[@]}" -s "$native" "$NUMBER_SUM" --count 10 --sink discard
expect_rc 0
pass

# checkpoint_sizes CID: "<state_size> <checkpointed_size>" of checkpoint CID of $job.
checkpoint_sizes() {
  run_http "http://localhost:$port/jobs/$job/checkpoints/details/$1"
  json_get 'd["state_size"], d["checkpointed_size"]' | tr -d '(),'
}
check "weir checkpoint on an incremental rocksdb job: CONFIGURED is incremental, --full uploads all state"
submit_job "$port" -p 1 "${rocks[@]}" "$NUMBER_SUM" --count 0 --rate 20000 --keys 20000 --sink discard
wait_until 30 checkpoints_at_least "$port" "$job" completed 3 || fail "no periodic checkpoints"
run "$WEIR" checkpoint "${m[@]}" --full "$job"
expect_rc 0
expect_out_line "Checkpoint\\(FULL\\) [0-9]+ for job $job completed\\."
full_id="$(sed -n 's/^Checkpoint(FULL) \([0-9]*\) for job.*/\1/p' "$OUT_FILE")"
read -r full_state full_written <<<"$(checkpoint_sizes "$full_id")"
[[ -n "$full_written" && "$full_written" -gt 0 ]] || fail "no sizes for checkpoint $full_id"
[[ "$full_written" == "$full_state" ]] ||
  fail "the FULL checkpoint $full_id wrote $full_written of $full_state bytes: it reused earlier files"
# A compaction rewrites the whole key range now and then, so one incremental checkpoint
# may upload everything: of a few, at least one uploads less than its state.
incremental=""
for _ in 1 2 3 4 5; do
  run "$WEIR" checkpoint "${m[@]}" --output json "$job"
  expect_rc 0
  expect_out_json
  [[ "$(json_get 'd["checkpointType"]')" == CONFIGURED ]] || fail "checkpointType is not CONFIGURED"
  conf_id="$(json_get 'd["checkpointId"]')"
  ((conf_id > full_id)) || fail "checkpoint $conf_id is not newer than $full_id"
  read -r conf_state conf_written <<<"$(checkpoint_sizes "$conf_id")"
  if ((conf_written < conf_state)); then
    incremental="$conf_id"
    break
  fi
done
[[ -n "$incremental" ]] || fail "no CONFIGURED checkpoint was incremental (the last wrote $conf_written of $conf_state bytes)"
run "$WEIR" cancel "${m[@]}" "$job"
expect_rc 0
pass

# Above PrefetchStateBytes (2.5 times a core's L2) of cached values the keyed operator
# reads records ahead and the backend prefetches their cached values by the keys' bytes.
l2="$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || true)"
[[ "$l2" =~ ^[1-9][0-9]*$ ]] || l2=$((1 << 20))
many=$((l2 * 5 / 2 * 2 / 50))  # twice that: a cached number key takes a 44-byte slot, its array at most 7/8 full
check "number_sum --keys $many on rocksdb, its cached values prefetched: every running sum committed exactly"
run "$WEIR" run -p 1 -D "rest.port=$(free_port)" "${rocks[@]}" "${conf[@]}" "$NUMBER_SUM" --count $((many * 3)) \
  --keys "$many" --output "$tmp/out-many"
expect_rc 0
expected_number_sum $((many * 3)) "$tmp/expected-many" "$many"
expect_committed "$tmp/expected-many" "$tmp/out-many" "number_sum --keys $many"
pass

finish
