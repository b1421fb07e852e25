#!/usr/bin/env bash
# Kafka -> kafka_number_sum -> Kafka against a local broker (scripts/peers/kafka.sh):
# throughput with the sink's delivery guarantees none / at-least-once / exactly-once at
# 100 ms and 1 s checkpoints (p=1, bounded input of COUNT numbers), then end-to-end
# latency as a read_committed reader sees it (exactly-once, 2000 records/s). Prints
# figures; not a test.
#
#   tests/bench/kafka_throughput.sh [build-dir] [count]
source "$(dirname "$0")/common.sh" "$@"
count="${2:-1000000}"
KAFKA="$ROOT/scripts/peers/kafka.sh"
KCLIENT="$BUILD/bin/kafka_test_client"
JOB="$EXAMPLES/kafka_number_sum.so"
for f in "$KCLIENT" "$JOB"; do
  [[ -e "$f" ]] || { echo "missing $f: ninja -C $BUILD kafka_test_client kafka_number_sum" >&2; exit 2; }
done
export KAFKA_WORK_DIR="$TMP/kafka"
stop_kafka() { "$KAFKA" stop >/dev/null 2>&1 || true; }
trap 'stop_kafka; cleanup' EXIT
BS="$("$KAFKA" start 2>/dev/null | sed -n 's/^bootstrap.servers=//p')"
[[ -n "$BS" ]] || { echo "the Kafka peer did not start" >&2; exit 1; }

t0=$(date +%s%3N)
"$KCLIENT" produce "$BS" in 1 "$count"
echo "input: $count records produced in $(($(date +%s%3N) - t0)) ms (kafka_test_client, idempotent producer)"
echo "throughput, p=1, $count records, bounded (Job Runtime; best of 3):"
n=0
for guarantee in none at-least-once exactly-once; do
  for interval in 100ms 1s; do
    best=""
    for _ in 1 2 3; do
      n=$((n + 1))
      ms="$("$WEIR" run -p 1 -D rest.port="$(free_port)" -D execution.checkpointing.interval="$interval" "$JOB" \
        --bootstrap-servers "$BS" --input-topic in --output-topic "out-$n" --transactional-id-prefix "bench-$n" \
        --delivery-guarantee "$guarantee" --bounded 2>>"$TMP/log" | sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p')"
      [[ -n "$ms" ]] || { echo "run failed: $(tail -3 "$TMP/log")" >&2; exit 1; }
      if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
    done
    printf '  %-14s checkpoints every %-6s %6d ms  %7.0f k records/s\n' "$guarantee" "$interval" "$best" \
      "$(python3 -c "print($count / $best)")"
  done
done

echo "end-to-end latency, exactly-once, p=1, 2000 records/s for 10 s (send -> visible to read_committed):"
for interval in 100ms 1s; do
  n=$((n + 1))
  "$KCLIENT" produce "$BS" "lat-in-$n" 0 0  # the input topic exists before the job starts
  "$WEIR" run -p 1 -D rest.port="$(free_port)" -D execution.checkpointing.interval="$interval" "$JOB" \
    --bootstrap-servers "$BS" --input-topic "lat-in-$n" --output-topic "lat-out-$n" \
    --transactional-id-prefix "lat-$n" >>"$TMP/log" 2>&1 &
  job=$!
  sleep 3  # the job runs and has created its output topic
  printf '  checkpoints every %-6s ' "$interval"
  "$KCLIENT" latency "$BS" "lat-in-$n" "lat-out-$n" 1 20000 2000 || true
  kill "$job" 2>/dev/null
  wait "$job" 2>/dev/null || true
done
