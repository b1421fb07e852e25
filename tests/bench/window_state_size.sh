#!/usr/bin/env bash
# Checkpoint size and duration with many open windows: window_sum --keys K on weir-runtime
# (p=1, unbounded, windows of an hour so that none fires), checkpoints every second into a
# local directory; after the windows of all K keys are open, prints the latest completed
# checkpoint's state size, its bytes per open window and its duration; tumbling windows
# (one open window per key) and sliding ones (an hour every 6 minutes: 10 per key), on the
# hashmap backend and on rocksdb (incremental). Prints figures; not a test.
#
# Then the same job on Flink 2.3 where its peer is installed (scripts/peers/flink.sh install,
# scripts/peers/flink-client.sh install): tests/bench/vs-flink's WindowSum --hold true in a
# local environment, the same windows, checkpoints every second (rocksdb: incremental), and
# the size on disk of the first checkpoint completed after every window was open: its
# chk-<n> directory, plus shared/ for rocksdb (the SST files its incremental checkpoints
# reference). WEIR_BENCH_FLINK=0 skips it.
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

# The Flink side.
flink_home="$("$ROOT/scripts/peers/flink.sh" home 2>/dev/null)" || flink_home=""
if [[ "${WEIR_BENCH_FLINK:-1}" == 0 ]]; then
  exit 0
elif [[ -z "$flink_home" ]] || ! command -v mvn >/dev/null ||
  ! "$ROOT/scripts/peers/flink-client.sh" install >"$TMP/flink-install.log" 2>&1; then
  echo "Flink: not measured (install it: scripts/peers/flink.sh install; scripts/peers/flink-client.sh install)"
  exit 0
fi
JAVA_HOME="$(eval "$("$ROOT/scripts/peers/flink.sh" env)" && echo "$JAVA_HOME")"
unset FLINK_CONF_DIR
cp -r "$ROOT/tests/bench/vs-flink/pom.xml" "$ROOT/tests/bench/vs-flink/src" "$TMP/"
mvn -B -q -o -Dstyle.color=never -Dmaven.repo.local="$("$ROOT/scripts/peers/flink-client.sh" repo)" \
  -f "$TMP/pom.xml" compile >"$TMP/mvn.log" 2>&1 || { tail -20 "$TMP/mvn.log" >&2; exit 1; }
java_opts="$(python3 - "$flink_home" <<'PY'
import re, sys
text = open(sys.argv[1] + "/conf/config.yaml").read()
m = re.search(r"^\s*(?:env\.java\.opts\.)?all:\s*(.+)$", text, re.M)
print(m.group(1).strip().strip('"') if m else "")
PY
)"
echo
echo "Flink 2.3 WindowSum --keys K --window-ms 3600000 --hold true, p=1, checkpoints every 1 s"
printf '%-9s %-10s %-9s %12s %10s %12s\n' keys backend windows "state bytes" "B/window" "chk-n bytes"
for keys in "${keys_list[@]}"; do
  for backend in hashmap rocksdb; do
    for slide in 0 360000; do
      cp_dir="$TMP/flink-cp-$keys-$backend-$slide"
      log="$TMP/flink-$keys-$backend-$slide.log"
      # shellcheck disable=SC2086
      "$JAVA_HOME/bin/java" $java_opts -cp "$TMP/target/classes:$flink_home/lib/*" weir.bench.WindowSum \
        --count $((keys * 2)) --keys "$keys" --window-ms 3600000 --slide-ms "$slide" --hold true \
        --checkpoint-interval-ms 1000 --checkpoint-dir "$cp_dir" --state-backend "$backend" >"$log" 2>&1 &
      pid=$!
      chk=""
      for _ in $(seq 1800); do
        chk="$(sed -n 's/^windows-open checkpoint=//p' "$log")"
        [[ -n "$chk" ]] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
      done
      dir="$(find "$cp_dir" -maxdepth 2 -name "chk-$chk" -type d 2>/dev/null | head -1)"
      if [[ -z "$chk" || -z "$dir" ]]; then
        echo "Flink WindowSum did not report a checkpoint with every window open: $(tail -3 "$log")" >&2
        kill "$pid" 2>/dev/null
        exit 1
      fi
      chk_bytes="$(du -sb "$dir" | cut -f1)"
      size="$chk_bytes"
      [[ "$backend" == rocksdb ]] && size=$((size + $(du -sb "$(dirname "$dir")/shared" | cut -f1)))
      kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null || true
      windows=$((keys * (slide == 0 ? 1 : 10)))
      printf '%-9s %-10s %-9s %12s %10s %12s\n' "$keys" "$backend" "$windows" "$size" $((size / windows)) "$chk_bytes"
      rm -rf "$cp_dir"
    done
  done
done
