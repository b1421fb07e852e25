# Shared helpers of the end-to-end tests (bash). Each test script starts with
#
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"
#
# and takes one optional argument, the build directory (default: $WEIR_BUILD_DIR, else
# <repo>/build), which must hold bin/weir* and examples/*.so.
#
# What sourcing gives the script:
#   BUILD_DIR, REPO_DIR, WEIR (bin/weir), NUMBER_SUM, WORD_COUNT (the example jobs);
#   tmp: a fresh directory, removed on exit; every process registered with track_pid
#     (and every pid file registered with track_pid_file) is killed on exit, also on
#     failure, SIGINT and SIGTERM;
#   check DESC / pass: start a check (prints "check: DESC") and end it (counts it);
#   run CMD...: runs CMD with a time limit (E2E_CMD_TIMEOUT seconds, default 60),
#     stdout in $OUT (file $OUT_FILE), stderr in $ERR (file $ERR_FILE), status in $RC;
#   expect_* assertions on the last run, fail MSG: print "FAIL: <check>: MSG" with the
#     last command, its exit code, stdout and stderr on stderr, then exit 1 (with
#     E2E_KEEP_GOING=1: count the failure and go on, to see every failure in one run);
#   await_exit PID SECONDS DESC OUT [ERR]: a background command's end as the last run;
#   run_http CURL_ARGS...: an HTTP request, its status as RC ("HTTP 400"), its body as stdout;
#   free_port, listen_busy_port, start_runtime PORT [args...], wait_until SECONDS CMD...;
#   job_state, job_state_is, submitted_job [FILE], submit_job PORT ARGS... (sets job),
#   savepoint_path, checkpoint_count PORT JOB KIND, checkpoints_at_least PORT JOB KIND N;
#   expected_number_sum N FILE, make_text DIR NAME LINES SEED, expected_word_counts DIR FILE;
#   expect_committed EXPECTED DIR WHAT, expect_number_sum_committed DIR N: the part files;
#   crash_round P JOB.so ARGS...: one round of a kill -9 test (see there);
#   start_s3_peer: a real S3 server for the script, and the configuration that reaches it;
#   finish: prints "N passed, M failed" and exits 0 only when nothing failed.

set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
E2E_NAME="$(basename "$0" .sh)"

_build_arg="${1:-${WEIR_BUILD_DIR:-$REPO_DIR/build}}"
if ! BUILD_DIR="$(cd "$_build_arg" 2>/dev/null && pwd)"; then
  echo "FAIL: $E2E_NAME: build directory '$_build_arg' does not exist" >&2
  echo "hint: pass the build directory as the first argument, e.g. bash $0 $REPO_DIR/build" >&2
  exit 1
fi
WEIR="$BUILD_DIR/bin/weir"
WEIR_RUNTIME="$BUILD_DIR/bin/weir-runtime"
NUMBER_SUM="$BUILD_DIR/examples/number_sum.so"
WORD_COUNT="$BUILD_DIR/examples/word_count.so"
for _f in "$WEIR" "$BUILD_DIR/bin/weir-run" "$BUILD_DIR/bin/weir-list" "$BUILD_DIR/bin/weir-cancel" \
  "$WEIR_RUNTIME" "$NUMBER_SUM" "$WORD_COUNT"; do
  if [[ ! -e "$_f" ]]; then
    echo "FAIL: $E2E_NAME: '$_f' was not built" >&2
    echo "hint: ninja -C $BUILD_DIR weir weir-run weir-list weir-cancel weir-runtime number_sum word_count" >&2
    exit 1
  fi
done
for _tool in python3 curl timeout; do
  if ! command -v "$_tool" >/dev/null 2>&1; then
    echo "FAIL: $E2E_NAME: '$_tool' is not installed (scripts/setup.sh installs it)" >&2
    exit 1
  fi
done

tmp="$(mktemp -d "${TMPDIR:-/tmp}/weir-e2e-$E2E_NAME.XXXXXX")"
# Everything the test starts keeps its temporary files in $tmp, which goes with the test: a
# runtime killed with SIGKILL cannot remove its jar upload directory itself.
export TMPDIR="$tmp"
OUT_FILE="$tmp/.stdout"
ERR_FILE="$tmp/.stderr"
OUT=""
ERR=""
RC=0
LAST_CMD=""
PASSED=0
FAILED=0
CURRENT=""
_check_failed=0
_pids_file="$tmp/.pids"
: >"$_pids_file"

