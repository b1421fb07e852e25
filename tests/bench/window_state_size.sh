#!/usr/bin/env bash
# Checkpoint size and duration with many open windows: window_sum --keys K on weir-runtime
# (p=1, unbounded, windows of an hour so that none fires), checkpoints every second into a
# local directory; after the windows of all K keys are open, prints the latest completed
# checkpoint's state size, its bytes per open window and its duration; tumbling windows
# (one open window per key) and sliding ones (an hour every 6 minutes: 10 per key), on the
# hashmap backend and on rocksdb (incremental). Prints figures; not a test.
#
#   tests/bench/window_state_size.sh [build-dir] [keys...]
source "$(dirname "$0")/common.sh" "${1:-}"
shift || true
keys_list=("${@:-10000 100000 1000000}")
read -r -a keys_list <<<"${keys_list[*]}"

# records_in JOBID: the records the window operator has read.
records_in() {
  curl -sf "http://localhost:$PORT/jobs/$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(max(v["metrics"].get("read-records", 0) for v in d["vertices"] if "Window" in v["name"]))'
}

latest() {
  curl -sf "http://localhost:$PORT/jobs/$1/checkpoints" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d["latest"]["completed"]
print(c["state_size"], c["end_to_end_duration"], c["checkpointed_size"]) if c else print("- - -")'
}

echo "window_sum -p 1 --keys K --window-ms 3600000, checkpoints every 1 s"
printf '%-9s %-10s %-9s %12s %10s %14s %12s\n' keys backend windows "state bytes" "B/window" "checkpointed" "duration"
for keys in "${keys_list[@]}"; do
  for backend in hashmap rocksdb; do
    for slide in 0 360000; do
      conf=(-D execution.checkpointing.interval=1s -D "execution.checkpointing.dir=$TMP/cp"
        -D state.backend.type="$backend")
      [[ "$backend" == rocksdb ]] && conf+=(-D execution.checkpointing.incremental=true)
      start_runtime "${conf[@]}"
      per_key=$((slide == 0 ? 1 : 10))
      # Every key's windows are open once 2 x K numbers went by (event time n ms < 1 hour).
      job="$("$WEIR" run -d -m "localhost:$PORT" -p 1 "$EXAMPLES/window_sum.so" --count 0 --keys "$keys" \
        --window-ms 3600000 --slide-ms "$slide" --rate $((keys * 2)) --sink discard |
        sed -n 's/^Job has been submitted with JobID //p')"
      for _ in $(seq 600); do
        (($(records_in "$job" || echo 0) >= 2 * keys)) && break
        sleep 0.2
      done
      sleep 2.5  # a checkpoint taken after every window was open
      read -r size duration checkpointed < <(latest "$job")
      windows=$((keys * per_key))
      printf '%-9s %-10s %-9s %12s %10s %14s %10s ms\n' "$keys" "$backend" "$windows" "$size" \
        "$( [[ "$size" =~ ^[0-9]+$ ]] && echo $((size / windows)) || echo -)" "$checkpointed" "$duration"
      "$WEIR" cancel -m "localhost:$PORT" "$job" >/dev/null
      kill "$RUNTIME_PID"
      wait "$RUNTIME_PID" 2>/dev/null || true
      RUNTIME_PID=""
    done
  done
done
