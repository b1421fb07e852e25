#!/usr/bin/env bash
# End-to-end high availability on one machine: weir-runtime runs with
# high-availability.type: filesystem under scripts/start-cluster.sh --supervise (the
# restart loop). number_sum runs with checkpoints every 100 ms while the runtime is killed
# with SIGKILL several times in a row; each time the loop starts it again and it resumes
# the job by itself, with the same job id, from its latest checkpoint. The committed
# output must hold every n exactly once. Then: a second runtime on the storage directory
# is refused; cancelled and stopped jobs are not resumed, a running one is; a stop with
# stop-cluster.sh keeps the jobs for the next start; bad settings; the systemd unit.
#
#   bash tests/e2e/ha_recovery.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

START="$REPO_DIR/scripts/start-cluster.sh"
STOP="$REPO_DIR/scripts/stop-cluster.sh"
export WEIR_BUILD_DIR="$BUILD_DIR"
export WEIR_RUN_DIR="$tmp/run"
export WEIR_RESTART_DELAY=0.2
ha="$tmp/ha"
out="$tmp/out"
port="$(free_port)"
conf=(-D "rest.port=$port" -D high-availability.type=filesystem -D "high-availability.storageDir=$ha"
  -D execution.checkpointing.interval=100ms)
count=90000
kills=5
track_pid_file "$WEIR_RUN_DIR/weir-supervisor.pid"
track_pid_file "$WEIR_RUN_DIR/weir-runtime.pid"
LOG="$WEIR_RUN_DIR/weir-runtime.log"

runtime_pid() { cat "$WEIR_RUN_DIR/weir-runtime.pid" 2>/dev/null; }
# answers_with_new_pid OLD: a runtime other than OLD is up and answers.
answers_with_new_pid() {
  local p
  p="$(runtime_pid)"
  [[ -n "$p" && "$p" != "$1" ]] && curl -sf -o /dev/null --max-time 2 "http://localhost:$port/overview"
}
# completed_checkpoints JOB: how many checkpoints of JOB this runtime completed.
completed_checkpoints() {
  curl -sf --max-time 2 "http://localhost:$port/jobs/$1/checkpoints" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["counts"]["completed"])' 2>/dev/null || echo 0
}
has_new_checkpoint() { (($(completed_checkpoints "$1") >= 1)); }
job_running_or_finished() { [[ "$(job_state "$port" "$1")" =~ ^(RUNNING|FINISHED)$ ]]; }
listed() { "$WEIR" list -a --output json -m "localhost:$port" 2>/dev/null | grep -q "\"$1\""; }

check "start-cluster.sh --supervise starts weir-runtime with high availability under its restart loop"
run "$START" --supervise "${conf[@]}"
expect_rc 0
expect_out_line "Starting weir runtime \.\.\. started \(pid [0-9]+, supervised by pid [0-9]+\) on http://localhost:$port"
pass

check "a submitted job is recorded in the storage directory before it runs"
submit_job "$port" -p 2 "$NUMBER_SUM" --count "$count" --rate 6000 --output "$out"
[[ -s "$ha/jobs/$job/record" && -s "$ha/jobs/$job/job.so" ]] || fail "no record of job $job in '$ha/jobs'"
wait_until 20 test -s "$ha/jobs/$job/checkpoint" || fail "no checkpoint of job $job was recorded"
pass

finished=0
for ((k = 1; k <= kills; k++)); do
  check "kill -9 number $k: the restart loop starts the runtime again and it resumes job $job by itself"
  # Let the job make progress (a checkpoint of this runtime), then kill at a random moment.
  wait_until 30 has_new_checkpoint "$job" || fail "no checkpoint completed since the last start"
  sleep "$(python3 -c "import random; print(round(random.uniform(0.1, 0.7), 2))")"
  old="$(runtime_pid)"
  kill -9 "$old"
  wait_until 30 answers_with_new_pid "$old" || fail "no new runtime answered after the kill of pid $old"
  if finished_in_log "$job" "$LOG"; then
    finished=1  # it finished just before the kill: nothing to resume
    pass
    break
  fi
  wait_until 30 job_running_or_finished "$job" || fail "job $job is not RUNNING after the restart"
  [[ "$(grep -c "job=$job ('Number Sum') resumed from checkpoint" "$LOG")" -eq "$k" ]] ||
    fail "the log does not show resume number $k of job $job from a checkpoint"
  pass
done
((finished || k > kills)) || fail "the kill rounds stopped early"

check "the job finishes with its id, and its committed output holds every n exactly once"
# A job that finished just before a kill is not known to the next runtime (an ended job's
# record is removed before its status shows): its output and the log tell.
if ((finished == 0)); then
  wait_until 90 job_state_is "$port" "$job" FINISHED || fail "job $job did not finish"
fi
expected_number_sum "$count" "$tmp/expected"
cat "$out"/part-* | sort -t, -k1,1n >"$tmp/actual"
sort -t, -k1,1n "$tmp/expected" >"$tmp/expected.sorted"
if ! cmp -s "$tmp/actual" "$tmp/expected.sorted"; then
  LAST_CMD="diff expected actual"
  fail "output differs: $(diff "$tmp/expected.sorted" "$tmp/actual" | head -n 5 | tr '\n' ' ') ($(wc -l <"$tmp/actual") lines)"
