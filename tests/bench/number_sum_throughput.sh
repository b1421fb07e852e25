#!/usr/bin/env bash
# Throughput of the number_sum example on the embedded runtime with the discarding
# sink, at parallelism 1 and 2. Prints records per second; not a pass/fail test.
#
#   tests/bench/number_sum_throughput.sh [build-dir] [count]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
count="${2:-50000000}"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
echo "number_sum, ${count} records, discarding sink, $(nproc) cores"
for p in 1 2; do
  best=""
  for run in 1 2 3; do
    ms="$("$build/bin/weir" run -p "$p" -D rest.port="$port" "$build/examples/number_sum.so" \
          --count "$count" --sink discard | sed -n 's/^Job Runtime: \([0-9]*\) ms$/\1/p')"
    if [[ -z "$best" || "$ms" -lt "$best" ]]; then best="$ms"; fi
  done
  rate=$(python3 -c "print(f'{$count / ($best / 1000.0) / 1e6:.1f}')")
  echo "p=$p: best of 3 runs ${best} ms, ${rate} M records/s"
done
