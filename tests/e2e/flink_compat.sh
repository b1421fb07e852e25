#!/usr/bin/env bash
# End-to-end: compatibility with a real Apache Flink (2.3.0 from PyPI, scripts/peers/flink.sh).
#
#   a. Flink's own bin/flink against weir-runtime: list, checkpoint (and -full), savepoint (the
#      path is a weir savepoint that `weir inspect` reads), stop -p, cancel, list -a,
#      savepoint -d.
#   b. weir's tools against a Flink standalone session cluster running a streaming SQL job
#      (datagen -> blackhole, submitted with bin/sql-client.sh): list (same bytes as
#      `flink list`), list --output json, checkpoint, savepoint, stop -p, cancel, dispose, and
#      the errors (unknown job, unreachable cluster, a Flink savepoint given to weir inspect, a
#      .so submitted to Flink, a jar whose program fails: its root cause in two lines, sent
#      with claimMode, which Flink 2.x does not log as deprecated).
#
#   bash tests/e2e/flink_compat.sh [build-dir]
#
# Needs Java 17 and Flink installed by `scripts/peers/flink.sh install` (run here when missing:
# ~320 MB from PyPI plus ~1 MB from Maven, about 15 s). Every Flink CLI call starts a JVM
# (2-3 s); the whole script takes about 1.5-2 minutes on 2 cores.
# The Flink CLI runs with its own config dir in which rest.retry.max-attempts is 2 and
# rest.retry.delay 300 ms: with Flink's defaults (20 x 3 s) a response Flink cannot parse
# costs a minute per command before it fails.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
t_start=$SECONDS

PEER="$REPO_DIR/scripts/peers/flink.sh"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}"
[[ -x "$JAVA_HOME/bin/java" ]] || export JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64

check "Apache Flink is installed (scripts/peers/flink.sh install)"
run bash "$PEER" install
expect_rc 0
FLINK_HOME="$(bash "$PEER" home)"
FLINK="$FLINK_HOME/bin/flink"
[[ -x "$FLINK" ]] || fail "no executable '$FLINK'"
pass

# The Flink cluster of part b starts in the background now; part a runs meanwhile.
flink_rest_port="$(free_port)"
flink_rpc_port="$(free_port)"
flink_work="$tmp/flink-cluster"
export FLINK_IDENT_STRING=weir
track_pid_file "$flink_work/pid/flink-weir-standalonesession.pid"
track_pid_file "$flink_work/pid/flink-weir-taskexecutor.pid"
peer_env=(env FLINK_REST_PORT="$flink_rest_port" FLINK_RPC_PORT="$flink_rpc_port"
  FLINK_WORK_DIR="$flink_work" FLINK_KEEP_WORK=1 FLINK_IDENT_STRING=weir)
"${peer_env[@]}" bash "$PEER" start >"$tmp/flink-start.log" 2>&1 </dev/null &
flink_start_pid=$!
track_pid "$flink_start_pid"

# The Flink CLI's own config dir (never the installed one).
cli_conf="$tmp/flink-cli-conf"
cp -r "$FLINK_HOME/conf" "$cli_conf"
chmod -R u+w "$cli_conf"
cat >>"$cli_conf/config.yaml" <<'EOF'

rest.retry.max-attempts: 2
rest.retry.delay: 300 ms
client.timeout: 30 s
EOF

# flink ARGS...: Flink's bin/flink with the CLI config above.
flink() {
  run env FLINK_CONF_DIR="$cli_conf" FLINK_LOG_DIR="$tmp/flink-cli-log" JAVA_HOME="$JAVA_HOME" \
    "$FLINK" "$@"
}

# why_java ENDPOINT: prints, to stderr, the Java exception chain of the last command (the
# "Caused by:" lines, without the frames) and what weir answers on ENDPOINT, so that a
# failure names the field or value the Java client rejected.
why_java() {
  {
    echo "  the Java exception chain of the last command:"
    grep -E '^(Caused by: |org\.apache\.flink\.|java\.| at \[Source)' "$ERR_FILE" | head -n 14 | sed 's/^/    /'
    if [[ -n "${1:-}" ]]; then
      echo "  GET $1 on weir-runtime answers:"
      curl -s --max-time 5 "http://127.0.0.1:$port$1" | head -c 1500 | sed 's/^/    /'
      echo
    fi
  } >&2
}