# Stops every tracked process: SIGTERM, up to 5 s, then SIGKILL. $1 is the file of tracked
# pids, one a line, or "file:<pid file>" for a pid read from that file at that moment.
# A string, so that the watchdog below can run it too.
_REAP='
pids=()
while IFS= read -r line; do
  case "$line" in
    file:*) f="${line#file:}"; [[ -s "$f" ]] && pids+=("$(<"$f")") ;;
    ?*) pids+=("$line") ;;
  esac
done <"$1"
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
for p in "${pids[@]}"; do
  for ((i = 0; i < 50; i++)); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$p" 2>/dev/null; then
    echo "note: pid $p did not exit within 5 s of SIGTERM; sending SIGKILL" >&2
    kill -KILL "$p" 2>/dev/null
  fi
done
exit 0'

_e2e_cleanup() {
  local rc=$?
  set +e
  bash -c "$_REAP" reap "$_pids_file"
  rm -rf "$tmp"
  exit "$rc"
}
trap _e2e_cleanup EXIT
# A command of the script itself that fails outside of an assertion must not end it silently.
set -E
trap '_rc=$?; [[ $- != *e* ]] || echo "FAIL: ${CURRENT:-$E2E_NAME}: the test script stopped at ${BASH_SOURCE[0]##*/}:$LINENO: \"$BASH_COMMAND\" returned $_rc" >&2' ERR
trap 'exit 130' INT
trap 'exit 143' TERM

# The watchdog: when this script is killed without running its EXIT trap (SIGKILL, e.g. by a
# ctest timeout), it stops the tracked processes and removes $tmp. It ends by itself once
# $tmp is gone (the normal exit). In its own session, so that a process-group kill spares it.
setsid bash -c 'while kill -0 "$1" 2>/dev/null && [[ -d "$2" ]]; do sleep 1; done
[[ -d "$2" ]] || exit 0
bash -c "$3" reap "$2/.pids"
rm -rf "$2"' watchdog "$$" "$tmp" "$_REAP" </dev/null >/dev/null 2>&1 &

# track_pid PID: stop PID when the script exits.
track_pid() { echo "$1" >>"$_pids_file"; }
# track_pid_file FILE: stop the process whose pid FILE holds (at exit time) when the script exits.
track_pid_file() { echo "file:$1" >>"$_pids_file"; }

# check DESC: starts a check.
check() {
  CURRENT="$*"
  _check_failed=0
  echo "check: $CURRENT"
}

# pass: ends the current check; counts it as passed unless one of its assertions failed.
pass() {
  if ((_check_failed == 0)); then
    PASSED=$((PASSED + 1))
    echo "  ok"
  fi
}

# _show FILE: the first 60 lines of FILE, indented.
_show() {
  if [[ ! -s "$1" ]]; then
    echo "    (empty)"
    return
  fi
  head -n 60 "$1" | awk '{ print "    | " $0 }'
  local n
  n=$(wc -l <"$1")
  ((n > 60)) && echo "    ... ($n lines)"
  return 0
}

# fail MSG: reports the failure of the current check with the last command's output.
fail() {
  {
    echo "FAIL: ${CURRENT:-$E2E_NAME}: $*"
    if [[ -n "$LAST_CMD" ]]; then
      echo "  last command: $LAST_CMD"
      echo "  exit code: $RC"
      echo "  stdout:"
      _show "$OUT_FILE"
      echo "  stderr:"
      _show "$ERR_FILE"
    fi
    if [[ -n "${RUNTIME_LOG:-}" && -s "$RUNTIME_LOG" ]]; then
      echo "  the last lines of weir-runtime's log ($RUNTIME_LOG):"
      tail -n 25 "$RUNTIME_LOG" | sed 's/^/    | /'
    fi
  } >&2
  if [[ "${E2E_KEEP_GOING:-0}" == 1 ]]; then
    ((_check_failed == 0)) && FAILED=$((FAILED + 1))
    _check_failed=1
    return 0
  fi
  echo "$PASSED passed, 1 failed" >&2
  exit 1
}

