#!/usr/bin/env bash
# End-to-end exactly-once with a real Kafka broker (scripts/peers/kafka.sh): Kafka ->
# kafka_number_sum -> Kafka, read back with isolation.level=read_committed.
#
#   1. p=1, four injected task failures (in-process restarts from the latest checkpoint);
#   2. p=3, six kill -9 of weir-runtime, each run resubmitted with -s <the job's
#      checkpoint directory> (the newest retained checkpoint), one of them at p=2; a
#      lingering transaction of the prefix (as a crash leaves) is aborted on restore;
#   3. at-least-once through failures loses nothing;
#   4. partition discovery, offsets committed back to the group, starting offsets
#      committed and latest, delivery none flushed at the end;
#   5. the broker stopped mid-run: the job fails, restarts and ends exactly once;
#   6. bad input: unreachable broker, unknown topic, transaction timeout not longer
#      than the checkpoint interval, bad arguments.
# Every committed output must hold each input number exactly once with the right
# running sums per parity.
#
#   bash tests/e2e/kafka_exactly_once.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
source "$(dirname "${BASH_SOURCE[0]}")/kafka_lib.sh"

# open_transactions PREFIX: the open transactions of PREFIX, as Kafka's own
# TransactionsCommand lists them.
open_transactions() {
  "$KAFKA" transactions list 2>/dev/null | awk -v p="$1-" 'index($1, p) == 1 && $4 ~ /Ongoing|Prepare/ { print $1 }'
}

check "the Kafka peer starts and prints bootstrap.servers as its last line"
E2E_CMD_TIMEOUT=120 run "$KAFKA" start
track_pid_file "$KAFKA_WORK_DIR/broker.pid"
expect_rc 0
BS="$(tail -n 1 "$OUT_FILE" | sed -n 's/^bootstrap.servers=//p')"
[[ "$BS" =~ ^127\.0\.0\.1:[0-9]+$ ]] || fail "no bootstrap.servers=127.0.0.1:PORT line"
run "$KAFKA" status
expect_rc 0
pass

check "p=1: four injected failures, bounded input of 20000 numbers, exactly once"
run "$KCLIENT" produce "$BS" in1 1 20000
expect_rc 0
run "$WEIR" run -p 1 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "${restart[@]}" \
  "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in1 --output-topic out1 --transactional-id-prefix p1 \
  --group-id g1 --bounded --rate 8000 --fail-at 2000,7000,7001,15000
expect_rc 0
expect_out_has "has finished."
verify_sums out1 20000 exact
pass

check "p=3: six kill -9 of weir-runtime (one restore at p=2), restoring from the newest retained checkpoint"
"$KAFKA" topic in3 3
"$KAFKA" topic out3 3
# More than the kill rounds can read (6 rounds of at most 1.4 s at 2000 records/s per
# subtask), so the last run has something left to restore and finish.
count=80000
run "$KCLIENT" produce "$BS" in3 1 "$count"
expect_rc 0
cpdir="$tmp/checkpoints"
conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
kafka_args=(--bootstrap-servers "$BS" --input-topic in3 --output-topic out3 --transactional-id-prefix p3
  --group-id g3 --bounded)
crash_conf=("${conf[@]}")
crash_after="0.6 1.4"
restore_from=""
job_finished=0
for ((k = 1; k <= 6 && !job_finished; k++)); do
  p=3
  ((k == 4)) && p=2
  crash_round "$p" "$KAFKA_SUM" "${kafka_args[@]}" --rate 2000
  ((job_finished)) || echo "  round $k (p=$p): killed; next restore from $(basename "$restore_from")"
done
pass

check "a kill leaves open transactions of the prefix; a crashed writer's one is added"
# A transaction of old subtask 4 (owned by subtask 4 mod 3 = 1 now), left open on
# out3 as a crash would leave it: it holds back every read_committed reader of out3.
run "$KCLIENT" hang "$BS" p3-4-999999 out3
expect_rc 0
open_before="$(open_transactions p3)"
echo "  open before the restore: $(echo $open_before)"
grep -qx "p3-4-999999" <<<"$open_before" || fail "the lingering transaction p3-4-999999 is not listed as open"
pass

