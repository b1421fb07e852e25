#!/usr/bin/env bash
# End-to-end exactly-once through crashes with checkpoints on S3: as kill_recovery.sh, but
# the checkpoint storage is s3:// on a real S3-compatible server (scripts/peers/s3.sh).
# number_sum runs at p=2 on weir-runtime with checkpoints every 100 ms; the runtime is
# killed with SIGKILL at random moments (4 times), restarted, and the job resubmitted with
# -s <the job's checkpoint directory on S3>; the last run restores at p=3 and runs to the
# end. The committed output must hold every n exactly once with the right running sums.
#
#   bash tests/e2e/s3_kill_recovery.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

export S3_WORK_DIR="$tmp/s3"
count=100000
rate=8000
kills=4
out="$tmp/out"

check "the S3 server starts"
run bash "$REPO_DIR/scripts/peers/s3.sh" start
expect_rc 0
track_pid_file "$S3_WORK_DIR/vgw.pid"
mkdir -p "$tmp/conf"
{
  echo "s3.endpoint: $(sed -n 's/^s3.endpoint=//p' "$OUT_FILE")"
  echo "s3.path.style.access: true"
  echo "s3.access-key: $(sed -n 's/^s3.access-key=//p' "$OUT_FILE")"
  echo "s3.secret-key: $(sed -n 's/^s3.secret-key=//p' "$OUT_FILE")"
} >"$tmp/conf/config.yaml"
export WEIR_CONF_DIR="$tmp/conf"
cpdir="s3://$(sed -n 's/^bucket=//p' "$OUT_FILE")/checkpoints"
pass

conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
restore_from=""
for ((k = 1; k <= kills; k++)); do
  port="$(free_port)"
  check "round $k: submit to a fresh runtime${restore_from:+ restoring from its newest checkpoint on S3}, then kill -9 it"
  start_runtime "$port" "${conf[@]}"
  args=(run -d -p 2 -m "localhost:$port")
  [[ -n "$restore_from" ]] && args+=(-s "$restore_from")
  run "$WEIR" "${args[@]}" "$NUMBER_SUM" --count "$count" --rate "$rate" --output "$out"
  expect_rc 0
  job="$(sed -n 's/^Job has been submitted with JobID \([0-9a-f]\{32\}\)$/\1/p' "$OUT_FILE")"
  [[ -n "$job" ]] || fail "no job id printed"
  # A random moment between 0.5 and 1.5 s into the run.
  sleep "$(python3 -c "import random; print(round(random.uniform(0.5, 1.5), 2))")"
  kill -9 "$RUNTIME_PID"
  wait "$RUNTIME_PID" 2>/dev/null || true
  # The job's checkpoint directory on S3 holds a complete chk-<n> (weir inspect finds it).
  if "$WEIR" inspect "$cpdir/$job" >/dev/null 2>&1; then
    restore_from="$cpdir/$job"
  fi
  [[ -n "$restore_from" ]] || fail "no complete checkpoint on S3 after round $k"
  pass
done

check "the last run restores the newest checkpoint at p=3 and runs to the end (embedded, attached)"
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" \
  "$NUMBER_SUM" --count "$count" --output "$out"
expect_rc 0
expect_out_has "has finished."
expect_err_has "restoring from the newest complete checkpoint '$restore_from/chk-"
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