# ------------------------------------------------------------------------------------------
echo "== a. Flink's bin/flink against weir-runtime"
port="$(free_port)"
m=(-m "127.0.0.1:$port")
sp="$tmp/sp"
mkdir -p "$sp"

check "weir-runtime starts with a default savepoint directory"
start_runtime "$port" -D "execution.checkpointing.savepoint-dir=$sp"
pass

# submit: an endless number_sum with `weir run -d`; sets job. Checkpointing on (its
# statistics show the triggered checkpoints), periodic ones rare.
submit() {
  submit_job "$port" -D execution.checkpointing.interval=1h "$NUMBER_SUM" --count 0 --rate 100 --sink discard
}

check "weir run -d -m submits an endless number_sum"
submit
job_a="$job"
pass

check "flink list -m: the job is under Running/Restarting Jobs, exit 0"
flink list "${m[@]}"
if [[ "$RC" != 0 ]]; then why_java /jobs/overview; fi
expect_rc 0
expect_out_line "-+ Running/Restarting Jobs -+"
expect_out_line "[0-9]{2}\\.[0-9]{2}\\.[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} : $job_a : Number Sum \\(RUNNING\\)"
pass

# weir_checkpoint_state ID: the status of checkpoint ID of job_a in weir's statistics.
weir_checkpoint_state() {
  curl -s --max-time 5 "http://127.0.0.1:$port/jobs/$job_a/checkpoints/details/$1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get("status", ""))' 2>/dev/null || true
}

check "flink checkpoint -m <job> and -full: 'Checkpoint <n> for job ... completed.', exit 0"
flink checkpoint "${m[@]}" "$job_a"
[[ "$RC" == 0 ]] || why_java
expect_rc 0
expect_out_line "Triggering checkpoint for job $job_a\\."
expect_out_line "Checkpoint [0-9]+ for job $job_a completed\\."
chk1="$(sed -n 's/^Checkpoint \([0-9]*\) for job .* completed\.$/\1/p' "$OUT_FILE")"
[[ "$(weir_checkpoint_state "$chk1")" == COMPLETED ]] || fail "weir does not list checkpoint $chk1 as COMPLETED"
flink checkpoint "${m[@]}" -full "$job_a"
[[ "$RC" == 0 ]] || why_java
expect_rc 0
expect_out_line "Checkpoint\\(FULL\\) [0-9]+ for job $job_a completed\\."
chk2="$(sed -n 's/^Checkpoint(FULL) \([0-9]*\) for job .* completed\.$/\1/p' "$OUT_FILE")"
((chk2 > chk1)) || fail "the FULL checkpoint $chk2 is not newer than $chk1"
pass

check "flink checkpoint -m <unknown job>: exit 1, the job was not found"
flink checkpoint "${m[@]}" 0123456789abcdef0123456789abcdef
expect_rc 1
expect_err_has "Failed to trigger a checkpoint for the job 0123456789abcdef0123456789abcdef."
expect_err_has "not found"
pass

check "flink savepoint -m <job> <dir>: 'Savepoint completed. Path: ...', exit 0"
flink savepoint "${m[@]}" "$job_a" "$sp/cli"
[[ "$RC" == 0 ]] || why_java
expect_rc 0
expect_out_line "Triggering savepoint for job $job_a\\."
expect_out_line "Savepoint completed\\. Path: file:$sp/cli/savepoint-${job_a:0:6}-[0-9a-f]{12}"
savepoint_a="$(savepoint_path)"
pass

check "the path flink printed is a weir savepoint: weir inspect --verify reads it"
run "$WEIR" inspect --verify "$savepoint_a"
expect_rc 0
expect_out_line "Job ID: +$job_a"
expect_out_line "Kind: +savepoint"
job_state_is "$port" "$job_a" RUNNING || fail "the job is not RUNNING after the savepoint"
pass

check "flink savepoint -d <weir savepoint>: disposed, exit 0"
flink savepoint "${m[@]}" -d "$savepoint_a"
[[ "$RC" == 0 ]] || why_java
expect_rc 0
expect_out_line "Savepoint '$savepoint_a' disposed\\."
[[ ! -e "$savepoint_a" ]] || fail "'$savepoint_a' still exists"
pass

