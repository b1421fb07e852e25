#!/usr/bin/env bash
# End-to-end: the local runtime daemon (weir-runtime) driven by weir run -d / -t remote,
# weir list and weir cancel, and scripts/start-cluster.sh + scripts/stop-cluster.sh.
#
#   bash tests/e2e/daemon.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

JOBID_RE='[0-9a-f]{32}'
DATE_RE='[0-3][0-9]\.[01][0-9]\.[0-9]{4} [0-2][0-9]:[0-5][0-9]:[0-5][0-9]'
RUNNING_HEADER='------------------ Running/Restarting Jobs -------------------'
TERMINATED_HEADER='---------------------- Terminated Jobs -----------------------'
FOOTER='--------------------------------------------------------------'

# --- the daemon, started directly ------------------------------------------------
port="$(free_port)"
check "weir-runtime --rest-port $port starts, prints its address and answers GET /overview"
start_runtime "$port"
LAST_CMD="$WEIR_RUNTIME --rest-port $port"
RC="(running)"
cp "$RUNTIME_LOG" "$OUT_FILE"
: >"$ERR_FILE"
expect_out_line "weir runtime listening on http://[^ ]+:$port"
curl -sf "http://localhost:$port/overview" >"$OUT_FILE" || fail "GET /overview failed"
expect_out_json
[[ "$(json_get 'd["taskmanagers"]')" =~ ^[1-9][0-9]*$ ]] || fail "GET /overview has no positive 'taskmanagers'"
pass

check "weir run -d -m localhost:$port number_sum.so --count 0 returns with the job id and nothing more"
run "$WEIR" run -d -m "localhost:$port" "$NUMBER_SUM" --count 0 --rate 1000
expect_rc 0
expect_out_line "Job has been submitted with JobID $JOBID_RE"
[[ "$(wc -l <"$OUT_FILE")" -eq 1 ]] || fail "a detached run prints only the 'Job has been submitted' line"
expect_err_empty
job="$(submitted_job)"
pass

check "the detached job reaches RUNNING"
wait_until 30 job_state_is "$port" "$job" RUNNING || fail "job $job is '$(job_state "$port" "$job")', not RUNNING, after 30 s"
pass

check "weir list -m shows it RUNNING in Flink's format"
run "$WEIR" list -m "localhost:$port"
expect_rc 0
line3="$(sed -n 3p "$OUT_FILE")"
[[ "$line3" =~ ^$DATE_RE\ :\ $job\ :\ Number\ Sum\ \(RUNNING\)$ ]] ||
  fail "line 3 is not '<dd.MM.yyyy HH:mm:ss> : $job : Number Sum (RUNNING)'"
printf '%s\n' "Waiting for response..." "$RUNNING_HEADER" "$line3" "$FOOTER" "No scheduled jobs." >"$tmp/expected-list"
expect_same_file "$tmp/expected-list" "$OUT_FILE" "the output of weir list"
# The start time is printed in local time: it must be within a few minutes of now.
python3 - "$line3" <<'EOF' || fail "the start time in '$line3' is not within 10 minutes of now (local time)"
import datetime, sys
t = datetime.datetime.strptime(sys.argv[1][:19], "%d.%m.%Y %H:%M:%S")
sys.exit(0 if abs((datetime.datetime.now() - t).total_seconds()) < 600 else 1)
EOF
pass

check "weir list -r shows only the running group, weir list -s only the scheduled one"
run "$WEIR" list -r -m "localhost:$port"
expect_rc 0
expect_out_line "$DATE_RE : $job : Number Sum \(RUNNING\)"
expect_out_lacks "No scheduled jobs."
run "$WEIR" list -s -m "localhost:$port"
expect_rc 0
printf '%s\n' "Waiting for response..." "No scheduled jobs." >"$tmp/expected-list-s"
expect_same_file "$tmp/expected-list-s" "$OUT_FILE" "the output of weir list -s"
pass

check "weir list -a --output json is one JSON document that lists the job RUNNING"
run "$WEIR" list -a --output json -m "localhost:$port"
expect_rc 0
expect_out_json
[[ "$(json_get "[j['state'] for j in d['jobs'] if j['jid'] == '$job']")" == "['RUNNING']" ]] ||
  fail "the document does not list job $job once with state RUNNING"
[[ "$(json_get "[j['name'] for j in d['jobs'] if j['jid'] == '$job']")" == "['Number Sum']" ]] ||
  fail "the document does not name job $job 'Number Sum'"
pass

