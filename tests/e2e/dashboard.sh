#!/usr/bin/env bash
# The web dashboard in a real headless browser: Debian's chromium driven by Playwright
# (scripts/peers/browser.sh installs both; scripts/test.sh runs that first). A weir-runtime
# runs number_sum with checkpoints; tests/e2e/dashboard_browser.js opens the dashboard at
# "/", follows deep links, reads the graph and checkpoints, triggers a savepoint and a
# stop with savepoint from the buttons, and requires no console error. The screenshots are
# kept in <build>/test-artifacts/dashboard/.
#
#   bash tests/e2e/dashboard.sh [build-dir]
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

BROWSER_PEER="$REPO_DIR/scripts/peers/browser.sh"
node_modules="$("$BROWSER_PEER" dir)/node_modules"
chromium="$("$BROWSER_PEER" chromium)"
SHOTS="$BUILD_DIR/test-artifacts/dashboard"

check "the browser and Playwright are installed"
command -v node >/dev/null || fail "node is not installed; run 'scripts/peers/browser.sh install'"
[[ -n "$chromium" ]] || fail "chromium is not installed; run 'scripts/peers/browser.sh install'"
[[ -d "$node_modules/playwright-core" ]] ||
  fail "playwright-core is not in '$node_modules'; run 'scripts/peers/browser.sh install'"
pass

port="$(free_port)"
check "a runtime runs number_sum with checkpoints every 200 ms"
start_runtime "$port" -D execution.checkpointing.interval=200ms
submit_job "$port" -p 2 "$NUMBER_SUM" --count 100000000 --rate 2000 --output "$tmp/out"
pass

check "the dashboard shows the job, its graph and checkpoints; its buttons act after asking"
rm -rf "$SHOTS"
mkdir -p "$SHOTS"
E2E_CMD_TIMEOUT=120 run env NODE_PATH="$node_modules" WEIR_CHROMIUM="$chromium" \
  node "$REPO_DIR/tests/e2e/dashboard_browser.js" "http://localhost:$port" "$job" \
  "$tmp/savepoints" "$SHOTS"
expect_rc 0
cat "$OUT_FILE"
for shot in jobs job savepoint stopped; do
  [[ -s "$SHOTS/$shot.png" ]] || fail "no screenshot '$SHOTS/$shot.png'"
done
ls "$tmp/savepoints"/savepoint-* >/dev/null 2>&1 || fail "no savepoint in '$tmp/savepoints'"
job_state_is "$port" "$job" FINISHED || fail "job $job is not FINISHED after the stop"
pass

finish
