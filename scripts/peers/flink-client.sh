#!/usr/bin/env bash
# Flink's own Java REST client (RestClusterClient, from Maven) for tests/e2e/java_client.sh,
# and the Flink counterparts of weir's benchmark jobs (tests/bench/vs-flink).
#
#   scripts/peers/flink-client.sh install   # once per machine: resolves the Maven projects
#                                           # tests/e2e/java-client (flink-clients) and
#                                           # tests/bench/vs-flink (flink-streaming-java,
#                                           # flink-connector-files) and the build plugins
#                                           # into the local repository
#   scripts/peers/flink-client.sh repo      # prints the local repository (for mvn -o)
#
# Environment (optional): WEIR_MAVEN_REPO, the local Maven repository (default
# /opt/weir-peers/maven-repo). `install` is idempotent: it does nothing while the repository
# holds what the current pom.xml files need (a marker file per project names its pom's
# checksum). The test and the benchmark then build offline (`mvn -o`), so they need no network.
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PROJECTS=("$ROOT/tests/e2e/java-client" "$ROOT/tests/bench/vs-flink")
WEIR_MAVEN_REPO="${WEIR_MAVEN_REPO:-$PEERS_ROOT/maven-repo}"

# The marker of a project's resolved pom; the REST client's keeps its original name.
marker() {
  local name
  name="$(basename "$1")"
  [[ "$name" == java-client ]] || name="project-$name"
  echo "$WEIR_MAVEN_REPO/.weir-$name-$(sha256sum "$1/pom.xml" | cut -c1-16)"
}

install_project() {
  local project="$1" relative="${1#"$ROOT"/}"
  if [[ -f "$(marker "$project")" ]]; then
    say "$relative: already installed in $WEIR_MAVEN_REPO"
    return 0
  fi
  command -v mvn >/dev/null || die "no mvn" "apt-get install -y maven"
  command -v javac >/dev/null || die "no javac" "apt-get install -y openjdk-17-jdk-headless"
  local t0=$SECONDS work
  work="$(mktemp -d)"
  # Build a copy once with the goals the test runs: that resolves the dependencies and every
  # plugin they need (dependency:go-offline misses some plugins).
  cp -r "$project/." "$work/"
  mkdir -p "$WEIR_MAVEN_REPO"
  if ! mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$WEIR_MAVEN_REPO" -f "$work/pom.xml" \
    compile dependency:build-classpath -Dmdep.outputFile="$work/classpath.txt"; then
    rm -rf "$work"
    die "mvn could not resolve $relative" "re-run '$0 install' once Maven reaches its registry"
  fi
  rm -rf "$work"
  touch "$(marker "$project")"
  say "$relative: installed in $((SECONDS - t0)) s ($(du -sh "$WEIR_MAVEN_REPO" | cut -f1) in $WEIR_MAVEN_REPO)"
}

cmd_install() {
  local project
  for project in "${PROJECTS[@]}"; do install_project "$project"; done
}

cmd_repo() { echo "$WEIR_MAVEN_REPO"; }

peer_main "install|repo" "$@"