# run CMD...: runs CMD (time limit E2E_CMD_TIMEOUT s, default 60) and records its output.
run() {
  LAST_CMD="$(printf '%q ' "$@")"
  set +e
  timeout -k 5 "${E2E_CMD_TIMEOUT:-60}" "$@" >"$OUT_FILE" 2>"$ERR_FILE" </dev/null
  RC=$?
  set -e
  OUT="$(cat "$OUT_FILE")"
  ERR="$(cat "$ERR_FILE")"
  if ((RC == 124)); then
    echo "  note: '$LAST_CMD' did not end within ${E2E_CMD_TIMEOUT:-60} s and was killed" >&2
  fi
  return 0
}

# run_http CURL_ARGS...: one HTTP request with curl; its body becomes stdout, stderr is empty
# and RC is "HTTP <status>" (expect_rc "HTTP 400").
run_http() {
  LAST_CMD="curl $(printf '%q ' "$@")"
  : >"$ERR_FILE"
  RC="HTTP $(curl -s -o "$OUT_FILE" -w '%{http_code}' --max-time 30 "$@" || true)"
  OUT="$(cat "$OUT_FILE")"
  ERR=""
}

# await_exit PID SECONDS DESC OUT [ERR]: waits up to SECONDS for the background process PID
# (a child of this script) to end, then makes it the last command: LAST_CMD DESC, RC its
# exit status, stdout and stderr the files OUT and ERR (none: empty). When it has not ended,
# RC is "(still running)" and the check fails.
await_exit() {
  local pid="$1" seconds="$2" i
  LAST_CMD="$3"
  for ((i = 0; i < seconds * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  cp "$4" "$OUT_FILE"
  if [[ -n "${5:-}" ]]; then cp "$5" "$ERR_FILE"; else : >"$ERR_FILE"; fi
  OUT="$(cat "$OUT_FILE")"
  ERR="$(cat "$ERR_FILE")"
  if kill -0 "$pid" 2>/dev/null; then
    RC="(still running)"
    fail "it did not end within $seconds s"
    return 0
  fi
  wait "$pid" && RC=0 || RC=$?
}

expect_rc() {
  if [[ "$RC" != "$1" ]]; then
    fail "expected exit code $1, got $RC${2:+ ($2)}"
  fi
  return 0
}
# expect_out_has TEXT / expect_err_has TEXT: fixed text somewhere in stdout / stderr.
expect_out_has() { grep -qF -- "$1" "$OUT_FILE" || fail "stdout does not contain '$1'"; }
expect_err_has() { grep -qF -- "$1" "$ERR_FILE" || fail "stderr does not contain '$1'"; }
# expect_out_line REGEX / expect_err_line REGEX: a whole line matching the extended regex.
expect_out_line() { grep -qE -- "^($1)\$" "$OUT_FILE" || fail "no stdout line matches /^$1\$/"; }
expect_err_line() { grep -qE -- "^($1)\$" "$ERR_FILE" || fail "no stderr line matches /^$1\$/"; }
expect_out_lacks() { ! grep -qF -- "$1" "$OUT_FILE" || fail "stdout contains '$1'"; }
expect_out_empty() { [[ ! -s "$OUT_FILE" ]] || fail "stdout is not empty"; }
expect_err_empty() { [[ ! -s "$ERR_FILE" ]] || fail "stderr is not empty"; }
# expect_err_ci TEXT: TEXT in stderr, ignoring case.
expect_err_ci() { grep -qiF -- "$1" "$ERR_FILE" || fail "stderr does not mention '$1'"; }

# expect_out_json: stdout is exactly one JSON document.
expect_out_json() {
  python3 -c 'import json, sys; json.load(sys.stdin)' <"$OUT_FILE" 2>"$tmp/.json_err" ||
    fail "stdout is not one JSON document: $(tail -n 1 "$tmp/.json_err")"
}

# json_get EXPR: evaluates the python expression EXPR on the JSON document on stdout
# (bound to d), prints the result; empty when that fails.
json_get() {
  python3 -c "import json, sys
d = json.load(sys.stdin)
print($1)" <"$OUT_FILE" 2>/dev/null || true
}

# expect_same_file EXPECTED ACTUAL WHAT: the two files are equal (shows a diff if not).
expect_same_file() {
  if ! diff -q "$1" "$2" >/dev/null 2>&1; then
    {
      echo "  diff expected actual ($3):"
      diff "$1" "$2" | head -n 30 | sed 's/^/    /' || true
    } >&2
    fail "$3 differs from what was expected"
  fi
  return 0
}

# free_port: a TCP port on loopback that nobody listens on right now.
free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# listen_busy_port: a process that listens on a loopback port (for two minutes), so that the
# port is in use; sets busy (the port) and busy_pid (the listener, stopped at exit).
listen_busy_port() {
  python3 -c 'import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print(s.getsockname()[1], flush=True)
time.sleep(120)' >"$tmp/.busy-port" &
  busy_pid=$!
  track_pid "$busy_pid"
  wait_until 10 test -s "$tmp/.busy-port" || fail "the python3 listener did not start"
  busy="$(head -n 1 "$tmp/.busy-port")"
}

# wait_until SECONDS CMD...: runs CMD every 0.1 s until it succeeds (returns 0) or the
# time runs out (returns 1).
wait_until() {
  local deadline=$((SECONDS + $1))
  shift
  while ((SECONDS < deadline)); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.1
  done
  "$@" >/dev/null 2>&1
}

# start_runtime PORT [ARGS...]: starts weir-runtime on PORT in the background (log in
# $tmp/runtime-PORT.log), waits until GET /overview answers. Sets RUNTIME_PID and
# RUNTIME_LOG. Fails the current check when it exits or does not answer within 30 s.
start_runtime() {
  local port="$1"
  shift
  RUNTIME_LOG="$tmp/runtime-$port.log"
  "$WEIR_RUNTIME" --rest-port "$port" "$@" >"$RUNTIME_LOG" 2>&1 </dev/null &
  RUNTIME_PID=$!
  track_pid "$RUNTIME_PID"
  local deadline=$((SECONDS + 30))
  while ((SECONDS < deadline)); do
    if ! kill -0 "$RUNTIME_PID" 2>/dev/null; then
      LAST_CMD=""
      fail "weir-runtime --rest-port $port exited before it answered; its log: $(tail -n 5 "$RUNTIME_LOG")"
      return 1
    fi
    if curl -sf -o /dev/null --max-time 2 "http://localhost:$port/overview"; then
      return 0
    fi
    sleep 0.1
  done
  LAST_CMD=""
  fail "weir-runtime --rest-port $port did not answer GET /overview within 30 s; its log: $(tail -n 5 "$RUNTIME_LOG")"
  return 1
}

# job_state PORT JOBID: the job's state as `weir list -a --output json` reports it
# (empty when the job is not listed or the list failed).
job_state() {
  "$WEIR" list -a --output json -m "localhost:$1" 2>/dev/null | python3 -c "import json, sys
for j in json.load(sys.stdin).get('jobs', []):
    if j.get('jid') == '$2':
        print(j.get('state', ''))" 2>/dev/null || true
}

# submitted_job [FILE]: the job id of the "Job has been submitted with JobID <id>" line of
# FILE (default: the last run's stdout); empty when there is none.
submitted_job() {
  sed -n 's/^Job has been submitted with JobID \([0-9a-f]\{32\}\)$/\1/p' "${1:-$OUT_FILE}" | head -n 1
}

# submit_job PORT ARGS...: `weir run -d -m localhost:PORT ARGS...`; sets job to the printed
# job id and waits (30 s) until the job is RUNNING (or already FINISHED).
submit_job() {
  local port="$1"
  shift
  run "$WEIR" run -d -m "localhost:$port" "$@"
  expect_rc 0
  job="$(submitted_job)"
  [[ -n "$job" ]] || fail "no job id printed"
  wait_until 30 job_started "$port" "$job" || fail "job $job did not reach RUNNING"
}
job_started() { [[ "$(job_state "$1" "$2")" =~ ^(RUNNING|FINISHED)$ ]]; }
# savepoint_path: the path in the "Savepoint completed. Path: ..." line of the last run.
savepoint_path() { sed -n 's/^Savepoint completed. Path: \(file:\)\{0,1\}//p' "$OUT_FILE"; }

# job_state_is PORT JOBID STATE: succeeds when job_state prints STATE.
job_state_is() { [[ "$(job_state "$1" "$2")" == "$3" ]]; }

# checkpoint_count PORT JOBID KIND: the job's count of checkpoints of KIND (completed,
# failed, in_progress ...) from GET /jobs/JOBID/checkpoints; empty when that fails.
checkpoint_count() {
  curl -sf --max-time 5 "http://localhost:$1/jobs/$2/checkpoints" |
    python3 -c "import json, sys; print(json.load(sys.stdin)['counts']['$3'])" 2>/dev/null || true
}
# checkpoints_at_least PORT JOBID KIND N: succeeds when checkpoint_count is N or more.
checkpoints_at_least() {
  local n
  n="$(checkpoint_count "$1" "$2" "$3")"
  [[ -n "$n" ]] && ((n >= $4))
}

# expected_number_sum N FILE: what number_sum --count N must produce, computed here.
# expected_number_sum N FILE [K]: the lines of number_sum --count N --keys K (default 2).
expected_number_sum() {
  awk -v n="$1" -v k="${3:-2}" 'BEGIN { for (i = 1; i <= n; i++) {
    p = (k == 2) ? ((i % 2) ? "odd" : "even") : (i % k); s[p] += i; printf "%.0f,%s,%.0f\n", i, p, s[p] } }' >"$2"
}