check "the last run (embedded, p=3) restores from the newest checkpoint and ends the bounded job"
if ((job_finished)); then
  fail "the bounded job finished during the kill rounds: raise count so the last run restores"
fi
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" "${conf[@]}" "${restart[@]}" -s "$restore_from" \
  "$KAFKA_SUM" "${kafka_args[@]}"
expect_rc 0
expect_out_has "has finished."
expect_err_has "restoring from the newest complete checkpoint"
pass

check "read_committed sees each of the $count numbers exactly once with the right running sums"
verify_sums out3 "$count" exact
pass

check "no transaction of the prefix is left open (lingering ones were aborted on restore)"
left="$(open_transactions p3)"
[[ -z "$left" ]] || fail "still open: $(echo $left)"
pass

check "at-least-once through two injected failures at p=2 loses nothing"
"$KAFKA" topic in2 2
run "$KCLIENT" produce "$BS" in2 1 10000
expect_rc 0
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "${restart[@]}" \
  "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in2 --output-topic out2 --delivery-guarantee at-least-once \
  --bounded --rate 5000 --fail-at 3000,8000
expect_rc 0
verify_sums out2 10000 at-least
pass

check "partition discovery: a partition added while the job runs is read (p=2, unbounded), exactly once"
run "$KCLIENT" produce "$BS" disc 1 1000
expect_rc 0
port="$(free_port)"
"$WEIR" run -p 2 -D "rest.port=$port" -D execution.checkpointing.interval=100ms "$KAFKA_SUM" \
  --bootstrap-servers "$BS" --input-topic disc --output-topic disc-out --transactional-id-prefix pd --group-id gd \
  --partition-discovery-ms 500 >"$tmp/disc.out" 2>"$tmp/disc.err" </dev/null &
disc_pid=$!
track_pid "$disc_pid"
"$KAFKA" partitions disc 2
run "$KCLIENT" produce "$BS" disc 1001 2000  # n to partition n mod 2: the odd ones to the new one
expect_rc 0
seen=0
for _ in $(seq 150); do
  seen="$(timeout 10 "$KCLIENT" consume "$BS" disc-out read_committed 2>/dev/null | wc -l || true)"
  ((seen >= 2000)) && break
  sleep 0.2
done
((seen >= 2000)) || fail "read_committed saw $seen of 2000 records within 30 s"
sleep 1  # a few more checkpoints complete, each committing the source's offsets to the group
run "$WEIR" cancel -m "localhost:$port" "$(submitted_job "$tmp/disc.out")"
expect_rc 0
wait "$disc_pid" 2>/dev/null || true
verify_sums disc-out 2000 exact
pass

check "committed offsets: the group's offsets were committed back; a bounded restart from them reads nothing"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "$KAFKA_SUM" \
  --bootstrap-servers "$BS" --input-topic disc --output-topic disc-again --transactional-id-prefix pd2 \
  --group-id gd --starting-offsets committed --bounded
expect_rc 0
expect_out_has "has finished."
run "$KCLIENT" consume "$BS" disc-again read_committed
expect_rc 0
expect_out_empty
pass

check "starting offsets latest: a bounded job started at the end reads nothing and finishes"
run "$WEIR" run -p 1 -D "rest.port=$(free_port)" -D execution.checkpointing.interval=100ms "$KAFKA_SUM" \
  --bootstrap-servers "$BS" --input-topic in1 --output-topic latest-out --transactional-id-prefix pl \
  --starting-offsets latest --bounded
expect_rc 0
expect_out_has "has finished."
run "$KCLIENT" consume "$BS" latest-out read_committed
expect_rc 0
expect_out_empty
pass

