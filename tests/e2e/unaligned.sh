#!/usr/bin/env bash
# End-to-end unaligned checkpoints (FLIP-76) and the aligned-checkpoint timeout, under
# backpressure made on demand: number_sum --sink-rate R throttles each sink subtask far
# below the source, so a backlog of in-flight data stands in every channel.
#   - unaligned checkpoints complete while the backlog stands, with the in-flight data in
#     them (persisted_data > 0, UNALIGNED_CHECKPOINT, per-subtask details over REST,
#     weir inspect shows it);
#   - exactly-once through kill -9 at p=1 and p=3 with restores from unaligned
#     checkpoints that hold in-flight data, restored at another parallelism;
#   - the timeout switch: under backpressure checkpoints become unaligned, without it
#     they stay aligned; both restore, also with unaligned checkpoints turned off;
#   - savepoints stay aligned; bad settings are refused naming the key.
#
#   bash tests/e2e/unaligned.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

NUMBER_SUM="$BUILD_DIR/examples/number_sum.so"
[[ -e "$NUMBER_SUM" ]] || fail "'$NUMBER_SUM' was not built (ninja -C $BUILD_DIR number_sum)"

cpdir="$tmp/checkpoints"
# Small buffers keep the backlog (and so the aligned checkpoints of savepoints) short. A
# long statistics history keeps a checkpoint's details while a loaded machine reads them;
# checkpoints are retained on cancellation, for weir inspect after a cancel.
unaligned=(-D execution.checkpointing.interval=200ms -D "execution.checkpointing.dir=$cpdir"
  -D execution.checkpointing.unaligned.enabled=true -D taskmanager.memory.segment-size=4kb
  -D web.checkpoints.history=1000
  -D execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION)

# latest_json PORT JOBID EXPR: EXPR (python, over the latest completed checkpoint `c`) of
# GET /jobs/JOBID/checkpoints.
latest_json() {
  curl -sf --max-time 5 "http://localhost:$1/jobs/$2/checkpoints" |
    python3 -c "import json, sys; c = json.load(sys.stdin)['latest']['completed']; print($3)" 2>/dev/null || true
}
unaligned_completed() { [[ "$(latest_json "$1" "$2" "c['checkpoint_type'] if c else ''")" == UNALIGNED_CHECKPOINT ]]; }

port="$(free_port)"
start_runtime "$port" "${unaligned[@]}"

check "under a throttled sink, unaligned checkpoints complete while the backlog stands, with its in-flight data"
out="$tmp/out-backlog"
submit_job "$port" -p 2 "$NUMBER_SUM" --count 0 --keys 16 --sink-rate 500 --output "$out"
wait_until 30 unaligned_completed "$port" "$job" || fail "no unaligned checkpoint completed within 30 s"
wait_until 30 checkpoints_at_least "$port" "$job" completed 3 || fail "fewer than 3 checkpoints completed"
persisted="$(latest_json "$port" "$job" "c['persisted_data']")"
((persisted > 0)) || fail "the latest unaligned checkpoint persisted no in-flight data ($persisted)"
duration="$(latest_json "$port" "$job" "c['end_to_end_duration']")"
echo "  latest checkpoint: ${duration} ms, ${persisted} bytes of in-flight data"
# The backlog stands: the source is backpressured by the throttled sink.
run_http "http://localhost:$port/jobs/$job"
src="$(json_get "[v['id'] for v in d['vertices'] if 'Sequence' in v['name']][0]")"
run_http "http://localhost:$port/jobs/$job/vertices/$src/backpressure"
sleep 1.2
run_http "http://localhost:$port/jobs/$job/vertices/$src/backpressure"
ratio="$(json_get "max(s['backpressureLevel'] != 'ok' or s['ratio'] > 0 for s in d['subtasks'])")"
[[ "$ratio" == True ]] || fail "the source is not backpressured: $(cat "$OUT_FILE")"
pass

check "REST: per-subtask checkpoint details name the unaligned subtasks and their persisted data"
id="$(latest_json "$port" "$job" "c['id']")"
run_http "http://localhost:$port/jobs/$job/checkpoints/details/$id"
expect_rc "HTTP 200"
vids="$(json_get "' '.join(sorted(d['tasks']))")"
found=0
for vid in $vids; do
  run_http "http://localhost:$port/jobs/$job/checkpoints/details/$id/subtasks/$vid"
  expect_rc "HTTP 200"
  n="$(json_get "sum(s['alignment']['persisted'] for s in d['subtasks'] if s['status'] == 'completed')")"
  u="$(json_get "all(s['unaligned_checkpoint'] for s in d['subtasks'] if s['status'] == 'completed')")"
  [[ "$u" == True ]] || fail "vertex $vid: a subtask took checkpoint $id aligned"
  ((n > 0)) && found=1
