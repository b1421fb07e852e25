#!/usr/bin/env bash
# Installs the Debian 12 packages that weir needs to build and test.
#
# Idempotent: it asks dpkg which packages are installed and does nothing when all
# are; `apt-get update` runs only when something is missing. As root it installs
# what is missing; otherwise it prints the command to run and exits 1.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libcli11-dev nlohmann-json3-dev libcurl4-openssl-dev librocksdb-dev libfmt-dev
  catch2 libspdlog-dev libyaml-cpp-dev libcpp-httplib-dev
  curl python3 python3-yaml procps
  # The Flink peer of the compatibility test (scripts/peers/flink.sh): Java 17, Maven, venv.
  openjdk-17-jre-headless maven python3-venv
  # The PostgreSQL connector (connectors/postgres) links libpq.
  libpq-dev
  # tests/e2e/java_client.sh compiles a Java program against Flink's client (javac).
  # The HDFS peer (scripts/peers/hdfs.sh) compiles its small Java main.
  openjdk-17-jdk-headless
  # The Kafka connector (connectors/kafka) links librdkafka.
  librdkafka-dev
)

if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "setup: 'dpkg-query' not found: this script supports Debian 12 (bookworm) only" >&2
  echo "hint: install these packages (or their equivalents) by hand: ${PACKAGES[*]}" >&2
  exit 1
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ "$(id -u)" -ne 0 ]]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "hint: run as root: apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get -o DPkg::Lock::Timeout=600 update
apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