# make_text DIR NAME LINES SEED: a file of LINES lines of words drawn from a small vocabulary.
make_text() {
  python3 - "$1/$2" "$3" "$4" <<'EOF'
import random, sys
path, lines, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(seed)
words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
with open(path, "w") as f:
    for _ in range(lines):
        f.write(" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 4))) + "\n")
EOF
}

# expected_window_sum N W FILE: the lines window_sum --count N --window-ms W commits.
expected_window_sum() {
  awk -v n="$1" -v w="$2" 'BEGIN { for (i = 1; i <= n; i++) {
    s = i - i % w; k = (i % 2) ? "odd" : "even"; id = s "," (s + w) "," k; sum[id] += i; cnt[id]++ }
    for (id in sum) printf "%s,%.0f,%d\n", id, sum[id], cnt[id] }' >"$3"
}
# expected_sliding_window_sum N W S FILE: the lines window_sum --count N --window-ms W
# --slide-ms S commits (each n is in W/S windows).
expected_sliding_window_sum() {
  awk -v n="$1" -v w="$2" -v sl="$3" 'BEGIN { for (i = 1; i <= n; i++) {
    k = (i % 2) ? "odd" : "even"
    for (s = i - i % sl; s > i - w; s -= sl) { id = s "," (s + w) "," k; sum[id] += i; cnt[id]++ } }
    for (id in sum) printf "%s,%.0f,%d\n", id, sum[id], cnt[id] }' >"$4"
}
# expected_rules N DIVISORS FILE: the lines broadcast_rules --count N --divisors DIVISORS commits
# (DIVISORS in ascending order, as the job lists them).
expected_rules() {
  awk -v n="$1" -v ds="$2" 'BEGIN { k = split(ds, d, ","); for (i = 1; i <= n; i++) {
    p = i % 2; pos[p]++; m = ""
    for (j = 1; j <= k; j++) if (i % d[j] == 0) m = m (m == "" ? "" : ";") d[j]
    printf "%d,%s,%d,%s\n", i, p ? "odd" : "even", pos[p], m == "" ? "-" : m } }' >"$3"
}
# expected_word_counts INPUT_DIR FILE: the lines word_count must commit, sorted: for a word
# seen T times, "<word>,1" .. "<word>,T".
expected_word_counts() {
  python3 - "$1" <<'EOF' | sort >"$2"
import collections, os, re, sys
counts = collections.Counter()
for name in sorted(os.listdir(sys.argv[1])):
    with open(os.path.join(sys.argv[1], name)) as f:
        for line in f:
            counts.update(w.lower() for w in re.findall(r"[A-Za-z0-9]+", line))
for word, total in counts.items():
    for i in range(1, total + 1):
        print(f"{word},{i}")
EOF
}

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

