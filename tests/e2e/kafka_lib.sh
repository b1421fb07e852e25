# Helpers of the Kafka end-to-end tests (bash), sourced after lib.sh:
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
#   source "$(dirname "${BASH_SOURCE[0]}")/kafka_lib.sh"
#
# What sourcing gives the script:
#   KAFKA_SUM (the example job), KCLIENT (tests/connectors/kafka/kafka_test_client),
#   KAFKA (scripts/peers/kafka.sh), its broker's work directory in $tmp/kafka
#   (KAFKA_WORK_DIR, exported: `"$KAFKA" stop` and `start` act on that broker);
#   restart: -D options of a fixed-delay restart strategy (100 attempts, 200 ms);
#   verify_sums TOPIC TO exact|at-least [FROM]: TOPIC, read with read_committed, holds
#     every n in FROM..TO (default FROM 1) once or at least once, and nothing else, with
#     running sums per parity that add each n (exact).

KAFKA_SUM="$BUILD_DIR/examples/kafka_number_sum.so"
KCLIENT="$BUILD_DIR/bin/kafka_test_client"
KAFKA="$REPO_DIR/scripts/peers/kafka.sh"
for f in "$KAFKA_SUM" "$KCLIENT"; do
  [[ -e "$f" ]] || { echo "FAIL: '$f' was not built; hint: ninja -C $BUILD_DIR kafka_number_sum kafka_test_client" >&2; exit 1; }
done
if ! compgen -G "${KAFKA_PEERS_DIR:-/opt/weir-peers/kafka}/lib/kafka_2.13-*.jar" >/dev/null; then
  echo "FAIL: the Kafka peer is not installed; hint: scripts/peers/kafka.sh install (scripts/test.sh runs it)" >&2
  exit 1
fi

export KAFKA_WORK_DIR="$tmp/kafka"
restart=(-D restart-strategy.type=fixed-delay -D restart-strategy.fixed-delay.attempts=100
  -D restart-strategy.fixed-delay.delay=200ms)

# verify_sums TOPIC TO exact|at-least [FROM]: reads TOPIC with read_committed and checks
# that it holds every n in FROM..TO once (exact) or at least once, and no other, with
# consistent running sums per parity (each sum is the previous one of its parity plus n,
# starting from 0).
verify_sums() {
  local topic="$1" to="$2" mode="$3" from="${4:-1}"
  run "$KCLIENT" consume "$BS" "$topic" read_committed "$((to - from + 1))"
  expect_rc 0
  python3 - "$OUT_FILE" "$from" "$to" "$mode" >"$tmp/verify" 2>&1 <<'PY' || fail "$(cat "$tmp/verify")"
import sys
from collections import Counter
path, lo, hi, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
want_set = set(range(lo, hi + 1))
rows = [l.rstrip("\n").split(",") for l in open(path) if l.strip()]
seen = Counter(int(r[0]) for r in rows)
missing = sorted(want_set - set(seen))
extra = sorted(set(seen) - want_set)
dups = sorted(n for n, c in seen.items() if c > 1)
problems = []
if missing: problems.append(f"{len(missing)} numbers missing, e.g. {missing[:5]}")
if extra: problems.append(f"{len(extra)} unexpected numbers, e.g. {extra[:5]}")
if mode == "exact":
    if dups: problems.append(f"{len(dups)} numbers twice or more, e.g. {dups[:5]}")
    for parity in ("odd", "even"):
        lines = sorted((int(r[2]), int(r[0])) for r in rows if r[1] == parity)
        prev = 0
        for s, n in lines:
            if s - prev != n:
                problems.append(f"{parity}: running sum {s} after {prev} does not add n={n}")
                break
            prev = s
        want = sum(n for n in want_set if (n % 2 == 1) == (parity == "odd"))
        if prev != want: problems.append(f"{parity}: final sum {prev}, expected {want}")
if problems:
    print(f"{len(rows)} records: " + "; ".join(problems))
    sys.exit(1)
print(f"{len(rows)} records ok")
PY
  echo "  $(cat "$tmp/verify")"
}
