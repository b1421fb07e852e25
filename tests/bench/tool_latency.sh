#!/usr/bin/env bash
# Latency of each client tool against a running weir-runtime: the median of 30
# runs (the process start, the REST call, the output). Prints figures; not a test.
#
#   tests/bench/tool_latency.sh [build-dir]
source "$(dirname "$0")/common.sh" "$@"
start_runtime
job="$("$WEIR" run -d -m "localhost:$PORT" "$EXAMPLES/number_sum.so" --count 0 --rate 1000 --sink discard \
       | sed -n 's/^Job has been submitted with JobID //p')"
python3 - "$WEIR" "$PORT" "$job" "$TMP" "$EXAMPLES/number_sum.so" <<'PY'
import statistics, subprocess, sys, time
weir, port, job, tmp, number_sum = sys.argv[1:]
m = ["-m", f"localhost:{port}"]
def median_ms(make_cmd, n=30):
    times = []
    for i in range(n):
        cmd = make_cmd(i)
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)
jobs = []
def run_detached(i):
    return [weir, "run", "-d", *m, number_sum, "--count", "0", "--rate", "10", "--sink", "discard"]
rows = [
    ("weir --version", median_ms(lambda i: [weir, "--version"])),
    ("weir list", median_ms(lambda i: [weir, "list", *m])),
    ("weir list -a --output json", median_ms(lambda i: [weir, "list", "-a", "--output", "json", *m])),
    ("weir savepoint <job> <dir>", median_ms(lambda i: [weir, "savepoint", *m, job, f"{tmp}/sp"])),
    ("weir checkpoint <job>", median_ms(lambda i: [weir, "checkpoint", *m, job])),
    ("weir run -d (upload + start)", median_ms(run_detached)),
]
out = subprocess.run([weir, "list", "--output", "json", *m], capture_output=True, text=True).stdout
import json
ids = [j["jid"] for j in json.loads(out)["jobs"] if j["jid"] != job]
rows.append(("weir cancel <job>", median_ms(lambda i: [weir, "cancel", *m, ids[i % len(ids)]], n=min(30, len(ids)))))
print("client tool latency against a running weir-runtime (median of 30 runs)")
for name, ms in rows:
    print(f"  {name:32s} {ms:6.1f} ms")
PY
