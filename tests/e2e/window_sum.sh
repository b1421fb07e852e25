#!/usr/bin/env bash
# End-to-end exactly-once of event-time windows: window_sum (numbers 1..N with event
# time n ms, keyed by parity, tumbling windows) must commit each window and key once
# with the right sum and count, through injected failures, kill -9 of weir-runtime with
# restores at another parallelism (tumbling and sliding windows), and stop-with-savepoint;
# stop --drain fires the open windows before its savepoint, stop without --drain leaves
# them to the restored job.
#
#   bash tests/e2e/window_sum.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

WINDOW_SUM="$BUILD_DIR/examples/window_sum.so"
[[ -e "$WINDOW_SUM" ]] || fail "'$WINDOW_SUM' was not built (ninja -C $BUILD_DIR window_sum)"

# committed_lines DIR: the committed lines, sorted.
committed_lines() { cat "$1"/part-* 2>/dev/null | sort; }

window=250
cpdir="$tmp/checkpoints"
conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")

check "bounded run at p=2: every window and key once, fired by the watermark and the end of input"
out="$tmp/out-plain"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "$WINDOW_SUM" --count 5000 --window-ms 100 --output "$out"
expect_rc 0
expected_window_sum 5000 100 "$tmp/expected-plain"
expect_committed "$tmp/expected-plain" "$out" "window_sum --count 5000"
pass

check "injected failures (--fail-at) with checkpoints: restored windows fire once"
out="$tmp/out-failures"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${conf[@]}" -D restart-strategy.type=fixed-delay \
  -D restart-strategy.fixed-delay.attempts=10 -D restart-strategy.fixed-delay.delay=0s "$WINDOW_SUM" --count 20000 --rate 20000 --window-ms "$window" \
  --fail-at 3001,9002,15003 --output "$out"
expect_rc 0
# Each attempt names its part files part-<attempt id>-...: restarted attempts committed too.
attempts="$(ls "$out" | sed -n 's/^part-\([0-9a-f]*\)-.*/\1/p' | sort -u | wc -l)"
((attempts >= 2)) || fail "the committed files come from $attempts attempt(s): the injected failures did not restart the job"
expected_window_sum 20000 "$window" "$tmp/expected-20000"
expect_committed "$tmp/expected-20000" "$out" "window_sum through 3 failures"
pass

# kill_rounds WHAT "P..." LAST_P ARGS...: window_sum ARGS killed with kill -9 once at each
# parallelism P (at --rate 8000), each run restored from the newest checkpoint of the one
# before, then restored at LAST_P and run to the end. WHAT prefixes the checks' names.
kill_rounds() {
  local what="$1" parallelisms="$2" last_p="$3" p
  shift 3
  restore_from=""
  job_finished=0
  for p in $parallelisms; do
    check "${what}kill -9 round at p=$p${restore_from:+, restored from the newest checkpoint}"
    crash_round "$p" "$WINDOW_SUM" --rate 8000 "$@"
    pass
    ((job_finished)) && break
  done
  ((job_finished)) && return
  check "${what}the last run, restored at p=$last_p, runs to the end"
  run "$WEIR" run -p "$last_p" -D "rest.port=$(free_port)" "${conf[@]}" -s "$restore_from" "$WINDOW_SUM" "$@"
  expect_rc 0
  expect_out_has "has finished."
  pass
}

count=30000
out="$tmp/out-kill"
crash_conf=("${conf[@]}")
kill_rounds "" "3 1 2" 2 --count "$count" --window-ms "$window" --output "$out"
check "through the kills every window and key was committed once with its sum and count"
expected_window_sum "$count" "$window" "$tmp/expected-kill"
expect_committed "$tmp/expected-kill" "$out" "window_sum through kill -9"
pass

# Sliding windows (an accumulator per slide, merged when a window fires): 250 ms every 50 ms.
out="$tmp/out-sliding"
kill_rounds "sliding windows: " "2 3" 1 --count "$count" --window-ms "$window" --slide-ms 50 --output "$out"
check "sliding windows: through the kills every window and key was committed once with its sum and count"
expected_sliding_window_sum "$count" "$window" 50 "$tmp/expected-sliding"
expect_committed "$tmp/expected-sliding" "$out" "window_sum --slide-ms 50 through kill -9"
pass

port="$(free_port)"
start_runtime "$port" "${conf[@]}"
sp="$tmp/savepoints"

check "window_sum runs on weir-runtime at p=2"
out="$tmp/out-stop"
# Long enough (about 15 s at this rate) that the job is still running when it is stopped,
# also on a loaded machine.
stop_count=90000
expected_window_sum "$stop_count" "$window" "$tmp/expected-stop"
submit_job "$port" -p 2 "$WINDOW_SUM" --count "$stop_count" --rate 6000 --window-ms "$window" --output "$out"
sleep 1.5
pass

