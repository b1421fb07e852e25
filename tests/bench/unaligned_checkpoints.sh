#!/usr/bin/env bash
# Checkpoints under backpressure, aligned against unaligned: number_sum at p=2 with a
# sink throttled far below the source (--sink-rate), checkpoints every second, for
# backlogs of several sizes: network buffers of 4 kb, 32 kb and 128 kb (4 per channel
# plus the floating ones and the overdraft) without buffer debloating, and 128 kb (the
# default) with it (the default: buffers sized to hold 1 s of what their consumer
# processes). Prints checkpoint durations (p50 / p99 / max of the completed ones, and
# the age of one still running) and the in-flight bytes an unaligned checkpoint
# persisted; then the cost of unaligned checkpoints without backpressure (number_sum
# with a discarding sink, checkpoints every 100 ms). Prints figures; not a test.
#
# A backpressured job's first checkpoint waits for the backlog it built before buffer
# debloating first measured (full-size buffers); the later ones show where debloating
# brings the in-flight data. To see those, run for longer than the backlog takes to
# drain (about 2 minutes with 128 kb buffers), for the configurations of interest.
#
#   tests/bench/unaligned_checkpoints.sh [build-dir] [seconds per run] [count] [buffers,...]
#     buffers: any of 4kb, 32kb, 128kb, 128kb+debloat (default: all)
source "$(dirname "$0")/common.sh" "$@"
seconds="${2:-20}"
count="${3:-50000000}"
IFS=, read -r -a configurations <<<"${4:-4kb,32kb,128kb,128kb+debloat}"

# stats_of JOBID: the job's checkpoint statistics as one line of figures.
cat >"$TMP/stats.py" <<'PY'
import json, sys
d = json.load(sys.stdin)
done = sorted(h["end_to_end_duration"] for h in d["history"] if h["status"] == "COMPLETED")
running = [h["end_to_end_duration"] for h in d["history"] if h["status"] == "IN_PROGRESS"]
persisted = sorted(h["persisted_data"] for h in d["history"] if h["status"] == "COMPLETED")
kinds = "/".join(sorted({h["checkpoint_type"] for h in d["history"] if h["status"] == "COMPLETED"})) or "-"
def q(v, p): return v[min(len(v) - 1, int(p * len(v)))] if v else "-"
# The history keeps the latest checkpoints (web.checkpoints.history); the summary all.
slowest = d["summary"]["end_to_end_duration"]["max"] if d["counts"]["completed"] else "-"
print(f"{d['counts']['completed']:>3} completed  slowest {slowest} ms  latest: p50 {q(done, .5)} ms  "
      f"p99 {q(done, .99)} ms  max {max(done) if done else '-'} ms  running {max(running) if running else '-'} ms  "
      f"persisted p50 {q(persisted, .5)} B  {kinds}")
PY
stats_of() { curl -sf "http://localhost:$PORT/jobs/$1/checkpoints" | python3 "$TMP/stats.py"; }

echo "number_sum -p 2 --keys 16 --sink-rate 2000 (each sink subtask), checkpoints every 1 s, ${seconds} s per run"
for buffers in "${configurations[@]}"; do
  segment="${buffers%+debloat}"
  debloat=false
  [[ "$buffers" == *+debloat ]] && debloat=true
  for mode in aligned unaligned; do
    conf=(-D execution.checkpointing.interval=1s -D "execution.checkpointing.dir=$TMP/cp"
      -D taskmanager.memory.segment-size="$segment"
      -D taskmanager.network.memory.buffer-debloat.enabled="$debloat")
    [[ "$mode" == unaligned ]] && conf+=(-D execution.checkpointing.unaligned.enabled=true)
    start_runtime "${conf[@]}"
    job="$("$WEIR" run -d -m "localhost:$PORT" -p 2 "$EXAMPLES/number_sum.so" --count 0 --keys 16 \
      --sink-rate 2000 --output "$TMP/out-$buffers-$mode" | sed -n 's/^Job has been submitted with JobID //p')"
    sleep "$seconds"
    printf '  buffers %-13s %-9s ' "$buffers" "$mode"
    stats_of "$job"
    "$WEIR" cancel -m "localhost:$PORT" "$job" >/dev/null
    kill "$RUNTIME_PID"
    wait "$RUNTIME_PID" 2>/dev/null || true
    RUNTIME_PID=""
  done
done

echo "no backpressure: number_sum -p 2, $count records, discarding sink, checkpoints every 100 ms (best of 3)"
best_ms() {
  local best=""
  for _ in 1 2 3; do
    local ms
    ms="$("$WEIR" run -p 2 -D rest.port="$(free_port)" -D execution.checkpointing.interval=100ms \
      -D "execution.checkpointing.dir=$TMP/cp2" "$@" "$EXAMPLES/number_sum.so" --count "$count" --sink discard \
      2>/dev/null | sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p')"
    if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
  done
  echo "$best"
}
aligned_ms="$(best_ms)"
unaligned_ms="$(best_ms -D execution.checkpointing.unaligned.enabled=true)"
python3 - "$count" "$aligned_ms" "$unaligned_ms" <<'PY'
import sys
count, a, u = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
print(f"  aligned:   {a} ms, {count / a / 1000:.1f} M records/s")
print(f"  unaligned: {u} ms, {count / u / 1000:.1f} M records/s ({(u - a) / a * 100:+.1f}%)")
PY
