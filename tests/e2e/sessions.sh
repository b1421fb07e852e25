#!/usr/bin/env bash
# End-to-end exactly-once of session windows with a process window function and a side
# output for late records: the sessions example (numbers keyed by n mod K, one session per
# key and block of numbers, every L-th number late) must commit each session once with
# all its numbers, and each late number once, through kill -9 of weir-runtime with
# restores at p=1 and p=2 from checkpoints taken at p=3.
#
#   bash tests/e2e/sessions.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SESSIONS="$BUILD_DIR/examples/sessions.so"
[[ -e "$SESSIONS" ]] || fail "'$SESSIONS' was not built (ninja -C $BUILD_DIR sessions)"

check "bounded run at p=2: each session once with all its numbers, late numbers in the side output"
out="$tmp/out-plain"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "$SESSIONS" --count 6000 --late-every 97 --rate 5000 \
  --output "$out" --late-output "$tmp/late-plain"
expect_rc 0
expect_sessions 6000 97 "$out" "$tmp/late-plain"
pass

count=20000
out="$tmp/out-kill"
late_out="$tmp/late-kill"
cpdir="$tmp/checkpoints"
crash_conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
restore_from=""
job_finished=0
for p in 3 1; do
  check "kill -9 round at p=$p${restore_from:+, restored from the newest checkpoint}"
  crash_round "$p" "$SESSIONS" --count "$count" --late-every 97 --rate 8000 --output "$out" --late-output "$late_out"
  pass
  ((job_finished)) && break
done
if ((!job_finished)); then
  check "the last run, restored at p=2, runs to the end"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${crash_conf[@]}" -s "$restore_from" "$SESSIONS" \
    --count "$count" --late-every 97 --output "$out" --late-output "$late_out"
  expect_rc 0
  expect_out_has "has finished."
  pass
fi
check "through the kills every session and every late number was committed once"
expect_sessions "$count" 97 "$out" "$late_out"
hidden="$(find "$out" "$late_out" -name '.*' -type f | wc -l)"
[[ "$hidden" -eq 0 ]] || fail "$hidden hidden (uncommitted) files were left in the output directories"
pass

check "bad input: --gap-ms 0 and one directory for both outputs are refused naming the option"
run "$WEIR" run -D "rest.port=$(free_port)" "$SESSIONS" --gap-ms 0
expect_rc 1
expect_err_has "--gap-ms must be a positive number"
run "$WEIR" run -D "rest.port=$(free_port)" "$SESSIONS" --output "$tmp/x" --late-output "$tmp/x"
expect_rc 1
expect_err_has "--late-output must be another directory than --output"
pass

finish
