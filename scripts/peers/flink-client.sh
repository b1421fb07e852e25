#!/usr/bin/env bash
# Flink's own Java REST client (RestClusterClient, from Maven) for tests/e2e/java_client.sh.
#
#   scripts/peers/flink-client.sh install   # once per machine: resolves the Maven project
#                                           # tests/e2e/java-client (flink-clients and the
#                                           # build plugins) into the local repository
#   scripts/peers/flink-client.sh repo      # prints the local repository (for mvn -o)
#
# Environment (optional): WEIR_MAVEN_REPO, the local Maven repository (default
# /opt/weir-peers/maven-repo). `install` is idempotent: it does nothing while the repository
# holds what the current pom.xml needs (a marker file names the pom's checksum). The test
# then builds the project offline (`mvn -o`), so it needs no network.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PROJECT="$ROOT/tests/e2e/java-client"
WEIR_MAVEN_REPO="${WEIR_MAVEN_REPO:-$PEERS_ROOT/maven-repo}"

marker() { echo "$WEIR_MAVEN_REPO/.weir-java-client-$(sha256sum "$PROJECT/pom.xml" | cut -c1-16)"; }

cmd_install() {
  if [[ -f "$(marker)" ]]; then
    say "already installed in $WEIR_MAVEN_REPO"
    return 0
  fi
  command -v mvn >/dev/null || die "no mvn" "apt-get install -y maven"
  command -v javac >/dev/null || die "no javac" "apt-get install -y openjdk-17-jdk-headless"
  local t0=$SECONDS
  WORK="$(mktemp -d)"
  trap 'rm -rf "$WORK"' EXIT
  # Build a copy once with the goals the test runs: that resolves the dependencies and every
  # plugin they need (dependency:go-offline misses some plugins).
  cp -r "$PROJECT/." "$WORK/"
  mkdir -p "$WEIR_MAVEN_REPO"
  mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$WEIR_MAVEN_REPO" -f "$WORK/pom.xml" \
    compile dependency:build-classpath -Dmdep.outputFile="$WORK/classpath.txt" ||
    die "mvn could not resolve tests/e2e/java-client" "re-run '$0 install' once Maven reaches its registry"
  touch "$(marker)"
  say "installed in $((SECONDS - t0)) s ($(du -sh "$WEIR_MAVEN_REPO" | cut -f1) in $WEIR_MAVEN_REPO)"
}

cmd_repo() { echo "$WEIR_MAVEN_REPO"; }

peer_main "install|repo" "$@"