done
((found)) || fail "no vertex of checkpoint $id shows persisted in-flight data"
run_http "http://localhost:$port/jobs/$job/checkpoints/details/$id/subtasks/0123456789abcdef0123456789abcdef"
expect_rc "HTTP 404"
pass

check "weir inspect shows the in-flight data of an unaligned checkpoint"
run "$WEIR" cancel -m "localhost:$port" "$job"
expect_rc 0
run "$WEIR" inspect "$cpdir/$job"
expect_rc 0
expect_out_has "in-flight data:"
pass

# A savepoint aligns through the backlog (as in Flink): taken here without one.
check "savepoints stay aligned while unaligned checkpoints are on"
submit_job "$port" -p 2 "$NUMBER_SUM" --count 0 --keys 16 --rate 5000 --output "$tmp/out-savepoint"
run "$WEIR" savepoint -m "localhost:$port" "$job" "$tmp/savepoints"
expect_rc 0
sp="$(savepoint_path)"
run "$WEIR" inspect "$sp" --output json
expect_rc 0
[[ "$(json_get "sum(s['inFlightData'] for o in d['operators'] for s in o['subtasks'])")" == 0 ]] ||
  fail "the savepoint holds in-flight data"
run "$WEIR" cancel -m "localhost:$port" "$job"
expect_rc 0
pass
kill "$RUNTIME_PID" 2>/dev/null; wait "$RUNTIME_PID" 2>/dev/null || true

check "injected failures under backpressure: restored from unaligned checkpoints, every number once"
out="$tmp/out-failures"
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" "${unaligned[@]}" -D restart-strategy.type=fixed-delay \
  -D restart-strategy.fixed-delay.attempts=10 -D restart-strategy.fixed-delay.delay=0s "$NUMBER_SUM" \
  --count 20000 --keys 16 --rate 20000 --sink-rate 4000 --fail-at 4001,9002,15003 --output "$out"
expect_rc 0
attempts="$(ls "$out" | sed -n 's/^part-\([0-9a-f]*\)-.*/\1/p' | sort -u | wc -l)"
((attempts >= 2)) || fail "the committed files come from $attempts attempt(s): the injected failures did not restart the job"
expected_number_sum 20000 "$tmp/expected-failures" 16
expect_committed "$tmp/expected-failures" "$out" "number_sum through 3 injected failures"
pass

count=60000
# Enough keys that the keyed state outgrows the caches at p=1 and p=2: records are read
# ahead and their state prefetched, and a notice stops a buffer among records read ahead.
keys=40000
out="$tmp/out-kill"
crash_conf=("${unaligned[@]}")
crash_after_checkpoint=1
crash_after="0.2 0.8"
restore_from=""
job_finished=0
in_flight_restores=0
for p in 1 3 2; do
  check "kill -9 round at p=$p under backpressure${restore_from:+, restored from an unaligned checkpoint}"
  if [[ -n "$restore_from" ]] && "$WEIR" inspect "$restore_from" 2>/dev/null | grep -q "in-flight data:"; then
    in_flight_restores=$((in_flight_restores + 1))
  fi
  crash_round "$p" "$NUMBER_SUM" --count "$count" --keys "$keys" --rate 20000 --sink-rate 4000 --output "$out"
  pass
  ((job_finished)) && break
done
if ((!job_finished)); then
  check "the last run, restored at p=2 from an unaligned checkpoint, runs to the end"
  if "$WEIR" inspect "$restore_from" 2>/dev/null | grep -q "in-flight data:"; then in_flight_restores=$((in_flight_restores + 1)); fi
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${unaligned[@]}" -s "$restore_from" "$NUMBER_SUM" \
    --count "$count" --keys "$keys" --sink-rate 1000000 --output "$out"
  expect_rc 0
  pass
fi
check "through the kills every number was committed once, with its running sum per key"
((in_flight_restores > 0)) || fail "no restore was from a checkpoint holding in-flight data"
expected_number_sum "$count" "$tmp/expected-kill" "$keys"
expect_committed "$tmp/expected-kill" "$out" "number_sum through kill -9 with unaligned checkpoints"
pass

