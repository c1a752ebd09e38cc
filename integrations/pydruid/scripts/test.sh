#!/usr/bin/env bash
# Python's Druid clients against the Druid emulator, from any directory:
#   1. provisions integrations/pydruid/.venv from requirements.lock (scripts/venv.sh; nothing to do when current),
#   2. lints the tests (ruff check, ruff format --check),
#   3. starts `segops sim` from the repository root on a free port (time scale 100), runs pytest against it
#      (tests/conftest.py ingests one small datasource; extra arguments go to pytest), and stops it:
#      pydruid's PyDruid native queries (POST /druid/v2/) and SQLAlchemy Core over its `druid://` dialect.
# SEGOPS_TEST_SIM_URL=<url> runs the tests against that Druid instead (a real one, to compare).
# Needs Node 20 with the repository's node_modules (npm ci) and python3.11 (or PYTHON=...).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$here/.venv/bin"
bash "$here/scripts/venv.sh"
cd "$here"
"$bin/ruff" check --quiet .
"$bin/ruff" format --check --quiet .

if [ -n "${SEGOPS_TEST_SIM_URL:-}" ]; then
  exec "$bin/python" -m pytest -p no:cacheprovider "$@"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/pydruid-segops-test.XXXXXX")"
sim_pid=""
cleanup() {
  local status=$?
  set +e
  trap - EXIT INT TERM HUP
  [ -n "$sim_pid" ] && { kill "$sim_pid" 2>/dev/null; wait "$sim_pid" 2>/dev/null; }
  if [ "$status" -ne 0 ] && [ -f "$work/sim.log" ]; then
    echo "--- last lines of $work/sim.log" >&2
    tail -n 20 "$work/sim.log" >&2
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT INT TERM HUP

cd "$root"
node --import tsx src/cli/bin.ts sim --port 0 --time-scale 100 >"$work/sim.log" 2>&1 &
sim_pid=$!
sim_url=""
for _ in $(seq 1 600); do
  sim_url="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$work/sim.log" | head -n 1 || true)"
  [ -n "$sim_url" ] && break
  kill -0 "$sim_pid" 2>/dev/null || { echo "test.sh: segops sim exited" >&2; exit 1; }
  sleep 0.1
done
[ -n "$sim_url" ] || { echo "test.sh: segops sim named no URL in 60 s" >&2; exit 1; }

cd "$here"
SEGOPS_TEST_SIM_URL="$sim_url" "$bin/python" -m pytest -p no:cacheprovider "$@"
