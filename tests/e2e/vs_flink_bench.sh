#!/usr/bin/env bash
# End-to-end: the side-by-side benchmark against Flink (tests/bench/vs-flink/run.sh) with tiny
# inputs, so that it keeps working as weir changes. It checks that both sides run the same
# jobs (Flink's jobs report how many records they processed, and the harness refuses a wrong
# count), that checkpoints are taken on both sides when asked for, that the table is printed,
# that it measures weir alone (and says so) where Flink is not installed, and its bad input
# (and that of tests/bench/vs-flink/profile.py).
# No timing is checked.
#
#   bash tests/e2e/vs_flink_bench.sh [build-dir]
#
# About 50 s: the Maven build and five Flink jobs (a JVM and a MiniCluster each) dominate.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

BENCH="$REPO_DIR/tests/bench/vs-flink/run.sh"
export WEIR_BENCH_CACHE="$tmp/cache"
number='[0-9]+\.[0-9]+'

check "keyed sum on both sides, with and without checkpoints: a table with the ratio"
E2E_CMD_TIMEOUT=240 run bash "$BENCH" "$BUILD_DIR" --rounds 1 --jobs keyed-sum --parallelism 1 \
  --checkpoints none,100ms --count 300000 --csv "$tmp/runs.csv"
expect_rc 0
# Every run in the CSV too, with the round it ran in.
[[ "$(head -1 "$tmp/runs.csv")" == side,job,parallelism,checkpoint_ms,work,runtime_ms,*,steal_pct,idle_pct,round ]] ||
  fail "the CSV's header is $(head -1 "$tmp/runs.csv")"
[[ "$(grep -cE '^(weir|Flink),keyed-sum,1,(0|100),300000,[0-9]+,.*,1$' "$tmp/runs.csv")" == 4 ]] ||
  fail "the CSV does not hold the 4 runs of round 1: $(cat "$tmp/runs.csv")"
expect_out_has "Flink keyed sum, 2 keys | p=1 | none"
expect_out_line "\| keyed sum, 2 keys +\| 1 \| none +\| records \| $number +\| $number +\| $number""x +\|.*"
# The 100 ms row: both sides completed at least one checkpoint (the last two columns).
grep -E "^\| keyed sum, 2 keys +\| 1 \| 100 ms" "$OUT_FILE" | grep -qE "\| [1-9][0-9]* +\| [1-9][0-9]* +\|$" ||
  fail "the 100 ms row does not show checkpoints on both sides"
expect_out_has "checkpoint cost, keyed sum, 2 keys, p=1, every 100 ms: weir "
# weir's checkpoint cost once more from 5 pairs (the default) of its two rows right after each other.
expect_out_line "  checkpoint cost, keyed sum, 2 keys, p=1, every 100 ms: weir [-+]$number% \(pairs from [-+]$number% to [-+]$number%, 5 pairs\)"
# How far to trust the figures: the host's steal time during each side's runs (/proc/stat).
expect_out_line "  steal, weir's runs: median $number%, max $number% of the machine's CPU time"
expect_out_line "  steal, Flink's runs: median $number%, max $number% of the machine's CPU time"
# And the share of time no thread ran on a core, by parallelism.
expect_out_line "  cores idle, weir's runs at p=1: median $number%, max $number% of the machine's CPU time"
# And how steadily the cores ran wide and narrow code before and after the runs.
ms='[0-9]+ to [0-9]+ ms \(median [0-9]+, \+[0-9]+%\)'
expect_out_line "  cores, before the runs: the wide loop $ms, the narrow one $ms, 8 runs each"
expect_out_line "  cores, after them: the wide loop $ms, the narrow one $ms, 8 runs each"
pass

check "the core probe: two ranges of milliseconds, and its bad input refused with exit code 2"
run "$BUILD_DIR/bin/core_share_probe" --runs 2 --scale 0.01
expect_rc 0
expect_out_line "wide [0-9]+ [0-9]+ [0-9]+"
expect_out_line "narrow [0-9]+ [0-9]+ [0-9]+"
run "$BUILD_DIR/bin/core_share_probe" --runs 0
expect_rc 2
expect_err_has "--runs takes a positive whole number"
run "$BUILD_DIR/bin/core_share_probe" --scale -1
expect_rc 2
expect_err_has "--scale takes a positive number"
run "$BUILD_DIR/bin/core_share_probe" --fast
expect_rc 2
expect_err_has "unknown argument '--fast'"
pass