fi
hidden="$(find "$out" -name '.*' -type f | wc -l)"
[[ "$hidden" -eq 0 ]] || fail "$hidden hidden (uncommitted) files were left in the output directory"
[[ ! -e "$ha/jobs/$job" ]] || fail "the finished job is still recorded in '$ha/jobs'"
pass

check "a second runtime on the same storage directory refuses to start, naming the holder"
run "$WEIR_RUNTIME" --rest-port "$(free_port)" -D high-availability.type=filesystem -D "high-availability.storageDir=$ha"
expect_rc 1
expect_err_has "weir-runtime: the high-availability storage directory '$ha' is in use by another weir runtime (pid $(runtime_pid), rest http://localhost:$port)"
expect_err_has "hint: stop that runtime first, or give this one another high-availability.storageDir"
curl -sf -o /dev/null "http://localhost:$port/overview" || fail "the first runtime stopped answering"
pass

check "after a kill -9, a cancelled job and a stopped one stay ended; a running one is resumed"
submit_job "$port" "$NUMBER_SUM" --count 0 --rate 200 --sink discard
cancelled="$job"
submit_job "$port" "$NUMBER_SUM" --count 0 --rate 200 --sink discard
stopped="$job"
submit_job "$port" "$NUMBER_SUM" --count 0 --rate 200 --sink discard
running="$job"
run "$WEIR" cancel -m "localhost:$port" "$cancelled"
expect_rc 0
run "$WEIR" stop -m "localhost:$port" -p "$tmp/savepoints" "$stopped"
expect_rc 0
expect_out_has "Savepoint completed. Path: "
wait_until 20 has_new_checkpoint "$running" || fail "no checkpoint of job $running"
old="$(runtime_pid)"
kill -9 "$old"
wait_until 30 answers_with_new_pid "$old" || fail "no new runtime answered after the kill"
wait_until 20 job_state_is "$port" "$running" RUNNING || fail "job $running was not resumed"
# weir list shows the resumed job as before the kill, with its id and name.
run "$WEIR" list -m "localhost:$port"
expect_rc 0
expect_out_line "[0-9.]+ [0-9:]+ : $running : Number Sum \\(RUNNING\\)"
listed "$cancelled" && fail "the cancelled job $cancelled is back"
listed "$stopped" && fail "the stopped job $stopped is back"
[[ "$(ls "$ha/jobs")" == "$running" ]] || fail "'$ha/jobs' holds $(ls "$ha/jobs" | tr '\n' ' ')"
pass

check "stop-cluster.sh stops the loop and the runtime, leaving the running job recorded for the next start"
run "$STOP"
expect_rc 0
expect_out_has "Stopping the restart loop"
[[ -s "$ha/jobs/$running/record" ]] || fail "the running job's record is gone"
grep -q "the running jobs stay recorded in '$ha'" "$LOG" || fail "the runtime did not say it left its jobs recorded"
run "$START" --supervise "${conf[@]}"
expect_rc 0
wait_until 20 job_state_is "$port" "$running" RUNNING || fail "job $running was not resumed by the next start"
run "$WEIR" cancel -m "localhost:$port" "$running"
expect_rc 0
wait_until 20 job_state_is "$port" "$running" CANCELED || fail "job $running did not end"
[[ -z "$(ls "$ha/jobs")" ]] || fail "'$ha/jobs' still holds $(ls "$ha/jobs" | tr '\n' ' ')"
run "$STOP"
expect_rc 0
pass

check "bad high-availability settings are refused with exit 2, naming the key"
run "$WEIR_RUNTIME" --rest-port "$(free_port)" -D high-availability.type=filesystem
expect_rc 2
expect_err_has "'high-availability.storageDir' is not set"
expect_err_has "hint: set -D high-availability.storageDir=<local directory>"
run "$WEIR_RUNTIME" --rest-port "$(free_port)" -D high-availability.type=filesystem \
  -D high-availability.storageDir=s3://bucket/ha
expect_rc 2
expect_err_has "'high-availability.storageDir' must be a local directory, not 's3://bucket/ha'"
run "$WEIR_RUNTIME" --rest-port "$(free_port)" -D high-availability.type=zookeeper
expect_rc 2
expect_err_has "without ZooKeeper or Kubernetes"
pass

if command -v systemd-analyze >/dev/null 2>&1; then
  check "conf/weir-runtime.service passes systemd-analyze verify"
  sed "s#^ExecStart=.*#ExecStart=$WEIR_RUNTIME#; s/^User=.*/User=root/; s/^Group=.*/Group=root/; /^Documentation=/d" \
    "$REPO_DIR/conf/weir-runtime.service" >"$tmp/weir-runtime.service"
  run systemd-analyze verify "$tmp/weir-runtime.service"
  expect_rc 0
  expect_err_empty
  pass
fi

finish