check "weir cancel -m prints Flink's two lines"
run "$WEIR" cancel -m "localhost:$port" "$job"
expect_rc 0
printf '%s\n' "Cancelling job $job." "Cancelled job $job." >"$tmp/expected-cancel"
expect_same_file "$tmp/expected-cancel" "$OUT_FILE" "the output of weir cancel"
pass

check "after the cancel, weir list -a shows the job CANCELED under Terminated Jobs"
wait_until 30 job_state_is "$port" "$job" CANCELED || fail "job $job is '$(job_state "$port" "$job")', not CANCELED, 30 s after the cancel"
run "$WEIR" list -a -m "localhost:$port"
expect_rc 0
line5="$(sed -n 5p "$OUT_FILE")"
[[ "$line5" =~ ^$DATE_RE\ :\ $job\ :\ Number\ Sum\ \(CANCELED\)$ ]] ||
  fail "line 5 is not '<dd.MM.yyyy HH:mm:ss> : $job : Number Sum (CANCELED)'"
printf '%s\n' "Waiting for response..." "No running jobs." "No scheduled jobs." "$TERMINATED_HEADER" \
  "$line5" "$FOOTER" >"$tmp/expected-list-a"
expect_same_file "$tmp/expected-list-a" "$OUT_FILE" "the output of weir list -a"
pass

check "weir cancel of the already cancelled job exits 1 and says why"
run "$WEIR" cancel -m "localhost:$port" "$job"
expect_rc 1
expect_err_has "$job"
expect_err_ci "CANCELED"
pass

check "an attached remote run (weir run -m, --count 100) finishes with exit 0 and Flink's lines"
run "$WEIR" run -m "localhost:$port" "$NUMBER_SUM" --count 100 --output "$tmp/remote-out"
expect_rc 0
expect_out_line "Job has been submitted with JobID $JOBID_RE"
remote_job="$(submitted_job)"
expect_out_line "Program execution finished"
expect_out_line "Job with JobID $remote_job has finished\."
expect_out_line "Job Runtime: [0-9]+ ms"
expect_err_empty
pass

check "the attached remote run wrote the 100 expected lines (the daemon's file sink)"
expected_number_sum 100 "$tmp/expected-100.txt"
cat "$tmp/remote-out"/part-* 2>/dev/null | sort -n >"$tmp/actual-remote.txt" || true
expect_same_file "$tmp/expected-100.txt" "$tmp/actual-remote.txt" "cat part-* | sort -n of the remote run"
others="$(find "$tmp/remote-out" -mindepth 1 ! -name 'part-*' -printf '%P ' 2>/dev/null || true)"
[[ -z "$others" ]] || fail "left in the output directory besides part files: $others"
pass

check "weir run -t remote -m (attached) works the same and the job is then FINISHED in weir list -a"
run "$WEIR" run -t remote -m "localhost:$port" "$NUMBER_SUM" --count 100 --sink discard
expect_rc 0
expect_out_line "Job with JobID $JOBID_RE has finished\."
remote_job2="$(submitted_job)"
run "$WEIR" list -a -m "localhost:$port"
expect_rc 0
expect_out_line "$DATE_RE : $remote_job : Number Sum \(FINISHED\)"
expect_out_line "$DATE_RE : $remote_job2 : Number Sum \(FINISHED\)"
pass

check "weir run -d --output json gives one JSON document with the job id"
run "$WEIR" run -d --output json -m "localhost:$port" "$NUMBER_SUM" --count 0 --rate 100 --sink discard
expect_rc 0
expect_out_json
json_job="$(json_get 'd["jobid"]')"
[[ "$json_job" =~ ^[0-9a-f]{32}$ ]] || fail "no 'jobid' of 32 hex characters in the document"
pass

check "weir cancel --output json gives one JSON document"
run "$WEIR" cancel --output json -m "localhost:$port" "$json_job"
expect_rc 0
expect_out_json
pass

check "weir-runtime exits 0 on SIGTERM while a job runs, and frees its port"
submit_job "$port" "$NUMBER_SUM" --count 0 --rate 100 --sink discard
kill -TERM "$RUNTIME_PID"
await_exit "$RUNTIME_PID" 30 "$WEIR_RUNTIME --rest-port $port (SIGTERM)" "$RUNTIME_LOG"
expect_rc 0
run "$WEIR" list -m "localhost:$port"
expect_rc 3 "nobody listens on the port any more"
pass

# --- scripts/start-cluster.sh and scripts/stop-cluster.sh --------------------------
export WEIR_RUN_DIR="$tmp/run"
export WEIR_BUILD_DIR="$BUILD_DIR"
START="$REPO_DIR/scripts/start-cluster.sh"
STOP="$REPO_DIR/scripts/stop-cluster.sh"
PID_FILE="$WEIR_RUN_DIR/weir-runtime.pid"
track_pid_file "$PID_FILE"
cport="$(free_port)"