check "delivery none without checkpointing: a bounded job flushes everything at its end"
run "$WEIR" run -p 1 -D "rest.port=$(free_port)" "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in1 \
  --output-topic none-out --delivery-guarantee none --bounded
expect_rc 0
verify_sums none-out 20000 exact
pass

check "the broker stopped mid-run: the job fails, restarts once it is back, and ends exactly once"
run "$KCLIENT" produce "$BS" in4 1 12000
expect_rc 0
port="$(free_port)"
# Restarts every 500 ms for as long as the broker is away (its restart may take a while here).
"$WEIR" run -p 1 -D "rest.port=$port" -D execution.checkpointing.interval=100ms -D restart-strategy.type=fixed-delay \
  -D restart-strategy.fixed-delay.attempts=100000 -D restart-strategy.fixed-delay.delay=500ms \
  "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in4 --output-topic out4 --transactional-id-prefix p4 \
  --bounded --rate 3000 --broker-timeout-ms 3000 >"$tmp/broker-down.out" 2>"$tmp/broker-down.err" </dev/null &
job_pid=$!
track_pid "$job_pid"
sleep 1.5
"$KAFKA" stop
sleep 4
E2E_CMD_TIMEOUT=120 run "$KAFKA" start
expect_rc 0
await_exit "$job_pid" 120 "weir run (broker stopped mid-run)" "$tmp/broker-down.out" "$tmp/broker-down.err"
expect_rc 0
expect_out_has "has finished."
verify_sums out4 12000 exact
pass

check "an unreachable broker fails the job with an error naming it"
dead="127.0.0.1:$(free_port)"
run "$WEIR" run -D "rest.port=$(free_port)" -D execution.checkpointing.interval=1s -D restart-strategy.type=none \
  "$KAFKA_SUM" --bootstrap-servers "$dead" --input-topic in1 --output-topic x --transactional-id-prefix px \
  --broker-timeout-ms 2000
expect_rc 1
expect_err_has "'$dead'"
expect_err_ci "kafka"
pass

check "an unknown input topic fails the job with an error naming it"
run "$WEIR" run -D "rest.port=$(free_port)" -D execution.checkpointing.interval=1s -D restart-strategy.type=none \
  "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic no-such-topic --output-topic x --transactional-id-prefix px
expect_rc 1
expect_err_has "topic 'no-such-topic' does not exist"
pass

check "a transaction timeout not longer than the checkpoint interval is refused"
run "$WEIR" run -D "rest.port=$(free_port)" -D execution.checkpointing.interval=10s -D restart-strategy.type=none \
  "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in1 --output-topic x --transactional-id-prefix px \
  --transaction-timeout-ms 5000
expect_rc 1
expect_err_has "transaction.timeout.ms (5000 ms) must be longer than the checkpoint interval (10000 ms)"
pass

check "exactly-once without checkpointing is refused with the way out"
run "$WEIR" run -D "rest.port=$(free_port)" "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in1 \
  --output-topic x --transactional-id-prefix px --bounded
expect_rc 1
expect_err_has "exactly-once needs checkpointing"
expect_err_has "execution.checkpointing.interval"
pass

check "bad job arguments exit 1 (as every job argument error) and name the argument"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in1 --output-topic x --delivery-guarantee twice
expect_rc 1
expect_err_has "delivery guarantee 'twice' is not one of"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers "$BS" --input-topic in1 --output-topic x
expect_rc 1
expect_err_has "needs --transactional-id-prefix"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers "$BS" --output-topic x --delivery-guarantee none
expect_rc 1
expect_err_has "--input-topic is required"
run "$WEIR" run "$KAFKA_SUM" --bootstrap-servers localhost --input-topic a --output-topic b --delivery-guarantee none
expect_rc 1
expect_err_has "bootstrap server 'localhost' is not host:port"
pass

check "the peer stops"
run "$KAFKA" stop
expect_rc 0
run "$KAFKA" status
expect_rc 1
pass

finish
