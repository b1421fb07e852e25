#!/usr/bin/env bash
# End-to-end: checkpoints and savepoints on a real S3-compatible server that verifies
# signatures (versitygw, started here by scripts/peers/s3.sh). weir-runtime checkpoints
# number_sum to s3://; a savepoint goes to s3://; `weir inspect --verify`, `weir run -s`
# with a savepoint, a chk-<n> and a job's checkpoint directory, and `weir savepoint -d`
# work on s3:// URIs; the committed output of the restored runs is exactly once. Then
# the faults: the server stopped in the middle of checkpointing (checkpoints fail, the
# job goes on within tolerable-failed-checkpoints, and checkpoints succeed again once
# it is back), a corrupted state object refused naming it, and bad credentials, a
# missing bucket and an unreachable endpoint (the secret never printed).
#
#   bash tests/e2e/s3_storage.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

count=150000
out="$tmp/out"

check "the S3 server starts, verifying signatures, with a bucket"
# It also writes the configuration every tool here reads, as a user's config.yaml.
start_s3_peer
code="$(curl -s -o /dev/null -w '%{http_code}' "$s3_endpoint/$s3_bucket/")"
[[ "$code" == 403 ]] || fail "an unsigned request got HTTP $code, not 403: the server does not check signatures"
pass

chk="s3://$s3_bucket/checkpoints"
port="$(free_port)"
m=(-m "localhost:$port")

check "weir-runtime checkpoints number_sum to $chk every 100 ms"
start_runtime "$port" -D execution.checkpointing.interval=100ms -D "execution.checkpointing.dir=$chk" \
  -D execution.checkpointing.externalized-checkpoint-retention=RETAIN_ON_CANCELLATION \
  -D execution.checkpointing.tolerable-failed-checkpoints=1000 -D restart-strategy.type=none \
  -D execution.checkpointing.data-inline-threshold=0
run "$WEIR" run -d "${m[@]}" -p 2 "$NUMBER_SUM" --count "$count" --rate 8000 --output "$out"
expect_rc 0
job="$(submitted_job)"
[[ -n "$job" ]] || fail "no job id printed"
wait_until 30 checkpoints_at_least "$port" "$job" completed 3 || fail "fewer than 3 checkpoints completed on S3 within 30 s"
curl -sf "http://localhost:$port/jobs/$job/checkpoints" >"$tmp/stats.json"
grep -q "\"external_path\":\"$chk/$job/chk-" "$tmp/stats.json" || fail "the REST API does not report an s3:// checkpoint path"
pass

check "weir savepoint <job> s3://... writes a savepoint to S3"
run "$WEIR" savepoint "${m[@]}" "$job" "s3://$s3_bucket/savepoints"
expect_rc 0
expect_out_line "Savepoint completed\\. Path: s3://$s3_bucket/savepoints/savepoint-${job:0:6}-[0-9a-f]{12}"
savepoint="$(savepoint_path)"
pass

check "weir inspect --verify reads the savepoint from S3"
run "$WEIR" inspect --verify "$savepoint"
expect_rc 0
expect_out_has "Snapshot:       $savepoint"
expect_out_has "all checksums match"
pass

check "the server stopped mid-checkpointing: checkpoints fail, the job goes on, and they succeed once it is back"
failed_before="$(checkpoint_count "$port" "$job" failed)"
bash "$S3_PEER" stop >/dev/null 2>&1
wait_until 30 checkpoints_at_least "$port" "$job" failed $((failed_before + 1)) ||
  fail "no checkpoint failed while the S3 server was down"
job_state_is "$port" "$job" RUNNING || fail "the job is not RUNNING with the S3 server down"
grep -q "cannot reach S3 endpoint '$s3_endpoint'" "$RUNTIME_LOG" ||
  fail "the runtime log does not say which S3 endpoint it cannot reach"
run bash "$S3_PEER" start
expect_rc 0
completed_before="$(checkpoint_count "$port" "$job" completed)"
wait_until 30 checkpoints_at_least "$port" "$job" completed $((completed_before + 2)) ||
  fail "no checkpoint completed after the S3 server came back"
job_state_is "$port" "$job" RUNNING || fail "the job is not RUNNING after the S3 server came back"
pass

check "cancel; inspect --verify and weir run -s <the job's checkpoint directory on S3> (its newest chk-<n>) at p=3"
run "$WEIR" cancel "${m[@]}" "$job"
expect_rc 0
wait_until 30 job_state_is "$port" "$job" CANCELED || fail "job $job was not CANCELED"
run "$WEIR" inspect --verify "$chk/$job"
expect_rc 0
expect_err_has "inspecting the newest complete checkpoint '$chk/$job/chk-"
expect_out_has "all checksums match"
run "$WEIR" run -d "${m[@]}" -p 3 -s "$chk/$job" "$NUMBER_SUM" --count "$count" --rate 8000 --output "$out"
expect_rc 0
expect_err_has "restoring from the newest complete checkpoint '$chk/$job/chk-"
job2="$(submitted_job)"
wait_until 30 job_state_is "$port" "$job2" RUNNING || fail "job $job2 did not reach RUNNING"
pass

