#!/usr/bin/env bash
# End-to-end exactly-once of the broadcast state pattern: broadcast_rules (divisor rules
# broadcast to a keyed stream of the numbers 1..N, each number answered by an event-time
# timer with its position among its parity and the rules that divide it) must commit each
# number once with the right line, through injected failures, kill -9 of weir-runtime with
# restores at another parallelism (every new subtask reading the broadcast state of an old
# one, the rules source having finished), kill -9 with unaligned checkpoints holding in-flight
# data restored at p=3, 1 and 2, and stop-with-savepoint restored at another parallelism.
# Bad --divisors are refused naming the option (exit code 1, as for every job argument).
#
#   bash tests/e2e/broadcast_rules.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

RULES="$BUILD_DIR/examples/broadcast_rules.so"
[[ -e "$RULES" ]] || fail "'$RULES' was not built (ninja -C $BUILD_DIR broadcast_rules)"

divisors="3,5,7"
cpdir="$tmp/checkpoints"
conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")

check "bounded run at p=2: each number once, with the rules the broadcast state holds"
out="$tmp/out-plain"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "$RULES" --count 3000 --divisors "$divisors" --output "$out"
expect_rc 0
expected_rules 3000 "$divisors" "$tmp/expected-plain"
expect_committed "$tmp/expected-plain" "$out" "broadcast_rules --count 3000"
pass

check "bad --divisors: refused naming the option"
run "$WEIR" run -D "rest.port=$(free_port)" "$RULES" --count 10 --divisors "3,x"
expect_rc 1
expect_err_has "--divisors takes positive numbers"
pass

check "injected failures (--fail-at) with checkpoints: every number answered once"
out="$tmp/out-failures"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" -D restart-strategy.type=fixed-delay \
  -D restart-strategy.fixed-delay.attempts=10 -D restart-strategy.fixed-delay.delay=0s "$RULES" \
  --count 20000 --rate 20000 --fail-at 3001,9002,15003 --output "$out"
expect_rc 0
attempts="$(ls "$out" | sed -n 's/^part-\([0-9a-f]*\)-.*/\1/p' | sort -u | wc -l)"
((attempts >= 2)) || fail "the committed files come from $attempts attempt(s): the injected failures did not restart the job"
expected_rules 20000 "$divisors" "$tmp/expected-20000"
expect_committed "$tmp/expected-20000" "$out" "broadcast_rules through 3 failures"
pass

count=24000
out="$tmp/out-kill"
crash_conf=("${conf[@]}")
crash_after_checkpoint=1
restore_from=""
job_finished=0
for p in 3 1; do
  check "kill -9 round at p=$p${restore_from:+, restored from the newest checkpoint}"
  crash_round "$p" "$RULES" --count "$count" --rate 8000 --output "$out"
  pass
  ((job_finished)) && break
done
if ((!job_finished)); then
  check "the last run, restored at p=2, runs to the end"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" "$RULES" --count "$count" \
    --output "$out"
  expect_rc 0
  expect_out_has "has finished."
  pass
fi
check "through the kills every number was committed once with its position and rules"
expected_rules "$count" "$divisors" "$tmp/expected-kill"
expect_committed "$tmp/expected-kill" "$out" "broadcast_rules through kill -9"
pass

# As fast as it goes, the keyed side (a timer per number) holds the sources back: the
# unaligned checkpoints hold in-flight data on its inputs, and each restore at another
# parallelism gives it out edge by edge (broadcast: that of the old subtask whose
# broadcast state the new one takes).
count=6000000
out="$tmp/out-unaligned"
cpdir="$tmp/checkpoints-unaligned"
crash_conf=(-D execution.checkpointing.interval=80ms -D "execution.checkpointing.dir=$cpdir"
  -D execution.checkpointing.unaligned.enabled=true -D taskmanager.memory.segment-size=4kb)
crash_after="0.2 0.6"
restore_from=""
job_finished=0
in_flight=0
for p in 2 3 1; do
  check "unaligned: kill -9 round at p=$p${restore_from:+, restored from the newest checkpoint}"
  crash_round "$p" "$RULES" --count "$count" --output "$out"
  "$WEIR" inspect "$restore_from" 2>/dev/null | grep -q "(in-flight data: " && in_flight=$((in_flight + 1))
  pass
  ((job_finished)) && break
done
check "unaligned: restored checkpoints held in-flight data; the last run, restored at p=2, runs to the end"
((in_flight > 0)) || fail "none of the checkpoints the kills left held in-flight data"
if ((!job_finished)); then
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${crash_conf[@]}" -s "$restore_from" "$RULES" --count "$count" \
    --output "$out"
  expect_rc 0
fi
expected_rules "$count" "$divisors" "$tmp/expected-unaligned"
expect_committed "$tmp/expected-unaligned" "$out" "broadcast_rules through unaligned restores at p=3 and p=1"
pass
unset crash_after

port="$(free_port)"
start_runtime "$port" "${conf[@]}"
check "stop with a savepoint at p=2, restored at p=3: the broadcast state and timers carry over"
out="$tmp/out-stop"
stop_count=60000
submit_job "$port" -p 2 "$RULES" --count "$stop_count" --rate 8000 --output "$out"
sleep 1.5
run "$WEIR" stop -m "localhost:$port" -p "$tmp/savepoints" "$job"
expect_rc 0
stopped="$(savepoint_path)"
[[ -n "$stopped" ]] || fail "no savepoint path printed"
wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop"
[[ -n "$(cat "$out"/part-* 2>/dev/null | head -n 1)" ]] || fail "nothing was committed before the stop"
# The rules source had finished: the restored job gets its rules from the broadcast state
# alone (a copy of the 3 rules per subtask).
run "$WEIR" inspect --verify "$stopped"
expect_rc 0
sed -n "/^Operator 'rules-source'/,/^$/p" "$OUT_FILE" | grep -q "subtask 0: finished" ||
  fail "the rules source had not finished at the stop"
expect_out_has "operator list (broadcast) 'divisors': "
expect_out_line "  state: operator list \\(broadcast\\) 'divisors': [0-9]+ bytes, 6 elements"
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" -s "$stopped" "$RULES" --count "$stop_count" --output "$out"
expect_rc 0
expected_rules "$stop_count" "$divisors" "$tmp/expected-stop"
expect_committed "$tmp/expected-stop" "$out" "broadcast_rules stopped and restored at p=3"
pass

finish
