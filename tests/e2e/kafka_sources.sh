#!/usr/bin/env bash
# The Kafka source's choice of input against a real broker (scripts/peers/kafka.sh):
# kafka_number_sum with exactly-once output, read back with isolation.level=read_committed.
#
#   1. a topic pattern: the two topics it matches (two and one partitions) are read at
#      p=2 through two injected failures, each record once; a third topic it does not
#      match is not read;
#   2. starting offsets timestamp:<ms>: only the records produced at or after the
#      timestamp are read; a timestamp after every record reads nothing;
#   3. bad topic pattern arguments are refused, naming the problem and the way out.
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
