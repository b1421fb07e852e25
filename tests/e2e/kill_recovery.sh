#!/usr/bin/env bash
# End-to-end exactly-once through crashes: number_sum runs on weir-runtime with
# checkpoints every 100 ms; the runtime is killed with SIGKILL at random moments
# (10 times), restarted, and the job resubmitted with -s <the job's checkpoint
# directory> (weir takes its newest complete chk-<n>). The committed output must
# hold every n exactly once with the right running sums.
#
#   bash tests/e2e/kill_recovery.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

count=150000
rate=8000
kills=10
cpdir="$tmp/checkpoints"
out="$tmp/out"
conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
restore_from=""

for ((k = 1; k <= kills; k++)); do
  port="$(free_port)"
  check "round $k: submit to a fresh runtime${restore_from:+ restoring from its newest checkpoint}, then kill -9 it"
  start_runtime "$port" "${conf[@]}"
  args=(run -d -p 2 -m "localhost:$port")
  [[ -n "$restore_from" ]] && args+=(-s "$restore_from")
  run "$WEIR" "${args[@]}" "$NUMBER_SUM" --count "$count" --rate "$rate" --output "$out"
  expect_rc 0
  job="$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]\{32\}\)$/\1/p' "$OUT_FILE")"
  [[ -n "$job" ]] || fail "no job id printed"
  # A random moment between 0.3 and 1.2 s into the run.
  sleep "$(python3 -c "import random; print(round(random.uniform(0.3, 1.2), 2))")"
  kill -9 "$RUNTIME_PID"
  wait "$RUNTIME_PID" 2>/dev/null || true
  if compgen -G "$cpdir/$job/chk-*/_metadata" >/dev/null; then
    restore_from="$cpdir/$job"
  fi
  [[ -n "$restore_from" ]] || fail "no complete checkpoint after round $k"
  pass
done

check "the last run, restored from the newest checkpoint, runs to the end (embedded, attached)"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" \
  "$NUMBER_SUM" --count "$count" --output "$out"
expect_rc 0
expect_out_has "has finished."
expect_err_has "restoring from the newest complete checkpoint"
pass

check "the committed output holds every n in 1..$count exactly once with correct running sums"
expected_number_sum "$count" "$tmp/expected"
cat "$out"/part-* | sort -t, -k1,1n >"$tmp/actual"
sort -t, -k1,1n "$tmp/expected" >"$tmp/expected.sorted"
if ! cmp -s "$tmp/actual" "$tmp/expected.sorted"; then
  LAST_CMD="diff expected actual"
  fail "output differs: $(diff "$tmp/expected.sorted" "$tmp/actual" | head -n 5) ($(wc -l <"$tmp/actual") lines)"
fi
hidden="$(find "$out" -name '.*' -type f | wc -l)"
[[ "$hidden" -eq 0 ]] || fail "$hidden hidden (uncommitted) files were left in the output directory"
pass

finish
