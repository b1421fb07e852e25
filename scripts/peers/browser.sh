#!/usr/bin/env bash
# The headless browser of tests/e2e/dashboard.sh: Debian's chromium, driven by
# playwright-core (npm), which runs that browser rather than a build of its own.
#
#   scripts/peers/browser.sh install   # once per machine (idempotent): apt chromium,
#                                      # npm playwright-core into /opt/weir-peers/browser
#   scripts/peers/browser.sh dir       # prints the npm prefix (NODE_PATH=<dir>/node_modules)
#   scripts/peers/browser.sh chromium  # prints the browser's path
#
# Environment (optional): WEIR_BROWSER_DIR (default /opt/weir-peers/browser).
set -euo pipefail

WEIR_BROWSER_DIR="${WEIR_BROWSER_DIR:-/opt/weir-peers/browser}"
PLAYWRIGHT_VERSION=1.65.1

say() { echo "browser.sh: $*"; }
die() {
  echo "browser.sh: error: $1" >&2
  [[ -z "${2:-}" ]] || echo "hint: $2" >&2
  exit 1
}

# Waits for a dpkg lock another apt-get holds (e.g. unattended upgrades) instead of failing.
APT_LOCK=(-o DPkg::Lock::Timeout=600)
apt_install() { apt-get "${APT_LOCK[@]}" install -y -q "$@" >/dev/null; }

chromium_path() { command -v chromium || true; }

cmd_install() {
  local marker="$WEIR_BROWSER_DIR/.playwright-core-$PLAYWRIGHT_VERSION"
  if [[ -n "$(chromium_path)" && -f "$marker" ]]; then
    say "already installed in $WEIR_BROWSER_DIR"
    return 0
  fi
  local t0=$SECONDS
  if [[ -z "$(chromium_path)" ]]; then
    apt_install chromium || { apt-get "${APT_LOCK[@]}" update -q >/dev/null && apt_install chromium; } ||
      die "apt-get could not install chromium" "run 'apt-get update' first"
  fi
  command -v npm >/dev/null || apt_install nodejs npm || die "no npm" "apt-get install -y nodejs npm"
  mkdir -p "$WEIR_BROWSER_DIR"
  # PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: the tests run Debian's chromium.
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm install --silent --no-audit --no-fund \
    --prefix "$WEIR_BROWSER_DIR" "playwright-core@$PLAYWRIGHT_VERSION" ||
    die "npm could not install playwright-core" "re-run '$0 install' once npm reaches its registry"
  touch "$marker"
  say "installed in $((SECONDS - t0)) s ($(du -sh "$WEIR_BROWSER_DIR" | cut -f1) in $WEIR_BROWSER_DIR)"
}

case "${1:-}" in
  install) cmd_install ;;
  dir) echo "$WEIR_BROWSER_DIR" ;;
  chromium) chromium_path ;;
  *)
    echo "usage: $0 install|dir|chromium" >&2
    exit 2
    ;;
esac