check "start-cluster.sh -D rest.port=$cport starts the runtime and says where"
run "$START" -D "rest.port=$cport"
expect_rc 0
expect_out_line "Starting weir runtime \.\.\. started \(pid [0-9]+\) on http://localhost:$cport"
cpid="$(sed -n 's/.*started (pid \([0-9]*\)).*/\1/p' "$OUT_FILE")"
[[ -f "$PID_FILE" ]] || fail "no pid file '$PID_FILE'"
[[ "$(cat "$PID_FILE" 2>/dev/null)" == "$cpid" ]] || fail "the pid file holds '$(cat "$PID_FILE" 2>/dev/null)', not $cpid"
[[ -s "$WEIR_RUN_DIR/weir-runtime.log" ]] || fail "no log '$WEIR_RUN_DIR/weir-runtime.log'"
kill -0 "$cpid" 2>/dev/null || fail "pid $cpid is not alive"
pass

check "the started runtime runs jobs: weir run -d, then weir list shows it RUNNING"
submit_job "$cport" "$NUMBER_SUM" --count 0 --rate 100 --sink discard
cjob="$job"
run "$WEIR" list -m "localhost:$cport"
expect_rc 0
expect_out_line "$DATE_RE : $cjob : Number Sum \(RUNNING\)"
pass

check "a second start-cluster.sh refuses: one is already running"
run "$START" -D "rest.port=$(free_port)"
expect_rc 1
expect_err_has "already running"
expect_err_has "$cpid"
[[ "$(cat "$PID_FILE" 2>/dev/null)" == "$cpid" ]] || fail "the pid file changed"
kill -0 "$cpid" 2>/dev/null || fail "the running runtime (pid $cpid) died"
pass

check "stop-cluster.sh stops it, removes the pid file, frees the port"
run "$STOP"
expect_rc 0
expect_out_line "Stopping weir runtime \(pid $cpid\) \.\.\. stopped\."
[[ ! -e "$PID_FILE" ]] || fail "the pid file is still there"
! kill -0 "$cpid" 2>/dev/null || fail "pid $cpid is still alive"
run "$WEIR" list -m "localhost:$cport"
expect_rc 3 "the runtime is stopped"
pass

check "stop-cluster.sh with nothing running exits 0 and says so"
run "$STOP"
expect_rc 0
expect_out_has "No weir runtime is running"
pass

check "stop-cluster.sh with a stale pid file (dead pid) removes it and exits 0"
mkdir -p "$WEIR_RUN_DIR"
sleep 0 &
dead_pid=$!
wait "$dead_pid" || true
echo "$dead_pid" >"$PID_FILE"
run "$STOP"
expect_rc 0
expect_out_has "No weir runtime is running"
[[ ! -e "$PID_FILE" ]] || fail "the stale pid file is still there"
pass

check "start-cluster.sh on a port in use fails with exit 1, the log tail naming the port, and no pid file"
listen_busy_port
run "$START" -D "rest.port=$busy"
expect_rc 1
expect_err_has "$busy"
expect_err_ci "in use"
[[ ! -e "$PID_FILE" ]] || fail "a pid file was left behind"
kill "$busy_pid" 2>/dev/null || true
pass

check "start-cluster.sh with a malformed property fails with exit 1 (runtime) or 2 and names it"
run "$START" -D "rest.port=abc"
[[ "$RC" == 1 || "$RC" == 2 ]] || fail "expected exit code 1 or 2, got $RC"
expect_err_has "abc"
expect_err_has "rest.port"
[[ ! -e "$PID_FILE" ]] || fail "a pid file was left behind"
pass

check "start-cluster.sh with an unknown argument exits 2"
run "$START" --bogus
expect_rc 2
expect_err_has "--bogus"
pass

# --- Flink's REST cancel as its documentation shows it; last, as it fails today --------
port2="$(free_port)"
check "REST: 'curl -X PATCH <address>/jobs/<id>?mode=cancel' (no body, as in Flink's docs) answers 202 and cancels"
start_runtime "$port2"
submit_job "$port2" "$NUMBER_SUM" --count 0 --rate 100 --sink discard
run_http -X PATCH "http://localhost:$port2/jobs/$job?mode=cancel"
expect_rc "HTTP 202"
wait_until 30 job_state_is "$port2" "$job" CANCELED || fail "job '$job' is '$(job_state "$port2" "$job")', not CANCELED"
pass

finish