check "flink stop -m -p <dir> <job>: exit 0, the savepoint is weir's, the job FINISHED"
flink stop "${m[@]}" -p "$sp/stop" "$job_a"
[[ "$RC" == 0 ]] || why_java
expect_rc 0
expect_out_line "Suspending job \"$job_a\" with a CANONICAL savepoint\\."
expect_out_line "Savepoint completed\\. Path: file:$sp/stop/savepoint-${job_a:0:6}-[0-9a-f]{12}"
stop_a="$(savepoint_path)"
wait_until 30 job_state_is "$port" "$job_a" FINISHED || fail "job $job_a is not FINISHED after flink stop"
run "$WEIR" inspect "$stop_a"
expect_rc 0
pass

check "flink cancel -m <job>: 'Cancelled job', exit 0, the job CANCELED"
submit
job_b="$job"
flink cancel "${m[@]}" "$job_b"
[[ "$RC" == 0 ]] || why_java
expect_rc 0
expect_out_line "Cancelling job $job_b\\."
expect_out_line "Cancelled job $job_b\\."
wait_until 30 job_state_is "$port" "$job_b" CANCELED || fail "job $job_b is not CANCELED"
pass

check "flink cancel -m <unknown job>: 'Could not cancel job', exit 1"
flink cancel "${m[@]}" 0123456789abcdef0123456789abcdef
expect_rc 1
expect_err_has "Could not cancel job 0123456789abcdef0123456789abcdef."
expect_err_has "not found"
pass

check "flink savepoint -d <not a savepoint>: exit 1, and the Java client reads weir's failure-cause"
flink savepoint "${m[@]}" -d "$tmp/not-a-savepoint"
expect_rc 1
expect_err_has "Failed to dispose the savepoint '$tmp/not-a-savepoint'."
if grep -qF "neither of the expected type" "$ERR_FILE"; then
  why_java
  echo "  (trigger it by hand: curl -X POST -d '{\"savepoint-path\":\"$tmp/not-a-savepoint\"}'" \
    "http://127.0.0.1:$port/savepoint-disposal, then GET /savepoint-disposal/<request-id>)" >&2
  fail "Flink's client cannot parse weir's failure-cause (an empty 'serialized-throwable' is not a Java serialization stream)"
fi
pass

check "flink list -a -m: FINISHED and CANCELED jobs under Terminated Jobs, exit 0"
flink list -a "${m[@]}"
[[ "$RC" == 0 ]] || why_java /jobs/overview
expect_rc 0
expect_out_line "-+ Terminated Jobs -+"
expect_out_line ".* : $job_a : Number Sum \\(FINISHED\\)"
expect_out_line ".* : $job_b : Number Sum \\(CANCELED\\)"
pass

kill -TERM "$RUNTIME_PID" 2>/dev/null || true

# ------------------------------------------------------------------------------------------
echo "== b. weir's tools against a Flink session cluster"
fm=(-m "127.0.0.1:$flink_rest_port")

check "scripts/peers/flink.sh start: a Flink cluster with a TaskManager on 127.0.0.1:$flink_rest_port"
await_exit "$flink_start_pid" 300 "scripts/peers/flink.sh start" "$tmp/flink-start.log"
expect_rc 0
sed 's/^/  /' "$tmp/flink-start.log"
curl -sf "http://127.0.0.1:$flink_rest_port/overview" | grep -q '"taskmanagers":1' ||
  fail "GET /overview does not show a TaskManager"
pass

