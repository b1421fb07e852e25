#!/usr/bin/env bash
# End-to-end: the operator's toolkit against weir-runtime. Savepoint, stop with a
# savepoint, move the savepoint, restore it at p=3, stop again, restore from the
# _metadata file at p=1 and run to the end: the committed number_sum output holds
# every n exactly once with correct sums. Dispose; -n; and the bad inputs.
#
#   bash tests/e2e/savepoint_restore.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

count=200000
out="$tmp/out"
sp="$tmp/savepoints"
port="$(free_port)"
m=(-m "localhost:$port")

check "weir-runtime starts with checkpoints every 100 ms"
start_runtime "$port" -D execution.checkpointing.interval=100ms
pass

submit() { submit_job "$port" "$@"; }

check "run 1 (p=2) is submitted and runs"
submit -p 2 "$NUMBER_SUM" --count "$count" --rate 15000 --output "$out"
pass

check "weir savepoint <job> <dir> prints Flink's lines and the job goes on"
sleep 0.5
run "$WEIR" savepoint "${m[@]}" "$job" "$sp"
expect_rc 0
expect_out_line "Triggering savepoint for job $job\\."
expect_out_line "Waiting for response\\.\\.\\."
expect_out_line "Savepoint completed\\. Path: file:.*/savepoint-${job:0:6}-[0-9a-f]{12}"
expect_out_line "You can resume your program from this savepoint with the run command\\."
intermediate="$(savepoint_path)"
[[ -f "$intermediate/_metadata" ]] || fail "no _metadata in '$intermediate'"
job_state_is "$port" "$job" RUNNING || fail "the job is not RUNNING after an intermediate savepoint"
pass

check "weir inspect --verify reads the savepoint without a runtime"
run "$WEIR" inspect --verify "$intermediate"
expect_rc 0
expect_out_has "parity-sum"
pass

check "weir stop -p <dir> <job> stops with a savepoint; the job is FINISHED"
sleep 0.5
run "$WEIR" stop "${m[@]}" -p "$sp" "$job"
expect_rc 0
expect_out_line "Suspending job \"$job\" with a CANONICAL savepoint\\."
expect_out_has "Savepoint completed. Path: "
stop1="$(savepoint_path)"
wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop"
pass

check "the savepoint is relocatable: moved, then restored at p=3"
mv "$stop1" "$tmp/moved"
submit -p 3 -s "$tmp/moved" "$NUMBER_SUM" --count "$count" --rate 15000 --output "$out"
sleep 0.7
run "$WEIR" stop "${m[@]}" --type native -p "$sp" "$job"
expect_rc 0
expect_out_line "Suspending job \"$job\" with a NATIVE savepoint\\."
stop2="$(savepoint_path)"
wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop"
pass

check "restored from the _metadata file at p=1, the job runs to the end"
submit -p 1 -s "$stop2/_metadata" "$NUMBER_SUM" --count "$count" --output "$out"
wait_until 60 job_state_is "$port" "$job" FINISHED || fail "job $job did not finish"
pass

check "the committed output holds every n in 1..$count exactly once with correct running sums"
expect_number_sum_committed "$out" "$count"
pass

check "weir savepoint -d disposes of a savepoint"
run "$WEIR" savepoint "${m[@]}" -d "$intermediate"
expect_rc 0
expect_out_line "Savepoint '.*' disposed\\."
[[ ! -e "$intermediate" ]] || fail "'$intermediate' still exists"
pass

check "-n allows dropping state of an operator the job no longer has"
run "$WEIR" run "${m[@]}" -s "$stop2" "$NUMBER_SUM" --count 10 --sink discard
expect_rc 1
expect_err_has "file-sink"
run "$WEIR" run "${m[@]}" -n -s "$stop2" "$NUMBER_SUM" --count 10 --sink discard
expect_rc 0
pass

check "bad input: unknown job (1), malformed id (2), not a savepoint (1), no directory (1), -p above max parallelism (1)"
run "$WEIR" savepoint "${m[@]}" 0123456789abcdef0123456789abcdef "$sp"
expect_rc 1
run "$WEIR" savepoint "${m[@]}" not-a-job "$sp"
expect_rc 2
run "$WEIR" savepoint "${m[@]}" -d "$out"
expect_rc 1
run "$WEIR" run "${m[@]}" -s "$out" "$NUMBER_SUM" --count 10
expect_rc 1
expect_err_has "_metadata"
run "$WEIR" run "${m[@]}" -p 200 -s "$stop2" "$NUMBER_SUM" --count 10 --output "$tmp/out2"
expect_rc 1
expect_err_has "max parallelism"
submit "$NUMBER_SUM" --count 0 --rate 100 --sink discard
run "$WEIR" savepoint "${m[@]}" "$job"
expect_rc 1
expect_err_has "savepoint-dir"
run "$WEIR" stop "${m[@]}" -p "$tmp/no/such/../x" "$(printf '%032d' 0)"
expect_rc 1
job_state_is "$port" "$job" RUNNING || fail "a bad request disturbed the running job"
pass

check "savepoint and stop against an endpoint nobody listens on: exit 3"
run "$WEIR" savepoint -m "localhost:$(free_port)" "$job" "$sp"
expect_rc 3
pass

# --- keyed_state --value-bytes: the state size the benchmarks ask for ------------------
keyed_state="$BUILD_DIR/examples/keyed_state.so"
check "keyed_state --keys 50 --value-bytes 1000: a savepoint holds 50 payloads of about 1000 bytes besides the sums"
submit "$keyed_state" --keys 50 --value-bytes 1000 --count 0 --rate 1000
wait_until 10 checkpoints_at_least "$port" "$job" completed 1 || fail "no checkpoint completed"
run "$WEIR" stop "${m[@]}" -p "$sp" "$job"
expect_rc 0
run "$WEIR" inspect --verify --output json "$(savepoint_path)"
expect_rc 0
python3 - "$OUT_FILE" <<'CHECK' || fail "the savepoint's keyed states are not 50 payloads of 1000 bytes and 50 sums"
import json, sys
states = {s["name"]: s for o in json.load(open(sys.argv[1]))["operators"] for s in o.get("states", [])}
payload, total = states["payload"], states["sum"]
sys.exit(0 if payload["keys"] == 50 and 50_000 <= payload["bytes"] < 55_000 and total["keys"] == 50 else 1)
CHECK
pass

check "keyed_state refuses a negative or too large --value-bytes, naming the option (exit 1)"
for bad in -1 68000000 many; do
  run "$WEIR" run "${m[@]}" "$keyed_state" --value-bytes "$bad"
  expect_rc 1
  expect_err_has "--value-bytes"
done
pass

finish
