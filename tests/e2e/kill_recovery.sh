#!/usr/bin/env bash
# End-to-end exactly-once through crashes: number_sum runs on weir-runtime with
# checkpoints every 100 ms; the runtime is killed with SIGKILL at random moments
# (21 times), restarted, and the job resubmitted with -s <the job's checkpoint
# directory> (weir takes its newest complete chk-<n>), at p=1 or p=3 in turn, so
# restores at the same and at another parallelism alternate. The committed output
# must hold every n exactly once with the right running sums. Then the same with
# word_count's parallel file source (its splits move with the state) at p=1/2/3.
#
#   bash tests/e2e/kill_recovery.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

count=300000
rate=8000
kills=21
cpdir="$tmp/checkpoints"
out="$tmp/out"
conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
crash_conf=("${conf[@]}")
restore_from=""
job_finished=0
restores=0  # runs restored from the newest retained checkpoint (rescaled ones among them)

for ((k = 1; k <= kills; k++)); do
  # p: 3, 3, 1, 3, 3, 1, ...: same-parallelism and rescaled restores (3 -> 1, 1 -> 3).
  p=$((k % 3 == 0 ? 1 : 3))
  check "round $k at p=$p${restore_from:+, restored from the newest checkpoint}, then kill -9"
  [[ -z "$restore_from" ]] || ((++restores))
  crash_round "$p" "$NUMBER_SUM" --count "$count" --rate "$rate" --output "$out"
  pass
  ((job_finished)) && break
done

check "the last run, restored from the newest checkpoint, runs to the end (embedded, attached)"
((!job_finished)) || fail "the bounded job finished during the kill rounds: raise count so every round restores"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" \
  "$NUMBER_SUM" --count "$count" --output "$out"
expect_rc 0
expect_out_has "has finished."
expect_err_has "restoring from the newest complete checkpoint"
((++restores))
pass

check "at least 20 runs were restored from the newest retained checkpoint"
echo "  restores: $restores"
((restores >= 20)) || fail "only $restores restores"
pass

check "the committed output holds every n in 1..$count exactly once with correct running sums"
expect_number_sum_committed "$out" "$count"
pass

# word_count: a throttled parallel file source whose splits (file, offset) are state.
in="$tmp/text"
out="$tmp/out-words"
mkdir -p "$in"
for i in 1 2 3 4 5; do make_text "$in" "f$i.txt" 8000 "$((20 + i))"; done
restore_from=""
job_finished=0
parallelism=(2 3 1 3 2)
for ((k = 0; k < ${#parallelism[@]}; k++)); do
  p="${parallelism[$k]}"
  check "word_count round $((k + 1)) at p=$p${restore_from:+, restored from the newest checkpoint}, then kill -9"
  crash_round "$p" "$WORD_COUNT" --input "$in" --output "$out" --rate 1500
  pass
  ((job_finished)) && break
done

if ((!job_finished)); then
  check "word_count restored from the newest checkpoint runs to the end"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" "$WORD_COUNT" --input "$in" --output "$out"
  expect_rc 0
  expect_out_has "has finished."
  pass
fi

check "every word occurrence was counted exactly once"
expected_word_counts "$in" "$tmp/expected-words"
expect_committed "$tmp/expected-words" "$out" "word_count"
pass

finish
