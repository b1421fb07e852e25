#!/usr/bin/env bash
# The Kafka source against a real broker (scripts/peers/kafka.sh): its choice of input,
# empty partitions and a broker that is down at the start. kafka_number_sum with
# exactly-once output, read back with isolation.level=read_committed.
#
#   1. a topic pattern: the two topics it matches (two and one partitions) are read at
#      p=2 through two injected failures, each record once; a third topic it does not
#      match is not read;
#   2. starting offsets timestamp:<ms>: only the records produced at or after the
#      timestamp are read; a timestamp after every record reads nothing;
#   3. an empty partition: bounded at p=3 (one subtask owns only the empty partition)
#      the job finishes; unbounded, checkpoints complete, so the output commits;
#   4. the broker down at the start: the job fails and restarts per its strategy for as
#      long as the broker is down, the failures naming it, then runs exactly once when
#      it is back;
#   5. bad topic pattern arguments are refused, naming the problem and the way out.
#
#   bash tests/e2e/kafka_sources.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/kafka_lib.sh"

check "the Kafka peer starts"
E2E_CMD_TIMEOUT=120 run "$KAFKA" start
track_pid_file "$KAFKA_WORK_DIR/broker.pid"
expect_rc 0
BS="$(tail -n 1 "$OUT_FILE" | sed -n 's/^bootstrap.servers=//p')"
[[ "$BS" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "no bootstrap.servers=127.0.0.1:PORT line"
pass

check "--topic-pattern reads every record of the two topics it matches once, through two failures (p=2)"
"$KAFKA" topic pat-a 2
run "$KCLIENT" produce "$BS" pat-a 1 3000
expect_rc 0
run "$KCLIENT" produce "$BS" pat-b 3001 5000
expect_rc 0
# Matches neither (the pattern must match the whole name): read, it would add 5001..6000.
run "$KCLIENT" produce "$BS" pat-bc 5001 6000
expect_rc 0
run "$WEIR" run -v -p 2 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "${restart[@]}" \
  "$KAFKA_SUM" --bootstrap-servers "$BS" --topic-pattern 'pat-[ab]' --output-topic pat-out \
  --transactional-id-prefix ppat --bounded --rate 2000 --fail-at 1500,4000
expect_rc 0
expect_out_has "has finished."
restarts="$(grep -c 'status=RESTARTING' "$ERR_FILE" || true)"
[[ "$restarts" == 2 ]] || fail "the job restarted $restarts times, not 2"
verify_sums pat-out 5000 exact
pass

check "--starting-offsets timestamp:<ms> reads only the records produced at or after it (p=2)"
"$KAFKA" topic ts 2
run "$KCLIENT" produce "$BS" ts 1 1000
expect_rc 0
sleep 0.5
ts_ms="$(date +%s%3N)"
sleep 0.5
run "$KCLIENT" produce "$BS" ts 1001 3000
expect_rc 0
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "$KAFKA_SUM" \
  --bootstrap-servers "$BS" --input-topic ts --output-topic ts-out --transactional-id-prefix pts \
  --starting-offsets "timestamp:$ts_ms" --bounded
expect_rc 0
expect_out_has "has finished."
verify_sums ts-out 3000 exact 1001
pass

check "--starting-offsets timestamp:<ms> after every record: a bounded job reads nothing and finishes"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "$KAFKA_SUM" \
  --bootstrap-servers "$BS" --input-topic ts --output-topic ts-late-out --transactional-id-prefix ptl \
  --starting-offsets "timestamp:$((ts_ms + 3600000))" --bounded
expect_rc 0
expect_out_has "has finished."
run "$KCLIENT" consume "$BS" ts-late-out read_committed
expect_rc 0
expect_out_empty
pass

check "an empty partition does not hold back a bounded job: p=3, one subtask owns only the empty partition"
"$KAFKA" topic idle 2
run "$KCLIENT" produce "$BS" idle 1 4000
expect_rc 0
"$KAFKA" partitions idle 3  # partition 2 stays empty; partitions 0, 1, 2 go to three subtasks
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "$KAFKA_SUM" \
  --bootstrap-servers "$BS" --input-topic idle --output-topic idle-out --transactional-id-prefix pidle --bounded
expect_rc 0
expect_out_has "has finished."
verify_sums idle-out 4000 exact
pass

check "unbounded, the subtask of the empty partition does not block checkpoints: the output commits (p=3)"
port="$(free_port)"
"$WEIR" run -p 3 -D "rest.port=$port" -D execution.checkpointing.interval=100ms "$KAFKA_SUM" \
  --bootstrap-servers "$BS" --input-topic idle --output-topic idle-out2 --transactional-id-prefix pidle2 \
  >"$tmp/idle.out" 2>"$tmp/idle.err" </dev/null &
idle_pid=$!
track_pid "$idle_pid"
# Committed only when a checkpoint completes, which needs the barrier of every subtask.
seen=0
for _ in $(seq 150); do
  seen="$(timeout 10 "$KCLIENT" consume "$BS" idle-out2 read_committed 2>/dev/null | wc -l || true)"
  ((seen >= 4000)) && break
  sleep 0.2
done
((seen >= 4000)) || fail "read_committed saw $seen of 4000 records within 30 s"
run "$WEIR" cancel -m "localhost:$port" "$(submitted_job "$tmp/idle.out")"
expect_rc 0
wait "$idle_pid" 2>/dev/null || true
verify_sums idle-out2 4000 exact
pass

check "the broker down at the start: the job fails and restarts while it is down, then runs exactly once"
"$KAFKA" topic down 2
run "$KCLIENT" produce "$BS" down 1 6000
expect_rc 0
run "$KAFKA" stop
expect_rc 0
port="$(free_port)"
"$WEIR" run -v -p 2 -D "rest.port=$port" -D execution.checkpointing.interval=100ms -D restart-strategy.type=fixed-delay \
  -D restart-strategy.fixed-delay.attempts=100000 -D restart-strategy.fixed-delay.delay=300ms \
  "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic down --output-topic down-out --transactional-id-prefix pdown \
  --bounded --rate 3000 --broker-timeout-ms 1000 >"$tmp/down.out" 2>"$tmp/down.err" </dev/null &
down_pid=$!
track_pid "$down_pid"
# restarts_at_least N: the job was restarted N times or more.
restarts_at_least() { (($(grep -c "status=RESTARTING" "$tmp/down.err" || true) >= $1)); }
if ! wait_until 60 restarts_at_least 3; then
  LAST_CMD="weir run (the broker down)"
  cp "$tmp/down.out" "$OUT_FILE"
  cp "$tmp/down.err" "$ERR_FILE"
  fail "fewer than 3 restarts within 60 s while the broker was down"
fi
kill -0 "$down_pid" 2>/dev/null || fail "the job ended while the broker was down"
grep -F "'$BS'" "$tmp/down.err" | grep -q " failed: " || fail "no task failure names the unreachable broker '$BS'"
echo "  $(grep -c "status=RESTARTING" "$tmp/down.err") restarts while the broker was down"
E2E_CMD_TIMEOUT=120 run "$KAFKA" start
expect_rc 0
await_exit "$down_pid" 120 "weir run (the broker down at the start)" "$tmp/down.out" "$tmp/down.err"
expect_rc 0
expect_out_has "has finished."
verify_sums down-out 6000 exact
pass

check "bad topic pattern arguments exit 1 and name the problem and the way out"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic ts --topic-pattern 'pat-.*' \
  --output-topic x --delivery-guarantee none
expect_rc 1
expect_err_has "--input-topic and --topic-pattern exclude each other: give one of them"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers "$BS" --topic-pattern 'pat-[ab' --output-topic x \
  --delivery-guarantee none
expect_rc 1
expect_err_has "--topic-pattern 'pat-[ab' is not a valid regular expression"
expect_err_has "give an ECMAScript regex that whole topic names match"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers "$BS" --topic-pattern 'pat-.*' --output-topic pat-out \
  --delivery-guarantee none
expect_rc 1
expect_err_has "--topic-pattern 'pat-.*' matches the output topic 'pat-out': narrow the pattern or rename --output-topic"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers "$BS" --output-topic x --delivery-guarantee none
expect_rc 1
expect_err_has "--input-topic is required (or --topic-pattern REGEX"
pass

check "the peer stops"
run "$KAFKA" stop
expect_rc 0
pass

finish