# expect_committed EXPECTED OUT_DIR WHAT: the committed part files of OUT_DIR hold exactly
# the lines of the file EXPECTED (in any order), and no hidden (uncommitted) file is left.
expect_committed() {
  sort "$1" >"$tmp/.expected-sorted"
  cat "$2"/part-* 2>/dev/null | sort >"$tmp/.committed-sorted"
  if ! cmp -s "$tmp/.expected-sorted" "$tmp/.committed-sorted"; then
    LAST_CMD="diff expected committed"
    fail "$3: the committed output differs ($(wc -l <"$tmp/.committed-sorted") lines, expected $(wc -l <"$1")): $(diff "$tmp/.expected-sorted" "$tmp/.committed-sorted" | head -n 4 | tr '\n' ' ')"
  fi
  local hidden
  hidden="$(find "$2" -name '.*' -type f | wc -l)"
  [[ "$hidden" -eq 0 ]] || fail "$3: $hidden hidden (uncommitted) files were left in the output directory"
}

# expect_number_sum_committed OUT_DIR N: OUT_DIR holds every n in 1..N exactly once with its
# running sum (expect_committed against expected_number_sum).
expect_number_sum_committed() {
  expected_number_sum "$2" "$tmp/.expected-number-sum"
  expect_committed "$tmp/.expected-number-sum" "$1" "number_sum --count $2"
}