timeout_conf=(-D execution.checkpointing.interval=200ms -D "execution.checkpointing.dir=$cpdir"
  -D execution.checkpointing.unaligned.enabled=true -D execution.checkpointing.aligned-checkpoint-timeout=50ms
  -D taskmanager.memory.segment-size=4kb -D execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION)
port="$(free_port)"
start_runtime "$port" "${timeout_conf[@]}"

check "aligned-checkpoint timeout: without backpressure checkpoints stay aligned"
out="$tmp/out-calm"
submit_job "$port" -p 2 "$NUMBER_SUM" --count 0 --keys 16 --rate 2000 --output "$out"
wait_until 30 checkpoints_at_least "$port" "$job" completed 3 || fail "fewer than 3 checkpoints completed"
[[ "$(latest_json "$port" "$job" "c['checkpoint_type']")" == CHECKPOINT ]] ||
  fail "a checkpoint without backpressure was not aligned: $(latest_json "$port" "$job" "c")"
calm_job="$job"
pass

check "aligned-checkpoint timeout: under backpressure checkpoints switch to unaligned"
out="$tmp/out-switch"
submit_job "$port" -p 2 "$NUMBER_SUM" --count 0 --keys 16 --sink-rate 500 --output "$out"
wait_until 30 unaligned_completed "$port" "$job" || fail "no checkpoint switched to unaligned within 30 s"
switch_job="$job"
pass

check "both kinds restore, also with unaligned checkpoints off"
run "$WEIR" cancel -m "localhost:$port" "$switch_job"
expect_rc 0
run "$WEIR" cancel -m "localhost:$port" "$calm_job"
expect_rc 0
for j in "$switch_job" "$calm_job"; do
  run "$WEIR" run -p 3 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=200ms \
    -D "execution.checkpointing.dir=$tmp/restored-$j" -s "$cpdir/$j" "$NUMBER_SUM" --count 1 --keys 16 --sink-rate 1000000 \
    --output "$tmp/out-restored-$j"
  expect_rc 0
  expect_out_has "has finished."
done
pass

check "bad settings: unaligned checkpoints with AT_LEAST_ONCE or max-concurrent 2 are refused naming the key"
run "$WEIR" run -D "rest.port=$(free_port)" -D execution.checkpointing.interval=1s \
  -D execution.checkpointing.unaligned.enabled=true -D execution.checkpointing.mode=AT_LEAST_ONCE "$NUMBER_SUM"
expect_rc 1
expect_err_has "only supported with the EXACTLY_ONCE checkpointing mode"
run "$WEIR" run -D "rest.port=$(free_port)" -D execution.checkpointing.interval=1s \
  -D execution.checkpointing.unaligned.enabled=true -D execution.checkpointing.max-concurrent-checkpoints=2 \
  "$NUMBER_SUM"
expect_rc 1
expect_err_has "execution.checkpointing.max-concurrent-checkpoints"
run "$WEIR" run -D "rest.port=$(free_port)" "$NUMBER_SUM" --sink-rate -1
expect_rc 1
expect_err_has "--sink-rate must be 0 (no limit) or a positive number"
pass

check "sources that end at different times, unaligned, interval 1 h: the job ends with its input, every word once"
# The final checkpoint, requested when the last source ends, goes out unaligned: its
# barriers overtake the words queued at the counting subtasks, which take it before their
# input ends. They need one more checkpoint, at once: not one interval (an hour) later.
in_uneven="$tmp/in-uneven"
mkdir -p "$in_uneven"
make_text "$in_uneven" a.txt 200000 21
make_text "$in_uneven" b.txt 20000 22
make_text "$in_uneven" c.txt 2000 23
E2E_CMD_TIMEOUT=90 run "$WEIR" run -p 2 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=1h \
  -D execution.checkpointing.unaligned.enabled=true -D "execution.checkpointing.dir=file://$tmp/ck-uneven" \
  "$WORD_COUNT" --input "$in_uneven" --output "$tmp/out-uneven"
expect_rc 0 "the job must end by itself, long before the next periodic checkpoint"
expect_out_has "has finished."
expected_word_counts "$in_uneven" "$tmp/expected-uneven"
expect_committed "$tmp/expected-uneven" "$tmp/out-uneven" "word_count over files of 200000, 20000 and 2000 lines"
pass

finish
