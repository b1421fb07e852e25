#!/usr/bin/env bash
# End-to-end exactly-once at the edges of ordinary workflows:
#   1. a bounded job whose sources end at different times, with checkpointing, runs to
#      the end (FLIP-147) and commits every record once;
#   2. number_sum rescaled through savepoints into one output directory, p=3 -> 1 -> 3,
#      then run to the end: every n once, sums right (part files never collide);
#   3. word_count with a throttled parallel file source, stopped with savepoints and
#      restored 2 -> 3 -> 1 (the source's splits move with its state): every word
#      occurrence counted once.
#
#   bash tests/e2e/edges.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

checkpoints=(-D execution.checkpointing.interval=100ms)

check "a bounded job whose sources end at different times finishes with checkpointing on, output exact"
in1="$tmp/in-uneven"
mkdir -p "$in1"
make_text "$in1" a.txt 200000 1
make_text "$in1" b.txt 20000 2
make_text "$in1" c.txt 2000 3
E2E_CMD_TIMEOUT=60 run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${checkpoints[@]}" \
  -D "execution.checkpointing.dir=file://$tmp/ck-uneven" "$WORD_COUNT" --input "$in1" --output "$tmp/out-uneven"
expect_rc 0 "the job must end by itself"
expect_out_has "has finished."
expected_word_counts "$in1" "$tmp/expected-uneven"
expect_committed "$tmp/expected-uneven" "$tmp/out-uneven" "word_count over files of 200000, 20000 and 2000 lines"
pass

port="$(free_port)"
m=(-m "localhost:$port")
check "weir-runtime starts with checkpoints every 100 ms"
start_runtime "$port" "${checkpoints[@]}"
pass

submit() { submit_job "$port" "$@"; }
stop_with_savepoint() {  # stop_with_savepoint: stops $job into $tmp/sp; sets sp_path
  run "$WEIR" stop "${m[@]}" -p "$tmp/sp" "$job"
  expect_rc 0
  sp_path="$(savepoint_path)"
  [[ -d "$sp_path" ]] || fail "no savepoint directory printed"
  wait_until 30 job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after stop"
}

out2="$tmp/out-rescale"
check "number_sum p=3, stopped with a savepoint, restored at p=1, stopped, restored at p=3, stopped"
submit -p 3 "$NUMBER_SUM" --count 0 --rate 3000 --output "$out2"
sleep 1
stop_with_savepoint
submit -p 1 -s "$sp_path" "$NUMBER_SUM" --count 0 --rate 3000 --output "$out2"
sleep 1
stop_with_savepoint
submit -p 3 -s "$sp_path" "$NUMBER_SUM" --count 0 --rate 3000 --output "$out2"
sleep 1
stop_with_savepoint
pass

check "the committed output is every n in 1..N exactly once with correct running sums"
n="$(cat "$out2"/part-* | cut -d, -f1 | sort -n | tail -n 1)"
[[ -n "$n" && "$n" -gt 3000 ]] || fail "too little output after three runs: N=$n"
expected_number_sum "$n" "$tmp/expected-rescale"
expect_committed "$tmp/expected-rescale" "$out2" "number_sum rescaled 3 -> 1 -> 3"
pass

in3="$tmp/in-rated"
out3="$tmp/out-rated"
mkdir -p "$in3"
for i in 1 2 3 4 5; do make_text "$in3" "f$i.txt" 2500 "$((10 + i))"; done
check "word_count with a throttled parallel source: p=2, stop, restore at p=3, stop, restore at p=1 to the end"
submit -p 2 "$WORD_COUNT" --input "$in3" --output "$out3" --rate 1500
sleep 1
stop_with_savepoint
submit -p 3 -s "$sp_path" "$WORD_COUNT" --input "$in3" --output "$out3" --rate 1500
sleep 1
stop_with_savepoint
submit -p 1 -s "$sp_path" "$WORD_COUNT" --input "$in3" --output "$out3"
wait_until 60 job_state_is "$port" "$job" FINISHED || fail "the last run did not finish"
pass

check "every line of every file was counted exactly once across the three runs"
expected_word_counts "$in3" "$tmp/expected-rated"
expect_committed "$tmp/expected-rated" "$out3" "word_count rescaled 2 -> 3 -> 1"
pass

finish