# finished_in_log JOBID [LOG]: whether the runtime's log (default $RUNTIME_LOG) says the job
# finished: its status line, or the line written before the retention policy discards its
# checkpoints (a kill -9 can come between the two; then the checkpoints may be gone).
finished_in_log() {
  grep -Eq "job=$1 (status=FINISHED|ended \(FINISHED\))" "${2:-$RUNTIME_LOG}"
}

# checkpointed_in_log JOBID: whether the runtime's log says the job completed a checkpoint
# (a killed job must then be restored from its own newest one).
checkpointed_in_log() {
  grep -q "job=$1 checkpoint=[0-9]* completed" "$RUNTIME_LOG"
}

# checkpointed_or_finished JOBID: succeeds once $cpdir/JOBID holds a complete checkpoint or
# the runtime log says the job finished (its checkpoints are then gone).
checkpointed_or_finished() {
  finished_in_log "$1" || "$WEIR" inspect "$cpdir/$1" >/dev/null 2>&1
}

# crash_round P JOB.so ARGS...: one round of a kill -9 test. Starts a fresh weir-runtime
# with "${crash_conf[@]}" (which must checkpoint into $cpdir, a local path or s3://),
# submits JOB.so ARGS at parallelism P, restored from $restore_from when that is set, and
# kills the runtime with SIGKILL at a random moment: crash_after="MIN MAX" seconds into
# the run (default "0.3 1.2"), counted from the job's first complete checkpoint when
# crash_after_checkpoint=1. Sets job; then restore_from to the job's checkpoint directory
# when it holds a complete checkpoint (the check fails while no round has left one).
# A bounded job can end before the kill: its checkpoints are gone with it and its output
# is complete. The runtime log shows it; then job_finished=1 and restore_from stays.
crash_round() {
  local p="$1" job_so="$2" port min max
  shift 2
  read -r min max <<<"${crash_after:-0.3 1.2}"
  port="$(free_port)"
  start_runtime "$port" "${crash_conf[@]}"
  local args=(run -d -p "$p" -m "localhost:$port")
  [[ -n "${restore_from:-}" ]] && args+=(-s "$restore_from")
  run "$WEIR" "${args[@]}" "$job_so" "$@"
  expect_rc 0
  job="$(submitted_job)"
  [[ -n "$job" ]] || fail "no job id printed"
  if [[ "${crash_after_checkpoint:-0}" == 1 ]]; then
    wait_until 60 checkpointed_or_finished "$job" || fail "no complete checkpoint of job $job within 60 s"
  fi
  sleep "$(python3 -c "import random; print(round(random.uniform($min, $max), 2))")"
  kill -9 "$RUNTIME_PID"
  wait "$RUNTIME_PID" 2>/dev/null || true
  if finished_in_log "$job"; then
    job_finished=1
    echo "  note: job $job (p=$p) had finished before the kill"
    return 0
  fi
  # A job that completed a checkpoint must be restored from its own newest one: an older
  # one would replay what the job already committed.
  if "$WEIR" inspect "$cpdir/$job" >"$tmp/inspect.out" 2>&1; then
    restore_from="$cpdir/$job"
  elif checkpointed_in_log "$job"; then
    fail "job $job completed checkpoints, but 'weir inspect $cpdir/$job' failed: $(head -c 2000 "$tmp/inspect.out")"
  fi
  [[ -n "${restore_from:-}" ]] || fail "no complete checkpoint in '$cpdir' yet"
}