check "REST: each window subtask's input watermark advances (GET /jobs/:id/vertices/:vid/watermarks)"
run_http "http://localhost:$port/jobs/$job"
vid="$(json_get "[v['id'] for v in d['vertices'] if v['name'].startswith('Window Sum')][0]")"
[[ "$vid" =~ ^[0-9a-f]{32}$ ]] || fail "no 'Window Sum' vertex in GET /jobs/$job"
run_http "http://localhost:$port/jobs/$job/vertices/$vid/watermarks"
expect_rc "HTTP 200"
[[ "$(json_get "sorted(m['id'] for m in d)")" == "['0.currentInputWatermark', '1.currentInputWatermark']" ]] ||
  fail "not one currentInputWatermark per subtask"
first="$(json_get "min(int(m['value']) for m in d)")"
((first > 0)) || fail "a window subtask has no watermark after 1.5 s"
sleep 0.5
run_http "http://localhost:$port/jobs/$job/vertices/$vid/watermarks"
later="$(json_get "min(int(m['value']) for m in d)")"
((later > first)) || fail "the watermark did not advance in 0.5 s ($first, then $later)"
run_http "http://localhost:$port/jobs/$job/vertices/0123456789abcdef0123456789abcdef/watermarks"
expect_rc "HTTP 404"
pass

check "stop without --drain fires no open window; restored at p=3 the job fires them, each once"
run "$WEIR" stop -m "localhost:$port" -p "$sp" "$job"
expect_rc 0
stopped="$(savepoint_path)"
[[ -n "$stopped" ]] || fail "no savepoint path printed"
wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop"
committed_lines "$out" >"$tmp/at-stop"
sort "$tmp/expected-stop" >"$tmp/expected-stop-sorted"
[[ -s "$tmp/at-stop" ]] || fail "no window was committed before the stop"
extra="$(comm -23 "$tmp/at-stop" "$tmp/expected-stop-sorted" | head -n 3)"
[[ -z "$extra" ]] || fail "stop without --drain committed windows that were not complete: $extra"
(($(wc -l <"$tmp/at-stop") < $(wc -l <"$tmp/expected-stop"))) || fail "every window was committed before the stop"
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" -s "$stopped" "$WINDOW_SUM" --count "$stop_count" \
  --window-ms "$window" --output "$out"
expect_rc 0
expect_committed "$tmp/expected-stop" "$out" "window_sum stopped and restored at p=3"
pass

check "stop --drain fires every open window (the last one partial) before the savepoint"
out="$tmp/out-drain"
submit_job "$port" -p 1 "$WINDOW_SUM" --count 0 --rate 5000 --window-ms "$window" --output "$out"
sleep 1.2
run "$WEIR" stop -m "localhost:$port" --drain -p "$sp" "$job"
expect_rc 0
wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop --drain"
# One source subtask emitted 1..M: the counts of the committed windows add up to M.
m="$(cat "$out"/part-* | awk -F, '{ m += $5 } END { print m + 0 }')"
((m > 0)) || fail "nothing was committed"
expected_window_sum "$m" "$window" "$tmp/expected-drain"
expect_committed "$tmp/expected-drain" "$out" "window_sum drained after $m numbers"
pass

RISING="$BUILD_DIR/examples/rising_temperature.so"
[[ -e "$RISING" ]] || fail "'$RISING' was not built (ninja -C $BUILD_DIR rising_temperature)"
# expected_alerts N S D FILE: the alerts of rising_temperature --count N --sensors S --rise-ms D.
expected_alerts() {
  awk -v n="$1" -v s="$2" -v d="$3" 'BEGIN { for (i = 1; i <= n; i++) {
    k = i % s; temp = (i * 7919) % 101; t = timer[k]
    if (t && t < i) t = 0
    if ((k in last) && temp > last[k]) { if (!t) { t = i + d; fire[k "," t] = 1 } }
    else if (t) { delete fire[k "," t]; t = 0 }
    last[k] = temp; timer[k] = t }
    for (a in fire) print a }' >"$4"
}
count=30000
out="$tmp/out-alerts"
cpdir="$tmp/checkpoints-alerts"
crash_conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
restore_from=""
job_finished=0
for p in 2 1 3; do
  check "rising_temperature: kill -9 round at p=$p${restore_from:+, timers restored from the newest checkpoint}"
  crash_round "$p" "$RISING" --count "$count" --rate 8000 --output "$out"
  pass
  ((job_finished)) && break
done
if ((!job_finished)); then
  check "rising_temperature: the last run, restored at p=2, runs to the end"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${crash_conf[@]}" -s "$restore_from" "$RISING" \
    --count "$count" --output "$out"
  expect_rc 0
  pass
fi
check "rising_temperature: every alert (a fired event-time timer) was committed once"
expected_alerts "$count" 10 30 "$tmp/expected-alerts"
(($(wc -l <"$tmp/expected-alerts") > 100)) || fail "the expected alerts are too few to tell anything"
expect_committed "$tmp/expected-alerts" "$out" "rising_temperature through kill -9"
pass

check "bad input: --window-ms 0 is refused naming the option"
run "$WEIR" run -D "rest.port=$(free_port)" "$WINDOW_SUM" --window-ms 0
expect_rc 1
expect_err_has "--window-ms must be a positive number"
pass

finish