check "rows whose rounds spread by more than 15% of their median are listed, the others not; idle cores"
cat >"$tmp/noise.py" <<'PY'
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, sys.argv[1])
from harness import Run, Scenario, Side, print_noise
wide, narrow = (Scenario(f"job {i} | p=1 | none", "keyed-sum", 1, 0, "records", 1000) for i in (1, 2))
side = Side("weir")
side.runs[wide.name] = [Run(ms, 1.0, 10, 1.0, 0, 2.0, 0, idle) for ms, idle in ((1000, 5.0), (1100, 9.0), (1500, 1.0))]
side.runs[narrow.name] = [Run(ms, 1.0, 10, 1.0, 0, 4.0) for ms in (1000, 1050, 1100)]
print_noise([wide, narrow], [side])
PY
run python3 "$tmp/noise.py" "$REPO_DIR/tests/bench/vs-flink"
expect_rc 0
expect_out_line "  steal, weir's runs: median 3.0%, max 4.0% of the machine's CPU time"
# Runs whose idle share is not known (the second row's) are left out of it.
expect_out_line "  cores idle, weir's runs at p=1: median 5.0%, max 9.0% of the machine's CPU time"
expect_out_line "  spread, weir job 1 \| p=1 \| none: rounds from 1000 to 1500 ms \(45% of the median\)"
expect_out_lacks "job 2"
pass

check "weir against Flink by round: each round's two runs compared, a round one side lacks left out"
cat >"$tmp/rounds.py" <<'PY'
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, sys.argv[1])
from harness import Run, Scenario, Side, print_noise
row = Scenario("job 1 | p=1 | none", "keyed-sum", 1, 0, "records", 1000)
weir, flink = Side("weir"), Side("Flink")
# Round 1's Flink run failed (not recorded): rounds 0 and 2 are compared, 10x and 8x.
weir.runs[row.name] = [Run(ms, 1.0, 10, 1.0, 0, None, r) for r, ms in ((0, 100), (1, 100), (2, 150))]
flink.runs[row.name] = [Run(ms, 1.0, 10, 1.0, 0, None, r) for r, ms in ((0, 1000), (2, 1200))]
print_noise([row], [weir, flink])
PY
run python3 "$tmp/rounds.py" "$REPO_DIR/tests/bench/vs-flink"
expect_rc 0
expect_out_line "  by round, weir/Flink job 1 \| p=1 \| none: 10.0x 8.0x \(median 9.0x, from 8.0x to 10.0x\)"
pass

check "checkpoint cost and p=2 against p=1 by round and back to back: each figure's two rows compared"
cat >"$tmp/costs.py" <<'PY'
import sys
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, sys.argv[1])
from harness import Run, Scenario, Side, print_back_to_back, print_costs
base, cp, p2 = (Scenario(f"job | p={p} | {c}", "keyed-sum", p, ms, "records", 1000)
                for p, c, ms in ((1, "none", 0), (1, "100 ms", 100), (2, "none", 0)))
weir = Side("weir")
def runs(*by_round):
    return [Run(ms, 1.0, 10, 1.0, 0, None, r) for r, ms in by_round]
weir.runs[base.name] = runs((0, 1000), (1, 1000), (2, 2000))
# Round 1's run with checkpoints failed: rounds 0 and 2 cost 9.1% and 0%. The medians,
# 1000 and 1550 ms, would say 35.5%.
weir.runs[cp.name] = runs((0, 1100), (2, 2000))
# p=2 by round: 1000/600, 1000/500 and 2000/1000; the medians say 1000/600.
weir.runs[p2.name] = runs((0, 600), (1, 500), (2, 1000))
print_costs([base, cp, p2], [weir])
# Back to back, each pair's runtime of the second row over the first's: checkpoint costs of
# 9.1%, 0% and 20%, speed-ups of p=2 of 2, 1.67 and 1.6.
ratios = {(base.name, cp.name): [1.1, 1.0, 1.25], (base.name, p2.name): [0.5, 0.6, 0.625]}
print_back_to_back([base, cp, p2], weir, ratios)
PY
run python3 "$tmp/costs.py" "$REPO_DIR/tests/bench/vs-flink"
expect_rc 0
expect_out_line "  checkpoint cost, job, p=1, every 100 ms: weir \+35.5% \(by round \+4.5%\)"
expect_out_line "  p=2 against p=1, job, no checkpoints: weir 1.67x \(by round 2.00x\)"
expect_out_line "  checkpoint cost, job, p=1, every 100 ms: weir \+9.1% \(pairs from \+0.0% to \+20.0%, 3 pairs\)"
expect_out_line "  p=2 against p=1, job, no checkpoints: weir 1.67x \(pairs from 1.60x to 2.00x, 3 pairs\)"
pass

check "word count at p=2 over generated Zipf text: Flink counted every word"
E2E_CMD_TIMEOUT=240 run bash "$BENCH" "$BUILD_DIR" --rounds 1 --jobs word-count --parallelism 2 \
  --checkpoints none --text-mb 1
expect_rc 0
words="$(cat "$WEIR_BENCH_CACHE"/zipf-1mb-2files-seed1.words)"
[[ "$words" -gt 100000 ]] || fail "the generated text has $words words"
expect_out_has "$(python3 -c "print(f'{$words:,}')") words"
expect_out_line "\| word count +\| 2 \| none +\| words +\| $number +\| $number +\| $number""x +\|.*"
pass

check "keyed sum with many keys on rocksdb on both sides, with incremental checkpoints"
E2E_CMD_TIMEOUT=240 run bash "$BENCH" "$BUILD_DIR" --rounds 1 --jobs many-keys-rocksdb --parallelism 1 \
  --checkpoints 100ms --many-keys 1000 --rocksdb-count 200000
