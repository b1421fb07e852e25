#!/usr/bin/env bash
# End-to-end: keyed state larger than the caches near a core, through the operator's
# cycles. Above PrefetchStateBytes (2.5 times a core's L2) a keyed operator reads records
# ahead and prefetches their state; below it, it does not. The sizes follow this machine's
# L2: with 1 MB, number_sum with 210 000 keys holds 4.2 MB of sums at p=1 (read ahead) and
# 2.1 MB a subtask at p=2 (not), so its restores cross the threshold both ways: p=1, stop
# with a savepoint, p=2 from it, stop again, p=1 from that (a restore of a restored job),
# kill -9, then p=3 from the newest checkpoint to the end, all into one output directory.
# word_count over 6 MB of Zipf text from 100 000 words (entries of 76 bytes, prefetched in
# two steps) goes p=1, kill -9, p=2, stop, p=1. Both outputs must hold every record
# exactly once, compared line by line.
#
#   bash tests/e2e/large_state.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# PrefetchStateBytes: 2.5 times a core's L2 as sysconf reports it, 1 MB when it does not.
l2="$(getconf LEVEL2_CACHE_SIZE 2>/dev/null || true)"
[[ "$l2" =~ ^[1-9][0-9]*$ ]] || l2=$((1 << 20))
threshold=$((l2 * 5 / 2))
# number_sum's entries take 20 bytes (a 16-byte entry and its tag): 1.6 times the threshold
# at p=1, 0.8 times it a subtask at p=2.
keys=$((threshold * 16 / 10 / 20))
count=$((keys * 6))
rate=$((keys / 2))
# word_count's text and words grow with the L2 too (by whole MB, at most 4 times).
scale=$(((l2 + (1 << 19)) >> 20))
((scale >= 1)) || scale=1
((scale <= 4)) || scale=4
cpdir="$tmp/checkpoints"
sp="$tmp/savepoints"
out="$tmp/out"
conf=(-D execution.checkpointing.interval=200ms -D "execution.checkpointing.dir=$cpdir")

# stop_with_savepoint PORT: stops $job with a savepoint into $sp; sets stopped to its path.
stop_with_savepoint() {
  run "$WEIR" stop -m "localhost:$1" -p "$sp" "$job"
  expect_rc 0
  stopped="$(savepoint_path)"
  [[ -f "$stopped/_metadata" ]] || fail "no _metadata in '$stopped'"
  wait_until 30 job_state_is "$1" "$job" FINISHED || fail "job $job is not FINISHED after stop"
}

# records_committed_at_least N: the committed part files of $out hold at least N lines.
records_committed_at_least() {
  (($(cat "$out"/part-* 2>/dev/null | wc -l) >= $1))
}

port="$(free_port)"
check "number_sum --keys $keys runs at p=1 until its state is past the threshold, then stops with a savepoint"
start_runtime "$port" "${conf[@]}"
submit_job "$port" -p 1 "$NUMBER_SUM" --count "$count" --keys "$keys" --rate "$rate" --output "$out"
# Every key has a sum once `keys` records are in; committed output lags by a checkpoint.
wait_until 60 records_committed_at_least $((keys + keys / 2)) || fail "fewer than $((keys + keys / 2)) records committed"
stop_with_savepoint "$port"
pass

check "restored at p=2 (half the state a subtask), it runs on and stops with a savepoint again"
submit_job "$port" -p 2 -s "$stopped" "$NUMBER_SUM" --count "$count" --keys "$keys" --rate "$rate" --output "$out"
sleep 2
stop_with_savepoint "$port"
pass

check "the restored job's savepoint restored at p=1 (the whole state again), then kill -9"
submit_job "$port" -p 1 -s "$stopped" "$NUMBER_SUM" --count "$count" --keys "$keys" --rate "$rate" --output "$out"
wait_until 30 checkpointed_or_finished "$job" || fail "no complete checkpoint of job $job within 30 s"
sleep "$(python3 -c "import random; print(round(random.uniform(0.5, 1.5), 2))")"
kill -9 "$RUNTIME_PID"
wait "$RUNTIME_PID" 2>/dev/null || true
! finished_in_log "$job" || fail "the job finished before the kill: raise count"
"$WEIR" inspect "$cpdir/$job" >/dev/null 2>&1 || fail "no complete checkpoint in '$cpdir/$job'"
pass

check "restored at p=3 from the newest checkpoint, it runs to the end"
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" "${conf[@]}" -s "$cpdir/$job" \
  "$NUMBER_SUM" --count "$count" --keys "$keys" --output "$out"
expect_rc 0
expect_out_has "has finished."
pass

check "the committed output holds every n in 1..$count exactly once with its key's running sum"
expected_number_sum "$count" "$tmp/expected-sums" "$keys"
expect_committed "$tmp/expected-sums" "$out" "number_sum --keys $keys"
pass

# word_count: Zipf text of 100 000 words per MB of L2, state entries of 76 bytes.
text="$tmp/text"
out="$tmp/out-words"
check "word_count over Zipf text of $((scale * 100000)) words: p=1, kill -9, p=2, stop with a savepoint, p=1 to the end"
run python3 "$REPO_DIR/tests/bench/vs-flink/zipf_text.py" "$text" --mb $((scale * 6)) --files 2 --vocabulary $((scale * 100000))
expect_rc 0
port="$(free_port)"
start_runtime "$port" "${conf[@]}"
# About 11 300 lines a MB: at this rate p=1 reads them all in 6.8 s, so the kill (1 to 2 s after
# the first checkpoint) finds it running also when a loaded machine is slow to checkpoint.
submit_job "$port" -p 1 "$WORD_COUNT" --input "$text" --output "$out" --rate $((scale * 10000))
wait_until 30 checkpointed_or_finished "$job" || fail "no complete checkpoint of job $job within 30 s"
sleep "$(python3 -c "import random; print(round(random.uniform(1.0, 2.0), 2))")"
kill -9 "$RUNTIME_PID"
wait "$RUNTIME_PID" 2>/dev/null || true
! finished_in_log "$job" || fail "word_count finished before the kill: lower --rate"
"$WEIR" inspect "$cpdir/$job" >/dev/null 2>&1 || fail "no complete checkpoint in '$cpdir/$job'"
port="$(free_port)"
start_runtime "$port" "${conf[@]}"
# Each source subtask at a quarter of p=1's rate: what the kill left (more than half of the
# lines) takes 7 s or more, so the job is still running when it is stopped.
submit_job "$port" -p 2 -s "$cpdir/$job" "$WORD_COUNT" --input "$text" --output "$out" --rate $((scale * 2500))
sleep 1.5
! finished_in_log "$job" || fail "word_count at p=2 finished before the stop: lower --rate"
stop_with_savepoint "$port"
run "$WEIR" run -p 1 -D "rest.port=$(free_port)" "${conf[@]}" -s "$stopped" "$WORD_COUNT" --input "$text" --output "$out"
expect_rc 0
expect_out_has "has finished."
pass

check "every word occurrence was counted exactly once"
expected_word_counts "$text" "$tmp/expected-words"
expect_committed "$tmp/expected-words" "$out" "word_count"
pass

finish
