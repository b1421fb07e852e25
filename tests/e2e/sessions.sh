#!/usr/bin/env bash
# End-to-end exactly-once of session windows with a process window function and a side
# output for late records: the sessions example (numbers keyed by n mod K, one session per
# key and block of numbers, every L-th number late) must commit each session once with
# all its numbers, and each late number once, through kill -9 of weir-runtime with
# restores at p=1 and p=2 from checkpoints taken at p=3.
#
#   bash tests/e2e/sessions.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

SESSIONS="$BUILD_DIR/examples/sessions.so"
[[ -e "$SESSIONS" ]] || fail "'$SESSIONS' was not built (ninja -C $BUILD_DIR sessions)"

# expect_sessions N L OUT_DIR LATE_DIR: with the example's default keys, gap, session
# length and pause, OUT_DIR holds each session of the on-time numbers once with all its
# numbers, and every late number (every L-th) is committed once: as "late,<n>" in LATE_DIR,
# or (when it came before the first watermark of a run) as a session of its own; some
# went to LATE_DIR.
expect_sessions() {
  LAST_CMD="check the committed sessions of --count $1 --late-every $2"
  local verdict
  verdict="$(python3 - "$@" <<'EOF'
import collections, glob, sys
n, late_every, out_dir, late_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
keys, gap, length, pause = 4, 50, 100, 1000
def lines(d):
    out = []
    for path in sorted(glob.glob(d + "/part-*")):
        out += open(path).read().splitlines()
    return out
late = {i for i in range(1, n + 1) if late_every and i % late_every == 0}
sessions = collections.defaultdict(list)
for i in range(1, n + 1):
    if i not in late:
        sessions[(i % keys, i // length)].append(i)
expected = collections.Counter()
for (key, block), numbers in sessions.items():
    ts = [i + block * pause for i in numbers]
    expected["%d,%d,%d,%d,%s" % (key, min(ts), max(ts) + gap, len(numbers), " ".join(map(str, numbers)))] = 1
own_session = {"%d,%d,%d,1,%d" % (i % keys, -1000 * i, -1000 * i + gap, i): i for i in late}
committed = collections.Counter(lines(out_dir))
late_lines = collections.Counter(lines(late_dir))
problems = []
dup = [l for l, c in list(committed.items()) + list(late_lines.items()) if c > 1]
if dup: problems.append("committed more than once: %s" % dup[:2])
missing = [l for l in expected if l not in committed]
if missing: problems.append("%d sessions missing, e.g. %s" % (len(missing), missing[0][:80]))
unexpected = [l for l in committed if l not in expected and l not in own_session]
if unexpected: problems.append("%d unexpected sessions, e.g. %s" % (len(unexpected), unexpected[0][:80]))
sided = collections.Counter()
for l in late_lines:
    if not l.startswith("late,") or int(l[5:]) not in late: problems.append("unexpected late line " + l)
    else: sided[int(l[5:])] += 1
for l in committed:
    if l in own_session: sided[own_session[l]] += 1
if set(sided) != late or any(c != 1 for c in sided.values()):
    problems.append("late numbers not committed exactly once: %d of %d" % (len(sided), len(late)))
# Which late numbers come before the first watermark of a run depends on time; the runs
# last long enough for the side output to get some.
if late and not late_lines:
    problems.append("none of the %d late numbers went to the side output" % len(late))
print("; ".join(problems) if problems else "ok %d sessions, %d late in the side output" % (len(expected), len(late_lines)))
EOF
)"
  [[ "$verdict" == ok* ]] || fail "$verdict"
  echo "  $verdict"
}

check "bounded run at p=2: each session once with all its numbers, late numbers in the side output"
out="$tmp/out-plain"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "$SESSIONS" --count 6000 --late-every 97 --rate 5000 \
  --output "$out" --late-output "$tmp/late-plain"
expect_rc 0
expect_sessions 6000 97 "$out" "$tmp/late-plain"
pass

count=20000
out="$tmp/out-kill"
late_out="$tmp/late-kill"
cpdir="$tmp/checkpoints"
crash_conf=(-D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$cpdir")
restore_from=""
job_finished=0
for p in 3 1; do
  check "kill -9 round at p=$p${restore_from:+, restored from the newest checkpoint}"
  crash_round "$p" "$SESSIONS" --count "$count" --late-every 97 --rate 8000 --output "$out" --late-output "$late_out"
  pass
  ((job_finished)) && break
done
if ((!job_finished)); then
  check "the last run, restored at p=2, runs to the end"
  run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "${crash_conf[@]}" -s "$restore_from" "$SESSIONS" \
    --count "$count" --late-every 97 --output "$out" --late-output "$late_out"
  expect_rc 0
  expect_out_has "has finished."
  pass
fi
check "through the kills every session and every late number was committed once"
expect_sessions "$count" 97 "$out" "$late_out"
hidden="$(find "$out" "$late_out" -name '.*' -type f | wc -l)"
[[ "$hidden" -eq 0 ]] || fail "$hidden hidden (uncommitted) files were left in the output directories"
pass

check "bad input: --gap-ms 0 and one directory for both outputs are refused naming the option"
run "$WEIR" run -D "rest.port=$(free_port)" "$SESSIONS" --gap-ms 0
expect_rc 1
expect_err_has "--gap-ms must be a positive number"
run "$WEIR" run -D "rest.port=$(free_port)" "$SESSIONS" --output "$tmp/x" --late-output "$tmp/x"
expect_rc 1
expect_err_has "--late-output must be another directory than --output"
pass

finish
