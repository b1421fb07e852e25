#!/usr/bin/env bash
# End-to-end: `weir run job.so` with the job embedded in the weir-run process.
#
#   bash tests/e2e/embedded_run.sh [build-dir]
#
# number_sum to committed part files at parallelism 1, 2 and 4 (compared with the
# lines computed here by awk), to stdout in order at parallelism 1, word_count
# compared with tr | sort | uniq -c, --output json, and the REST API that the
# embedded run serves while it runs (list and cancel from another process).
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

JOBID_RE='[0-9a-f]{32}'

expected_number_sum 1000 "$tmp/expected-1000.txt"

# --- number_sum into part files, at parallelism 1, 2 and 4 ---------------------------
for p in 1 2 4; do
  out="$tmp/number-sum-p$p"
  check "p=$p: weir run -p $p number_sum.so --count 1000 --output DIR exits 0 with Flink's lines on stdout"
  run "$WEIR" run -p "$p" -D "rest.port=$(free_port)" "$NUMBER_SUM" --count 1000 --output "$out"
  expect_rc 0
  id="$(submitted_job)"
  [[ -n "$id" ]] || fail "no 'Job has been submitted with JobID <32 hex>' line"
  # With a file sink nothing but Flink's four lines goes to stdout.
  printf '%s\n' "Job has been submitted with JobID $id" "Program execution finished" \
    "Job with JobID $id has finished." >"$tmp/expected-stdout"
  head -n 3 "$OUT_FILE" >"$tmp/actual-stdout"
  expect_same_file "$tmp/expected-stdout" "$tmp/actual-stdout" "the first three stdout lines"
  [[ "$(sed -n 4p "$OUT_FILE")" =~ ^Job\ Runtime:\ [0-9]+\ ms$ ]] || fail "line 4 is not 'Job Runtime: <ms> ms'"
  [[ "$(wc -l <"$OUT_FILE")" -eq 4 ]] || fail "stdout has $(wc -l <"$OUT_FILE") lines, expected the 4 lines of Flink"
  expect_err_empty
  pass

  check "p=$p: the committed part files hold exactly the 1000 expected lines"
  shopt -s nullglob
  parts=("$out"/part-*)
  shopt -u nullglob
  ((${#parts[@]} > 0)) || fail "no part-* file in $out: $(ls -A "$out" 2>&1 | tr '\n' ' ')"
  for f in "${parts[@]}"; do
    name="$(basename "$f")"
    [[ "$name" =~ ^part-([0-9a-f]{16})-([0-9]+)-([0-9]+)$ ]] ||
      fail "committed file '$name' is not named part-<attempt id>-<subtask>-<n>"
    ((BASH_REMATCH[2] < p)) || fail "committed file '$name' names subtask ${BASH_REMATCH[2]}, but the parallelism is $p"
  done
  cat "$out"/part-* | sort -n >"$tmp/actual-p$p.txt"
  expect_same_file "$tmp/expected-1000.txt" "$tmp/actual-p$p.txt" "cat part-* | sort -n"
  pass

  check "p=$p: no hidden (in-progress) file and nothing but part files left in the output directory"
  others="$(find "$out" -mindepth 1 ! -name 'part-*' -printf '%P ')"
  [[ -z "$others" ]] || fail "left in $out: $others"
  pass
done

# --- number_sum printed to stdout --------------------------------------------------
check "print mode at p=1: the records come on stdout in order, between Flink's lines"
run "$WEIR" run -p 1 -D "rest.port=$(free_port)" "$NUMBER_SUM" --count 50
expect_rc 0
id="$(submitted_job)"
[[ -n "$id" ]] || fail "no 'Job has been submitted with JobID <32 hex>' line"
expected_number_sum 50 "$tmp/expected-50.txt"
{
  echo "Job has been submitted with JobID $id"
  cat "$tmp/expected-50.txt"
  echo "Program execution finished"
  echo "Job with JobID $id has finished."
} >"$tmp/expected-print"
head -n 53 "$OUT_FILE" >"$tmp/actual-print"
expect_same_file "$tmp/expected-print" "$tmp/actual-print" "stdout of the print run"
[[ "$(sed -n 54p "$OUT_FILE")" =~ ^Job\ Runtime:\ [0-9]+\ ms$ ]] || fail "line 54 is not 'Job Runtime: <ms> ms'"
pass

check "print mode at p=2: every record once on stdout, prefixed '<subtask>> ' as Flink's print sink does"
run "$WEIR" run -p 2 -D "rest.port=$(free_port)" "$NUMBER_SUM" --count 1000
expect_rc 0
expect_out_line "Job has been submitted with JobID $JOBID_RE"
expect_out_line "Program execution finished"
{ grep -E '^[12]> [0-9]+,(odd|even),[0-9]+$' "$OUT_FILE" || true; } | sed 's/^[12]> //' | sort -n >"$tmp/actual-print-p2"
expect_same_file "$tmp/expected-1000.txt" "$tmp/actual-print-p2" "the record lines of stdout, sorted"
pass

# --- word_count ----------------------------------------------------------------
cat >"$tmp/words.txt" <<'EOF'
The quick brown fox jumps over the lazy dog.
THE DOG barks; the fox runs -- quick, quick!
  tabs	and   spaces   between words

numbers 42 and 42 again, and it's the end
EOF
mkdir -p "$tmp/words-dir"
cp "$tmp/words.txt" "$tmp/words-dir/a.txt"
printf 'Fox fox FOX\nlazy river\n' >"$tmp/words-dir/b.txt"

# expected_counts FILES...: "<word> <count>" per word, sorted, computed with tr | sort | uniq -c.
expected_counts() {
  cat "$@" | tr -cs '[:alnum:]' '\n' | tr '[:upper:]' '[:lower:]' | grep -v '^$' | sort | uniq -c |
    awk '{ print $2, $1 }' | sort
}
# actual_counts DIR: "<word> <last count>" per word from the part files of DIR, and fails
# the check unless each word's counts run 1, 2, ... in file order.
actual_counts() {
  local f
  for f in $(find "$1" -maxdepth 1 -name 'part-*' -printf '%f\n' | sort -t- -k2,2n -k3,3n); do
    cat "$1/$f"
  done | awk -F, '
    NF != 2 { printf "malformed line: %s\n", $0 > "/dev/stderr"; bad = 1; next }
    { if ($2 != last[$1] + 1) { printf "word %s: count %s follows %d\n", $1, $2, last[$1] > "/dev/stderr"; bad = 1 }
      last[$1] = $2 }
    END { for (w in last) print w, last[w]; exit bad }' | sort
}

for p in 1 2; do
  if ((p == 1)); then input="$tmp/words.txt"; else input="$tmp/words-dir"; fi
  out="$tmp/word-count-p$p"
  check "word_count at p=$p on $(basename "$input"): the last count of every word equals tr | sort | uniq -c"
  run "$WEIR" run -p "$p" -D "rest.port=$(free_port)" "$WORD_COUNT" --input "$input" --output "$out"
  expect_rc 0
  expect_out_line "Job with JobID $JOBID_RE has finished\."
  if [[ -d "$input" ]]; then expected_counts "$input"/* >"$tmp/wc-expected-p$p"; else expected_counts "$input" >"$tmp/wc-expected-p$p"; fi
  actual_counts "$out" >"$tmp/wc-actual-p$p" 2>"$tmp/wc-errors-p$p" ||
    fail "the counts in the part files do not run 1, 2, ... per word: $(head -n 3 "$tmp/wc-errors-p$p" | tr '\n' ' ')"
  expect_same_file "$tmp/wc-expected-p$p" "$tmp/wc-actual-p$p" "word counts"
  others="$(find "$out" -mindepth 1 ! -name 'part-*' -printf '%P ')"
  [[ -z "$others" ]] || fail "left in $out besides part files: $others"
  pass
done

# --- --output json ---------------------------------------------------------------
check "weir run --output json: stdout is one JSON document with the job id and FINISHED"
run "$WEIR" run --output json -D "rest.port=$(free_port)" "$NUMBER_SUM" --count 100 --output "$tmp/json-out"
expect_rc 0
expect_out_json
[[ "$(json_get 'd["jobid"]')" =~ ^[0-9a-f]{32}$ ]] || fail "no 'jobid' of 32 hex characters in the document"
[[ "$(json_get 'd["status"]')" == FINISHED ]] || fail "'status' is not FINISHED"
expect_out_lacks "Job has been submitted"
expected_number_sum 100 "$tmp/expected-100.txt"
cat "$tmp/json-out"/part-* | sort -n >"$tmp/actual-json.txt"
expect_same_file "$tmp/expected-100.txt" "$tmp/actual-json.txt" "the part files of the --output json run"
pass

# --- number_sum --keys K ---------------------------------------------------------------
check "number_sum --keys 7 at p=3: the key is n mod 7 and each line carries that key's running sum"
run "$WEIR" run -p 3 -D "rest.port=$(free_port)" "$NUMBER_SUM" --count 2000 --keys 7 --output "$tmp/keys-out"
expect_rc 0
expected_number_sum 2000 "$tmp/expected-keys.txt" 7
cat "$tmp/keys-out"/part-* | sort -n >"$tmp/actual-keys.txt"
expect_same_file "$tmp/expected-keys.txt" "$tmp/actual-keys.txt" "the part files of number_sum --keys 7"
pass

check "number_sum --keys 0 is refused, naming the option"
run "$WEIR" run -D "rest.port=$(free_port)" "$NUMBER_SUM" --keys 0
expect_rc 1
expect_err_has "--keys must be a positive number"
pass

# --- a job that fails ----------------------------------------------------------------
check "a job that throws (--fail-at 5, no restart strategy) exits 1 and names the failure"
run "$WEIR" run -D "rest.port=$(free_port)" "$NUMBER_SUM" --count 10 --sink discard --fail-at 5
expect_rc 1
expect_err_has "injected failure at n=5"
expect_out_lacks "Program execution finished"
pass

# --- the REST API of an embedded run -----------------------------------------------
port="$(free_port)"
check "while an embedded job runs, 'weir list -m localhost:$port' shows it RUNNING"
"$WEIR" run -D "rest.port=$port" "$NUMBER_SUM" --count 0 --rate 200 --sink discard \
  >"$tmp/embedded.out" 2>"$tmp/embedded.err" </dev/null &
embedded_pid=$!
track_pid "$embedded_pid"
wait_until 30 grep -q 'Job has been submitted with JobID' "$tmp/embedded.out" ||
  fail "no 'Job has been submitted' line within 30 s: $(cat "$tmp/embedded.out" "$tmp/embedded.err")"
id="$(submitted_job "$tmp/embedded.out")"
wait_until 30 job_state_is "$port" "$id" RUNNING || true
run "$WEIR" list -m "localhost:$port"
expect_rc 0
expect_out_line "[0-3][0-9]\.[01][0-9]\.[0-9]{4} [0-2][0-9]:[0-5][0-9]:[0-5][0-9] : $id : Number Sum \(RUNNING\)"
pass

check "'weir cancel' of the embedded job: weir-run ends with exit 1 and says the job was cancelled"
run "$WEIR" cancel -m "localhost:$port" "$id"
expect_rc 0
expect_out_line "Cancelled job $id\."
# weir-run must end by itself once its only job is cancelled.
await_exit "$embedded_pid" 30 "$WEIR run -D rest.port=$port $NUMBER_SUM --count 0 --rate 200 --sink discard (in the background)" \
  "$tmp/embedded.out" "$tmp/embedded.err"
expect_rc 1 "a cancelled attached job"
expect_err_has "job '$id' was cancelled"
expect_out_lacks "Program execution finished"
pass

# --- the embedded runtime's log (weir.runtime.log.*, as weir-runtime) ---------------
check "-D weir.runtime.log.file: the embedded runtime logs into the file, nothing on stderr"
run "$WEIR" run -D "rest.port=$(free_port)" -D "weir.runtime.log.file=$tmp/runtime.log" \
  -D execution.checkpointing.interval=50ms "$NUMBER_SUM" --count 2000 --rate 10000 --sink discard
expect_rc 0
expect_err_empty
id="$(submitted_job)"
[[ -s "$tmp/runtime.log" ]] || fail "no log in $tmp/runtime.log"
grep -q "job=$id checkpoint=[0-9]* completed" "$tmp/runtime.log" || fail "no completed checkpoint of job $id in the log"
grep -q "job=$id ended (FINISHED)" "$tmp/runtime.log" || fail "the log does not say job $id ended (FINISHED)"
pass

check "-D weir.runtime.log.level=INFO without a file: the log goes to stderr, the job's lines to stdout"
run "$WEIR" run -D "rest.port=$(free_port)" -D weir.runtime.log.level=INFO "$NUMBER_SUM" --count 20 --sink discard
expect_rc 0
id="$(submitted_job)"
expect_err_has "job=$id ended (FINISHED)"
expect_out_lacks "ended (FINISHED)"
pass

check "a log file that cannot be opened is a usage error naming the key; no job starts"
echo "a file, not a directory" >"$tmp/not-a-dir"
run "$WEIR" run -D "rest.port=$(free_port)" -D "weir.runtime.log.file=$tmp/not-a-dir/runtime.log" \
  "$NUMBER_SUM" --count 20
expect_rc 2
expect_err_has "weir.runtime.log.file"
expect_err_has "hint:"
expect_out_lacks "Job has been submitted"
pass

finish