# start_s3_peer: starts a real S3 server (scripts/peers/s3.sh) in $tmp/s3 (S3_WORK_DIR,
# exported, so that `bash "$S3_PEER" stop` and `start` act on it), stopped when the script
# exits. Sets s3_endpoint, s3_access_key, s3_secret_key and s3_bucket from what it prints,
# and points WEIR_CONF_DIR at a config.yaml with them (path-style access), as a user's
# configuration. Fails the current check when the server does not start.
S3_PEER="$REPO_DIR/scripts/peers/s3.sh"
start_s3_peer() {
  export S3_WORK_DIR="$tmp/s3"
  run bash "$S3_PEER" start
  expect_rc 0
  track_pid_file "$S3_WORK_DIR/vgw.pid"
  s3_endpoint="$(sed -n 's/^s3.endpoint=//p' "$OUT_FILE")"
  s3_access_key="$(sed -n 's/^s3.access-key=//p' "$OUT_FILE")"
  s3_secret_key="$(sed -n 's/^s3.secret-key=//p' "$OUT_FILE")"
  s3_bucket="$(sed -n 's/^bucket=//p' "$OUT_FILE")"
  [[ -n "$s3_endpoint" && -n "$s3_access_key" && -n "$s3_secret_key" && -n "$s3_bucket" ]] ||
    fail "s3.sh start did not print s3.endpoint=, s3.access-key=, s3.secret-key= and bucket= lines"
  mkdir -p "$tmp/conf"
  cat >"$tmp/conf/config.yaml" <<EOF_CONF
s3.endpoint: $s3_endpoint
s3.path.style.access: true
s3.access-key: $s3_access_key
s3.secret-key: $s3_secret_key
EOF_CONF
  export WEIR_CONF_DIR="$tmp/conf"
}

# start_hdfs_peer: starts an HDFS namenode and datanode (scripts/peers/hdfs.sh) in $tmp/hdfs
# (HDFS_WORK_DIR, exported), stopped when the script exits. Sets fs_default
# (hdfs://HOST:PORT) and webhdfs, and points WEIR_CONF_DIR at a config.yaml with the
# WebHDFS port (user HADOOP_USER_NAME=weir). Fails the current check when it does not start.
start_hdfs_peer() {
  export HDFS_WORK_DIR="$tmp/hdfs"
  E2E_CMD_TIMEOUT=150 run bash "$REPO_DIR/scripts/peers/hdfs.sh" start
  expect_rc 0
  track_pid_file "$HDFS_WORK_DIR/hdfs.pid"
  fs_default="$(sed -n 's/^fs.defaultFS=//p' "$OUT_FILE")"
  webhdfs="$(sed -n 's/^webhdfs=//p' "$OUT_FILE")"
  [[ "$fs_default" == hdfs://127.0.0.1:* && "$webhdfs" == http://127.0.0.1:* ]] ||
    fail "hdfs.sh start did not print fs.defaultFS=hdfs://... and webhdfs=http://... lines"
  mkdir -p "$tmp/conf"
  echo "fs.hdfs.webhdfs.port: ${webhdfs##*:}" >"$tmp/conf/config.yaml"
  export WEIR_CONF_DIR="$tmp/conf" HADOOP_USER_NAME=weir
}

# finish: prints the summary; exits 1 when a check failed.
finish() {
  echo "$PASSED passed, $FAILED failed"
  ((FAILED == 0)) || exit 1
  exit 0
}
