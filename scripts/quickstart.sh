#!/usr/bin/env bash
# Usage: scripts/quickstart.sh
#
# Installs what is missing, builds weir's tools, its runtime and the example jobs
# (not the test suite: scripts/test.sh builds that), and runs the number_sum example
# job embedded in the weir-run process (`weir run build/examples/number_sum.so --count 20`).
# Exits with the status of `weir run`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

"$ROOT/scripts/setup.sh"
"$ROOT/scripts/build.sh" "$ROOT/build" tools examples

cd "$ROOT"
for f in build/bin/weir build/examples/number_sum.so; do
  if [[ ! -e "$f" ]]; then
    echo "quickstart: '$f' was not built" >&2
    echo "hint: look for errors in the output of scripts/build.sh above" >&2
    exit 1
  fi
done
exec build/bin/weir run build/examples/number_sum.so --count 20