check "stop -p s3://... ; restore that savepoint from its _metadata, and the run finishes"
sleep 0.5
run "$WEIR" stop "${m[@]}" -p "s3://$s3_bucket/savepoints" "$job2"
expect_rc 0
stopped="$(savepoint_path)"
[[ "$stopped" == "s3://$s3_bucket/savepoints/savepoint-"* ]] || fail "stop did not print an s3:// savepoint path"
wait_until 30 job_state_is "$port" "$job2" FINISHED || fail "job $job2 is not FINISHED after stop"
run "$WEIR" run "${m[@]}" -p 1 -s "$stopped/_metadata" "$NUMBER_SUM" --count "$count" --output "$out"
expect_rc 0
expect_out_has "has finished."
pass

check "the committed output holds every n in 1..$count exactly once with correct running sums"
expect_number_sum_committed "$out" "$count"
pass

check "weir run -s <a chk-<n> on S3> restores that checkpoint"
run "$WEIR" inspect "$chk/$job"
chk_dir="$(sed -n 's/^Snapshot: *//p' "$OUT_FILE")"
[[ "$chk_dir" == "$chk/$job/chk-"* ]] || fail "no chk-<n> of job $job on S3"
run "$WEIR" run "${m[@]}" -p 2 -s "$chk_dir" "$NUMBER_SUM" --count 100 --output "$tmp/out-chk"
expect_rc 0
expect_out_has "has finished."
pass

check "a corrupted state object is refused on restore and by inspect --verify, naming it"
object="$(find "$S3_WORK_DIR/data/$s3_bucket/${savepoint#s3://$s3_bucket/}" -type f ! -name _metadata | head -n 1)"
[[ -n "$object" ]] || fail "no state object of $savepoint in the server's data directory"
key="${object#"$S3_WORK_DIR/data/$s3_bucket/"}"
python3 - "$object" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
b[len(b) // 2] ^= 0x5a
open(p, 'wb').write(bytes(b))
EOF
run "$WEIR" inspect --verify "$savepoint"
expect_rc 1
expect_err_has "s3://$s3_bucket/$key"
run "$WEIR" run "${m[@]}" -s "$savepoint" "$NUMBER_SUM" --count 100 --output "$tmp/out-bad"
expect_rc 1
expect_err_has "s3://$s3_bucket/$key"
pass

check "weir savepoint -d disposes of an S3 savepoint; inspecting it then fails"
run "$WEIR" savepoint "${m[@]}" -d "$stopped"
expect_rc 0
expect_out_has "disposed"
[[ ! -e "$S3_WORK_DIR/data/$s3_bucket/${stopped#s3://$s3_bucket/}/_metadata" ]] || fail "the _metadata object is still there"
run "$WEIR" inspect "$stopped"
expect_rc 1
expect_err_has "cannot find checkpoint or savepoint '$stopped'"
pass

check "a wrong secret: exit 1, naming the endpoint, bucket and key id, never the secret"
run "$WEIR" inspect -D s3.secret-key=wrong-secret-xyz "$savepoint"
expect_rc 1
expect_err_has "$s3_endpoint"
expect_err_has "bucket '$s3_bucket'"
expect_err_has "access key '$s3_access_key'"
expect_err_has "s3.secret-key"
grep -q "wrong-secret-xyz" "$ERR_FILE" && fail "the secret was printed"
grep -q "$s3_secret_key" "$ERR_FILE" && fail "the configured secret was printed"
pass

check "an unknown access key, a missing bucket: exit 1 with the way out"
run "$WEIR" inspect -D s3.access-key=nobody "$savepoint"
expect_rc 1
expect_err_has "access key 'nobody'"
expect_err_has "s3.access-key"
run "$WEIR" inspect "s3://no-such-bucket/x"
expect_rc 1
expect_err_has "NoSuchBucket"
expect_err_has "create bucket 'no-such-bucket'"
pass

check "an unreachable endpoint: exit 3, naming it; a job with S3 storage and no credentials is refused"
run "$WEIR" inspect -D "s3.endpoint=http://127.0.0.1:$(free_port)" "$savepoint"
expect_rc 3
expect_err_has "cannot reach S3 endpoint 'http://127.0.0.1:"
expect_err_has "s3.endpoint"
WEIR_CONF_DIR="" run env -u AWS_ACCESS_KEY_ID "$WEIR" run -D "rest.port=$(free_port)" -D execution.checkpointing.interval=1s \
  -D "execution.checkpointing.dir=$chk" "$NUMBER_SUM" --count 10 --output "$tmp/out-nocreds"
expect_rc 1
expect_err_has "no S3 credentials for bucket '$s3_bucket'"
expect_err_has "s3.access-key"
pass

finish