expect_rc 0
expect_out_has "keyed sum on rocksdb 200,000 records"
grep -E "^\| keyed sum, 1000 keys, rocksdb +\| 1 \| 100 ms +\| records \| $number +\| $number +\|" "$OUT_FILE" |
  grep -qE "\| [1-9][0-9]* +\| [1-9][0-9]* +\|$" || fail "the rocksdb row does not show checkpoints on both sides"
pass

check "the Flink jobs refuse bad options with exit 2"
classes="$BUILD_DIR/vs-flink/target/classes"
flink_home="$(bash "$REPO_DIR/scripts/peers/flink.sh" home)"
run java -cp "$classes:$flink_home/lib/*" weir.bench.NumberSum --count many
expect_rc 2
expect_err_has "--count must be a whole number >= 1, not 'many'"
run java -cp "$classes:$flink_home/lib/*" weir.bench.WordCount --parallelism 2
expect_rc 2
expect_err_has "--input PATH is required"
run java -cp "$classes:$flink_home/lib/*" weir.bench.NumberSum --count 10 --state-backend memory
expect_rc 2
expect_err_has "--state-backend must be hashmap or rocksdb, not 'memory'"
pass

check "without Flink it measures weir alone and says so"
FLINK_VENV="$tmp/no-flink" run bash "$BENCH" "$BUILD_DIR" --rounds 1 --jobs keyed-sum --parallelism 1 \
  --checkpoints none --count 100000
expect_rc 0
expect_out_has "Flink is not installed (scripts/peers/flink.sh install installs it); weir alone"
expect_out_line "\| keyed sum, 2 keys +\| 1 \| none +\| records \| $number +\| [0-9]+ +\| $number +\| 0 +\|"
expect_out_lacks "Flink M/s"
[[ ! -e "$tmp/no-flink" ]] || fail "it created '$tmp/no-flink'"
pass

check "bad options: exit 2 before building or running anything"
run bash "$BENCH" "$BUILD_DIR" --jobs keyed-sum,nope
expect_rc 2
expect_err_has "--jobs: unknown job 'nope'"
run bash "$BENCH" "$BUILD_DIR" --parallelism 0
expect_rc 2
expect_err_has "--parallelism: every value must be at least 1"
run bash "$BENCH" "$BUILD_DIR" --checkpoints 100 ms
expect_rc 2
run bash "$BENCH" "$BUILD_DIR" --weir-pairs -1
expect_rc 2
expect_err_has "--weir-pairs must be 0 (none) or more"
run bash "$BENCH" "$tmp/no-build"
expect_rc 2
expect_err_has "is not a configured build directory"
pass

check "a second run on the same build directory is refused while the first one runs"
# The lock is taken after the options are checked and before anything is built or run.
exec 8>"$BUILD_DIR/vs-flink.lock"
flock -n 8 || fail "the lock is held before the check (a benchmark is running on $BUILD_DIR?)"
run bash "$BENCH" "$BUILD_DIR" --rounds 1 --jobs keyed-sum
expect_rc 1
expect_err_has "another run of this benchmark is using $BUILD_DIR"
exec 8>&-
pass

check "pairs of runs taking turns: each pair's ratio, the medians, and the cores' idle share"
# Each run lasts 50 ms, so that /proc/stat's clock (10 ms a tick) moves while it runs.
run python3 "$REPO_DIR/tests/bench/pairs.py" --pairs 2 --warmup 0 \
  --a "sh -c 'sleep 0.05; echo Job Runtime: 10 ms'" --b "sh -c 'sleep 0.05; echo Job Runtime: 5 ms'"
expect_rc 0
expect_out_line "pair 1: A 10 ms, B 5 ms, B/A 0.500.*"
expect_out_line "2 pairs \(job runtime\): A median 10 ms, B median 5 ms"
expect_out_line "B/A: median 0.500 \(range 0.500 to 0.500\); B faster in 2 of 2 pairs; speed-up A/B 2.00x"
expect_out_line "cores idle: A median $number%, B median $number% of the machine's CPU time while they ran"
run python3 "$REPO_DIR/tests/bench/pairs.py" --pairs 1 --warmup 0 --a "false" --b "true"
expect_rc 1
expect_err_has "'false' exited with 1"
run python3 "$REPO_DIR/tests/bench/pairs.py" --pairs 0 --a "true" --b "true"
expect_rc 2
expect_err_has "--pairs must be at least 1"
pass

check "the profiler refuses bad options with exit 2"
run python3 "$REPO_DIR/tests/bench/vs-flink/profile.py" --build "$BUILD_DIR" --only keyed-sum,nope
expect_rc 2
expect_err_has "--only: unknown section 'nope'"
run python3 "$REPO_DIR/tests/bench/vs-flink/profile.py" --build "$tmp/no-build" --only threads
expect_rc 2
expect_err_has "examples/number_sum.so is missing: build first"
pass

finish
