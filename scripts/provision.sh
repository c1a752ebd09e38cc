#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, only when missing:
# Node packages (npm ci), a PostgreSQL server (the shared-ledger tests start a throwaway cluster),
# Chromium (the dashboard's browser tests), and the tools the real-Druid stage uses (curl, jq; Java 17
# and Maven come with the machine image).
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

# Chromium for the dashboard's browser tests (test/web/): Debian's package, driven by playwright-core
# (never a browser Playwright downloads).
if [ ! -x /usr/bin/chromium ]; then
  echo "provision: installing Chromium (Debian package, for the dashboard's browser tests)"
  apt_install chromium
fi

# promtool, Prometheus' checker: the metrics test pipes the service's /metrics through
# `promtool check metrics` and checks docs/alerts.yml with `promtool check rules`. Debian ships it only in
# the `prometheus` server package (bookworm: 2.42), whose postinst enables and starts a Prometheus server
# listening on :9090. A policy-rc.d answering 101 ("action forbidden") for the duration of the install
# keeps invoke-rc.d and deb-systemd-invoke from starting it (a machine that already has one, as container
# images do, keeps its own); afterwards the service is stopped and disabled in case anything started it
# anyway, so the install leaves nothing running or listening and nothing starts at boot.
if ! command -v promtool >/dev/null 2>&1; then
  echo "provision: installing promtool (Debian package prometheus; its server is not started)"
  policy_added=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n# segops provision: no service may start while prometheus is installed\nexit 101\n' |
      as_root tee /usr/sbin/policy-rc.d >/dev/null
    as_root chmod 755 /usr/sbin/policy-rc.d
    policy_added=1
  fi
  promtool_rc=0
  apt_install prometheus || promtool_rc=$?
  if [ "$policy_added" = 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
  if [ "$promtool_rc" != 0 ]; then exit "$promtool_rc"; fi
  if [ -d /run/systemd/system ]; then
    as_root systemctl disable --now prometheus.service >/dev/null 2>&1 || true
  elif [ -x /etc/init.d/prometheus ]; then
    as_root /etc/init.d/prometheus stop >/dev/null 2>&1 || true
    as_root update-rc.d prometheus disable >/dev/null 2>&1 || true
  fi
fi

# The API fuzzer (schemathesis) for test/serve/openapi.test.ts: a Python 3.11 venv in .venv-fuzz from the
# hashed lock test/fuzz/requirements.txt (a no-op when already installed).
bash scripts/python-env.sh
