#!/usr/bin/env bash
# End-to-end: checkpoints and savepoints on a real HDFS (a namenode and a datanode from
# Hadoop's minicluster, started here by scripts/peers/hdfs.sh), through WebHDFS. weir-runtime
# checkpoints number_sum to hdfs://; a savepoint goes to hdfs://; `weir inspect --verify`,
# `weir run -s` with the job's checkpoint directory, a chk-<n> and a savepoint, and
# `weir savepoint -d` work on hdfs:// URIs; the committed output is exactly once.
#
#   bash tests/e2e/hdfs_storage.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

count=200000
out="$tmp/out"

check "HDFS starts (namenode + datanode, WebHDFS on)"
start_hdfs_peer
chk="$fs_default/weir/checkpoints"
pass

port="$(free_port)"
m=(-m "localhost:$port")
check "weir-runtime checkpoints number_sum to $chk"
start_runtime "$port" -D execution.checkpointing.interval=200ms -D "execution.checkpointing.dir=$chk" \
  -D execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION
run "$WEIR" run -d "${m[@]}" -p 2 "$NUMBER_SUM" --count "$count" --rate 4000 --output "$out"
expect_rc 0
job="$(submitted_job)"
wait_until 60 checkpoints_at_least "$port" "$job" completed 3 || fail "fewer than 3 checkpoints completed on HDFS within 60 s"
pass

check "weir savepoint <job> hdfs://... and weir inspect --verify of it"
run "$WEIR" savepoint "${m[@]}" "$job" "$fs_default/weir/savepoints"
expect_rc 0
expect_out_line "Savepoint completed\\. Path: $fs_default/weir/savepoints/savepoint-${job:0:6}-[0-9a-f]{12}"
savepoint="$(savepoint_path)"
run "$WEIR" inspect --verify "$savepoint"
expect_rc 0
expect_out_has "all checksums match"
pass

check "cancel; inspect --verify and weir run -s <the job's checkpoint directory on HDFS>: the run ends exactly once"
run "$WEIR" cancel "${m[@]}" "$job"
expect_rc 0
wait_until 30 job_state_is "$port" "$job" CANCELED || fail "job $job was not CANCELED"
# A checkpoint being written when the job was cancelled still completes (and subsumes
# the one before): take the newest once it stays the same.
newest_chk() { "$WEIR" inspect "$chk/$job" 2>/dev/null | sed -n 's/^Snapshot: *//p'; }
settled() {
  local a
  a="$(newest_chk)"
  sleep 1
  [[ -n "$a" && "$a" == "$(newest_chk)" ]]
}
wait_until 20 settled || fail "the newest checkpoint of the cancelled job did not settle"
chk_dir="$(newest_chk)"
run "$WEIR" inspect --verify "$chk/$job"
expect_rc 0
expect_err_has "inspecting the newest complete checkpoint '$chk_dir'"
expect_out_has "all checksums match"
run "$WEIR" run "${m[@]}" -p 1 -s "$chk/$job" "$NUMBER_SUM" --count "$count" --output "$out"
expect_rc 0
expect_err_has "restoring from the newest complete checkpoint '$chk/$job/chk-"
expect_out_has "has finished."
expect_number_sum_committed "$out" "$count"
pass

check "weir run -s <a chk-<n> on HDFS> and -s <the savepoint on HDFS> restore"
run "$WEIR" run "${m[@]}" -s "$chk_dir" "$NUMBER_SUM" --count 10 --output "$tmp/out-chk"
expect_rc 0
run "$WEIR" run "${m[@]}" -p 3 -s "$savepoint" "$NUMBER_SUM" --count 10 --output "$tmp/out-sp"
expect_rc 0
pass

check "weir savepoint -d disposes of the HDFS savepoint"
run "$WEIR" savepoint "${m[@]}" -d "$savepoint"
expect_rc 0
run "$WEIR" inspect "$savepoint"
expect_rc 1
expect_err_has "cannot find checkpoint or savepoint '$savepoint'"
pass

finish
