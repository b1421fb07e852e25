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

count=100000
rate=8000
kills=4
out="$tmp/out"

check "the S3 server starts"
start_s3_peer
cpdir="s3://$s3_bucket/checkpoints"
pass

conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
crash_conf=("${conf[@]}")
crash_after="0.5 1.5"
restore_from=""
job_finished=0
for ((k = 1; k <= kills; k++)); do
  check "round $k: submit to a fresh runtime${restore_from:+ restoring from its newest checkpoint on S3}, then kill -9 it"
  crash_round 2 "$NUMBER_SUM" --count "$count" --rate "$rate" --output "$out"
  pass
  ((job_finished)) && break
done

check "the last run restores the newest checkpoint at p=3 and runs to the end (embedded, attached)"
((!job_finished)) || fail "the bounded job finished during the kill rounds: raise count so the last run restores"
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" \
  "$NUMBER_SUM" --count "$count" --output "$out"
expect_rc 0
expect_out_has "has finished."
expect_err_has "restoring from the newest complete checkpoint '$restore_from/chk-"
pass

check "the committed output holds every n in 1..$count exactly once with correct running sums"
expect_number_sum_committed "$out" "$count"
pass

finish
