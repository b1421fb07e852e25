#!/usr/bin/env bash
# End-to-end: bad input to weir run / list / cancel. Each case asserts the exit code
# (0 ok, 1 the operation failed, 2 usage error, 3 endpoint unreachable) and that the
# message on stderr names the problem. Finally, a job running on a daemon is still
# RUNNING after all the bad requests sent to that daemon.
#
#   bash tests/e2e/bad_input.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

# expect_err_style TOOL: the first stderr line is "TOOL: <message>" and the message starts
# in lower case or with a quoted subject (the rules for every message of the suite).
expect_err_style() {
  local first
  first="$(head -n 1 "$ERR_FILE")"
  [[ "$first" =~ ^$1:\ [a-z\'\"] ]] || fail "the first stderr line is not '$1: <message starting in lower case or a quote>'"
}

# An embedded run gets its own REST port, so that nothing here touches localhost:8081.
rest() { echo "rest.port=$(free_port)"; }

printf 'this is not a shared object\n' >"$tmp/notes.so"
not_a_job=/usr/lib/x86_64-linux-gnu/libz.so.1
if [[ ! -e "$not_a_job" ]]; then
  not_a_job="$(ldd "$BUILD_DIR/bin/weir-run" | awk '$1 ~ /^libc\.so/ { print $3 }')"
fi

# --- the job file ------------------------------------------------------------------
check "a missing job file: exit 1, names the file"
run "$WEIR" run -D "$(rest)" "$tmp/missing.so"
expect_rc 1
expect_err_has "'$tmp/missing.so'"
expect_err_has "does not exist"
expect_err_style weir-run
expect_out_lacks "Job has been submitted"
pass

check "a file that is not a shared object: exit 1, names the file and the reason"
run "$WEIR" run -D "$(rest)" "$tmp/notes.so"
expect_rc 1
expect_err_has "'$tmp/notes.so'"
expect_err_has "not a weir job"
expect_err_ci "not an ELF shared object"
expect_err_style weir-run
pass

check "a shared object that is not a weir job ($not_a_job): exit 1, says it has no entry point"
run "$WEIR" run -D "$(rest)" "$not_a_job"
expect_rc 1
expect_err_has "'$not_a_job'"
expect_err_has "not a weir job"
expect_err_ci "entry point"
expect_err_style weir-run
pass

check "-c Nope: exit 1, names 'Nope' and lists the entry points (NumberSum)"
run "$WEIR" run -D "$(rest)" -c Nope "$NUMBER_SUM"
expect_rc 1
expect_err_has "'Nope'"
expect_err_has "NumberSum"
expect_err_style weir-run
pass

# --- usage errors of weir run --------------------------------------------------------
check "-p 0: exit 2, names the parallelism and the value"
run "$WEIR" run -D "$(rest)" -p 0 "$NUMBER_SUM" --count 1
expect_rc 2
expect_err_ci "parallelism"
expect_err_has "0"
expect_err_style weir-run
expect_out_lacks "Job has been submitted"
pass

check "-p x: exit 2, names the parallelism and the value"
run "$WEIR" run -D "$(rest)" -p x "$NUMBER_SUM" --count 1
expect_rc 2
expect_err_ci "parallelism"
expect_err_has "x"
expect_err_style weir-run
pass

check "a malformed -D (-D =bar): exit 2, names it"
run "$WEIR" run -D "$(rest)" -D =bar "$NUMBER_SUM" --count 1
expect_rc 2
expect_err_has "'=bar'"
expect_err_ci "key"
expect_err_style weir-run
pass

check "a malformed configuration value (-D rest.port=abc): exit 2, names the key and the value"
run "$WEIR" run -D rest.port=abc "$NUMBER_SUM" --count 1
expect_rc 2
expect_err_has "'rest.port'"
expect_err_has "'abc'"
expect_err_style weir-run
pass

check "-D rest.port without '=value' (Flink reads it as 'true'): exit 2, names the key and the value"
run "$WEIR" run -D rest.port "$NUMBER_SUM" --count 1
expect_rc 2
expect_err_has "'rest.port'"
expect_err_has "'true'"
pass

check "an unknown option (--bogus): exit 2, names it"
run "$WEIR" run -D "$(rest)" --bogus "$NUMBER_SUM"
expect_rc 2
expect_err_has "--bogus"
expect_err_style weir-run
pass

check "no job file at all: exit 2"
run "$WEIR" run -D "$(rest)"
expect_rc 2
expect_err_ci "job file"
expect_err_style weir-run
pass

check "an unknown action (weir bogus): exit 2, names it"
run "$WEIR" bogus
expect_rc 2
expect_err_has "bogus"
pass

check "-t local with -d: exit 2, names the conflict"
run "$WEIR" run -t local -d "$NUMBER_SUM"
expect_rc 2
expect_err_has "-d"
expect_err_has "local"
pass

# --- job argument errors (found by the job's entry point): exit 1 -------------------
check "a bad job argument (--count abc): exit 1, names the option and the value"
run "$WEIR" run -D "$(rest)" "$NUMBER_SUM" --count abc
expect_rc 1
expect_err_has "'--count'"
expect_err_has "'abc'"
expect_err_style weir-run
expect_out_lacks "Job has been submitted"
pass

check "an unknown job argument (--bogus after the job file): exit 1, lists the job's options"
run "$WEIR" run -D "$(rest)" "$NUMBER_SUM" --bogus 1
expect_rc 1
expect_err_has "'--bogus'"
expect_err_has "--count"
pass

check "a job argument without its value (--count at the end): exit 1, names it"
run "$WEIR" run -D "$(rest)" "$NUMBER_SUM" --count
expect_rc 1
expect_err_has "'--count'"
pass

check "word_count without --input: exit 1, says --input is required"
run "$WEIR" run -D "$(rest)" "$WORD_COUNT"
expect_rc 1
expect_err_has "--input"
pass

check "word_count with an input path that does not exist: exit 1, names the path"
run "$WEIR" run -D "$(rest)" "$WORD_COUNT" --input "$tmp/no-such-input" --output "$tmp/wc-out"
expect_rc 1
expect_err_has "$tmp/no-such-input"
pass

# --- the REST port of an embedded run is in use ------------------------------------------
check "the embedded run's REST port is in use: exit 1, names the port and rest.port"
listen_busy_port
run "$WEIR" run -D "rest.port=$busy" "$NUMBER_SUM" --count 10
expect_rc 1
expect_err_has "$busy"
expect_err_has "rest.port"
expect_err_ci "in use"
expect_out_lacks "Program execution finished"
kill "$busy_pid" 2>/dev/null || true
pass

# --- nobody listens ----------------------------------------------------------------
dead="$(free_port)"
check "weir list -m localhost:$dead (nobody listens): exit 3, names the address"
run "$WEIR" list -m "localhost:$dead"
expect_rc 3
expect_err_has "localhost:$dead"
expect_err_style weir-list
pass

check "weir cancel -m localhost:$dead <id> (nobody listens): exit 3, names the address"
run "$WEIR" cancel -m "localhost:$dead" 0123456789abcdef0123456789abcdef
expect_rc 3
expect_err_has "localhost:$dead"
expect_err_style weir-cancel
pass

check "weir run -d -m localhost:$dead (nobody listens): exit 3, names the address"
run "$WEIR" run -d -m "localhost:$dead" "$NUMBER_SUM" --count 1
expect_rc 3
expect_err_has "localhost:$dead"
pass

check "weir list --output json -m localhost:$dead: exit 3 and one JSON document with the error"
run "$WEIR" list --output json -m "localhost:$dead"
expect_rc 3
expect_out_json
[[ -n "$(json_get 'd["error"]["message"]')" ]] || fail "no error.message in the document"
pass

check "a malformed endpoint (-m localhost, no port): exit 2"
run "$WEIR" list -m localhost
expect_rc 2
expect_err_has "'localhost'"
expect_err_ci "port"
pass

# --- against a daemon with a running job ------------------------------------------------
port="$(free_port)"
check "setup: a daemon on port $port with a running number_sum job"
start_runtime "$port"
submit_job "$port" "$NUMBER_SUM" --count 0 --rate 100 --sink discard
pass

check "weir cancel of an unknown job id: exit 1, says it was not found"
run "$WEIR" cancel -m "localhost:$port" 0123456789abcdef0123456789abcdef
expect_rc 1
expect_err_has "0123456789abcdef0123456789abcdef"
expect_err_ci "not found"
expect_err_style weir-cancel
pass

check "weir cancel with a malformed job id: exit 2, names it"
run "$WEIR" cancel -m "localhost:$port" not-a-job-id
expect_rc 2
expect_err_has "not-a-job-id"
expect_err_ci "JobID"
expect_err_style weir-cancel
pass

check "weir cancel with a 32-character id that is not hex: exit 2"
run "$WEIR" cancel -m "localhost:$port" 0123456789abcdef0123456789abcdeg
expect_rc 2
expect_err_has "0123456789abcdef0123456789abcdeg"
pass

check "weir cancel without a job id: exit 2, says it is missing"
run "$WEIR" cancel -m "localhost:$port"
expect_rc 2
expect_err_ci "missing"
pass

check "weir list with an unknown option: exit 2, names it"
run "$WEIR" list -m "localhost:$port" --bogus
expect_rc 2
expect_err_has "--bogus"
pass

check "remote: a job file that is not a shared object: exit 1, not a weir job"
run "$WEIR" run -d -m "localhost:$port" "$tmp/notes.so"
expect_rc 1
expect_err_has "notes.so"
expect_err_has "not a weir job"
pass

check "remote: a shared object that is not a weir job: exit 1"
run "$WEIR" run -d -m "localhost:$port" "$not_a_job"
expect_rc 1
expect_err_has "not a weir job"
pass

check "remote: a missing job file: exit 1, names it"
run "$WEIR" run -d -m "localhost:$port" "$tmp/missing.so"
expect_rc 1
expect_err_has "$tmp/missing.so"
pass

check "remote: -c Nope: exit 1, lists NumberSum"
run "$WEIR" run -d -m "localhost:$port" -c Nope "$NUMBER_SUM"
expect_rc 1
expect_err_has "'Nope'"
expect_err_has "NumberSum"
pass

check "remote: a bad job argument (--count abc): exit 1 as in the embedded run, names the option and the value"
run "$WEIR" run -d -m "localhost:$port" "$NUMBER_SUM" --count abc
expect_rc 1
expect_err_has "'--count'"
expect_err_has "'abc'"
pass

check "REST: PATCH /jobs/<malformed id>?mode=cancel answers 400"
run_http -X PATCH -d '' "http://localhost:$port/jobs/not-a-job-id?mode=cancel"
expect_rc "HTTP 400"
pass

check "REST: PATCH /jobs/<job>?mode=bogus answers 400 and does not touch the job"
run_http -X PATCH -d '' "http://localhost:$port/jobs/$job?mode=bogus"
expect_rc "HTTP 400"
expect_out_has "bogus"
pass

check "REST: an upload that is not multipart answers 400"
run_http -X POST -d 'garbage' "http://localhost:$port/jars/upload"
expect_rc "HTTP 400"
pass

check "REST: POST /jars/<unknown>/run with malformed JSON answers 4xx"
run_http -X POST -H 'Content-Type: application/json' -d '{bad json' "http://localhost:$port/jars/nonexistent.so/run"
[[ "$RC" =~ ^HTTP\ 4[0-9][0-9]$ ]] || fail "expected HTTP 4xx, got $RC"
pass

check "after all the bad requests the job is still RUNNING and the daemon alive"
kill -0 "$RUNTIME_PID" 2>/dev/null || fail "the daemon (pid $RUNTIME_PID) died; its log: $(tail -n 5 "$RUNTIME_LOG")"
run "$WEIR" list -m "localhost:$port"
expect_rc 0
expect_out_line "[0-3][0-9]\.[01][0-9]\.[0-9]{4} [0-2][0-9]:[0-5][0-9]:[0-5][0-9] : $job : Number Sum \(RUNNING\)"
run "$WEIR" list -a --output json -m "localhost:$port"
expect_rc 0
[[ "$(json_get "[j['jid'] for j in d['jobs'] if j['state'] != 'RUNNING' and j['jid'] == '$job']")" == "[]" ]] ||
  fail "job $job is not RUNNING"
pass

# --- message quality: these come last so that the checks above always run ---------------
check "-t bogus: exit 2, the value in single quotes and the choices named"
run "$WEIR" run -t bogus "$NUMBER_SUM"
expect_rc 2
expect_err_has "'bogus'"
expect_err_has "local"
expect_err_has "remote"
expect_err_style weir-run
pass

check "--output yaml: exit 2, the value in single quotes and the choices named"
run "$WEIR" run --output yaml "$NUMBER_SUM"
expect_rc 2
expect_err_has "'yaml'"
expect_err_has "json"
expect_err_has "text"
expect_err_style weir-run
pass

check "-c without its value: exit 2, a plain message that names -c/--class"
run "$WEIR" run -c
expect_rc 2
expect_err_has "--class"
expect_err_style weir-run
pass

check "-D rest.port=70000: exit 2, and the range in the message agrees with what is accepted (1 to 65535)"
run "$WEIR" run -D rest.port=70000 "$NUMBER_SUM" --count 1
expect_rc 2
expect_err_has "'rest.port'"
expect_err_has "70000"
grep -qE '(from|between) 1 (to|and) 65535' "$ERR_FILE" || fail "the message does not give the range 1 to 65535 (rest.port=0 is refused)"
pass

check "a usage error with --output json (weir run -p 0): exit 2 and one JSON document with the error"
run "$WEIR" run --output json -D "$(rest)" -p 0 "$NUMBER_SUM"
expect_rc 2
expect_out_json
[[ -n "$(json_get 'd["error"]["message"]')" ]] || fail "no error.message in the document"
pass

check "a usage error with --output json (weir cancel <malformed id>): exit 2 and one JSON document with the error"
run "$WEIR" cancel --output json -m "localhost:$port" not-a-job-id
expect_rc 2
expect_out_json
[[ -n "$(json_get 'd["error"]["message"]')" ]] || fail "no error.message in the document"
pass

finish
