#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, only when missing:
# Node packages (npm ci), a PostgreSQL server (the shared-ledger tests start a throwaway cluster), and
# the tools the real-Druid stage uses (curl, jq; Java 17 and Maven come with the machine image).
set -euo pipefail
cd "$(dirname "$0")/.."

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends "$@"
}

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "provision: installing Node packages (npm ci)"
  npm ci --no-audit --no-fund
fi

if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  echo "provision: installing PostgreSQL server (Debian package)"
  apt_install postgresql
fi

missing=()
for tool in curl jq; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "provision: installing ${missing[*]}"
  apt_install "${missing[@]}"
fi