sql_job() { # sql_job NAME: submits the datagen -> blackhole SQL job; sets fjob
  cat >"$tmp/$1.sql" <<EOF
SET 'execution.runtime-mode' = 'streaming';
SET 'execution.checkpointing.interval' = '1 s';
SET 'pipeline.name' = '$1';
CREATE TABLE src (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '100',
  'fields.k.min' = '0', 'fields.k.max' = '99', 'fields.v.min' = '1', 'fields.v.max' = '9');
CREATE TABLE snk (k INT, s BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO snk SELECT k, SUM(v) FROM src GROUP BY k;
EOF
  E2E_CMD_TIMEOUT=120 run env FLINK_CONF_DIR="$flink_work/conf" FLINK_LOG_DIR="$tmp/flink-cli-log" \
    JAVA_HOME="$JAVA_HOME" "$FLINK_HOME/bin/sql-client.sh" --history "$tmp/sql-history" -f "$tmp/$1.sql"
  expect_rc 0
  fjob="$(sed -n 's/^Job ID: \([0-9a-f]\{32\}\)$/\1/p' "$OUT_FILE")"
  [[ -n "$fjob" ]] || fail "sql-client.sh printed no 'Job ID:'"
  wait_until 60 flink_state_is "$fjob" RUNNING || fail "Flink job $fjob did not reach RUNNING"
}
flink_state() {
  curl -s --max-time 5 "http://127.0.0.1:$flink_rest_port/jobs/$1" |
    python3 -c 'import json, sys; print(json.load(sys.stdin).get("state", ""))' 2>/dev/null || true
}
flink_state_is() { [[ "$(flink_state "$1")" == "$2" ]]; }

check "sql-client.sh -f submits a streaming datagen -> blackhole job that runs"
sql_job weir-compat-1
fjob1="$fjob"
pass

check "weir list -m <flink>: exit 0, Flink's job under Running/Restarting Jobs"
run "$WEIR" list "${fm[@]}"
expect_rc 0
expect_out_line "-+ Running/Restarting Jobs -+"
expect_out_line "[0-9.]{10} [0-9:]{8} : $fjob1 : weir-compat-1 \\(RUNNING\\)"
cp "$OUT_FILE" "$tmp/weir-list.out"
pass

check "weir list and Flink's own flink list print the same bytes for the Flink cluster"
flink list "${fm[@]}"
expect_rc 0
expect_same_file "$OUT_FILE" "$tmp/weir-list.out" "weir list against flink list"
pass

check "weir list -a --output json -m <flink> is JSON with the job RUNNING"
run "$WEIR" list -a --output json "${fm[@]}"
expect_rc 0
expect_out_json
[[ "$(json_get "[j['state'] for j in d['jobs'] if j['jid'] == '$fjob1'][0]")" == RUNNING ]] ||
  fail "job $fjob1 is not RUNNING in the JSON"
pass

check "weir savepoint -m <flink> <job> file:///...: Flink's savepoint, exit 0"
run "$WEIR" savepoint "${fm[@]}" "$fjob1" "file://$tmp/fsp"
expect_rc 0
expect_out_line "Savepoint completed\\. Path: file:$tmp/fsp/savepoint-${fjob1:0:6}-[0-9a-f]{12}"
fsp1="$(savepoint_path)"
[[ -f "$fsp1/_metadata" ]] || fail "no _metadata in '$fsp1'"
flink_state_is "$fjob1" RUNNING || fail "the Flink job is not RUNNING after the savepoint"
pass

check "weir checkpoint -m <flink> <job> and --full --output json: Flink's checkpoints, exit 0"
run "$WEIR" checkpoint "${fm[@]}" "$fjob1"
expect_rc 0
expect_out_line "Checkpoint [0-9]+ for job $fjob1 completed\\."
run "$WEIR" checkpoint "${fm[@]}" --full --output json "$fjob1"
expect_rc 0
expect_out_json
[[ "$(json_get "d['checkpointType']")" == FULL && "$(json_get "d['checkpointId'] > 0")" == True ]] ||
  fail "unexpected JSON"
run "$WEIR" checkpoint "${fm[@]}" 0123456789abcdef0123456789abcdef
expect_rc 1
expect_err_has "FlinkJobNotFoundException"
pass

check "weir inspect on a Flink savepoint: exit 1, says it is Flink's"
run "$WEIR" inspect "$fsp1"
expect_rc 1
expect_err_has "is not a readable weir snapshot"
expect_err_has "Apache Flink"
pass

check "weir savepoint -d -m <flink> <flink savepoint>: disposed by Flink, exit 0"
run "$WEIR" savepoint "${fm[@]}" -d "$fsp1"
expect_rc 0
expect_out_line "Savepoint '$fsp1' disposed\\."
[[ ! -e "$fsp1" ]] || fail "'$fsp1' still exists"
pass

check "weir savepoint -m <flink> <job> <unwritable dir>: Flink's failure-cause reported, exit 1"
run "$WEIR" savepoint "${fm[@]}" "$fjob1" "file:///proc/weir-no-such-dir"
expect_rc 1
expect_err_has "failed to trigger a savepoint for the job '$fjob1'"
expect_err_has "Failed to create savepoint directory"
pass

check "weir stop -m <flink> -p file:///... <job>: exit 0, the Flink job FINISHED"
run "$WEIR" stop "${fm[@]}" -p "file://$tmp/fstop" "$fjob1"
expect_rc 0
expect_out_line "Suspending job \"$fjob1\" with a CANONICAL savepoint\\."
expect_out_line "Savepoint completed\\. Path: file:$tmp/fstop/savepoint-${fjob1:0:6}-[0-9a-f]{12}"
[[ -f "$(savepoint_path)/_metadata" ]] || fail "no _metadata in the stop savepoint"
wait_until 30 flink_state_is "$fjob1" FINISHED || fail "Flink job $fjob1 is not FINISHED"
pass

check "weir cancel -m <flink> <job>: exit 0, the Flink job CANCELED"
sql_job weir-compat-2
fjob2="$fjob"
run "$WEIR" cancel "${fm[@]}" "$fjob2"
expect_rc 0
expect_out_line "Cancelling job $fjob2\\."
expect_out_line "Cancelled job $fjob2\\."
wait_until 30 flink_state_is "$fjob2" CANCELED || fail "Flink job $fjob2 is not CANCELED"
pass

check "weir list -a -m <flink>: both jobs under Terminated Jobs"
run "$WEIR" list -a "${fm[@]}"
expect_rc 0
expect_out_line "-+ Terminated Jobs -+"
expect_out_line ".* : $fjob1 : weir-compat-1 \\(FINISHED\\)"
expect_out_line ".* : $fjob2 : weir-compat-2 \\(CANCELED\\)"
pass

check "weir cancel / savepoint -m <flink> <unknown job>: exit 1, 'not found'"
run "$WEIR" cancel "${fm[@]}" 0123456789abcdef0123456789abcdef
expect_rc 1
expect_err_has "job '0123456789abcdef0123456789abcdef' not found"
run "$WEIR" savepoint "${fm[@]}" 0123456789abcdef0123456789abcdef "file://$tmp/fsp"
expect_rc 1
expect_err_has "FlinkJobNotFoundException"
pass

check "weir run -d -m <flink> <a .so>: refused by Flink, exit 1"
run "$WEIR" run -d "${fm[@]}" "$NUMBER_SUM" --count 10
expect_rc 1
expect_err_has "Only Jar files are allowed"
pass

check "weir run -cm claim -m <flink> <a jar that fails>: the root cause in 2 lines, claimMode sent"
mkdir -p "$tmp/failjar"
cat >"$tmp/failjar/Fail.java" <<'JAVA'
public class Fail {
  public static void main(String[] args) {
    throw new IllegalStateException("weir compat: this program fails on purpose");
  }
}
JAVA
"$JAVA_HOME/bin/javac" -d "$tmp/failjar" "$tmp/failjar/Fail.java"
(cd "$tmp/failjar" && "$JAVA_HOME/bin/jar" cfe fail.jar Fail Fail.class)
run "$WEIR" run -d "${fm[@]}" -cm claim "$tmp/failjar/fail.jar"
expect_rc 1
(($(wc -l <"$ERR_FILE") <= 2)) || fail "the error takes $(wc -l <"$ERR_FILE") lines, not 1-2"
expect_err_has "root cause: java.lang.IllegalStateException: weir compat: this program fails on purpose"
expect_err_has "hint: run with -v"
! grep -q "restoreMode' is deprecated" "$flink_work"/log/*standalonesession*.log ||
  fail "Flink logged that weir sent the deprecated restoreMode"
run "$WEIR" run -d -v "${fm[@]}" "$tmp/failjar/fail.jar"
expect_rc 1
expect_err_has "at org.apache.flink.runtime.webmonitor.handlers.JarRunHandler"
pass

check "scripts/peers/flink.sh stop: the JobManager and TaskManager are gone"
pids=()
for f in "$flink_work"/pid/*.pid; do [[ -s "$f" ]] && pids+=("$(<"$f")"); done
((${#pids[@]} == 2)) || fail "expected 2 Flink pid files, found ${#pids[@]}"
run "${peer_env[@]}" bash "$PEER" stop
expect_rc 0
for p in "${pids[@]}"; do
  ! kill -0 "$p" 2>/dev/null || fail "Flink process $p still runs after stop"
done
pass

check "weir list -m <stopped flink>: unreachable, exit 3"
run "$WEIR" list "${fm[@]}"
expect_rc 3
expect_err_has "cannot reach the runtime"
pass

echo "run time: $((SECONDS - t_start)) s"
finish
