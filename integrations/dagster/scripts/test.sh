#!/usr/bin/env bash
# The Dagster integration's tests, from any directory:
#   1. provisions integrations/dagster/.venv from the lock (scripts/venv.sh; nothing to do when current),
#   2. lints (ruff check, ruff format --check) and type-checks (mypy --strict) the package and the tests,
#   3. starts the Druid emulator (`segops sim`) and `segops serve` (with a bearer token, on a fresh SQLite
#      ledger) from the repository root, each on a free port,
#   4. runs pytest against them (extra arguments go to pytest), and stops both.
# Needs Node 20 with the repository's node_modules (npm ci) and python3.11 (or PYTHON=...).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$here/.venv/bin"

bash "$here/scripts/venv.sh"

cd "$here"
"$bin/ruff" check --quiet .
"$bin/ruff" format --check --quiet .
"$bin/mypy" --no-error-summary

work="$(mktemp -d "${TMPDIR:-/tmp}/dagster-segops-test.XXXXXX")"
pids=()
cleanup() {
  local status=$?
  set +e # a closed stdout (test.sh | head) must not stop the cleanup
  trap - EXIT INT TERM HUP
  trap '' PIPE # writing the logs to a closed pipe must not kill the cleanup
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ "$status" -ne 0 ]; then
    for log in "$work"/*.log; do
      [ -f "$log" ] || continue
      echo "--- last lines of $log" >&2
      tail -n 20 "$log" >&2
    done
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT INT TERM HUP PIPE

# Waits until a process's log names the URL it listens on; fails if the process exits first.
listening_url() {
  local pid=$1 log=$2 pattern=$3 url=""
  for _ in $(seq 1 600); do
    url="$(grep -oE "$pattern" "$log" | head -n 1 || true)"
    [ -n "$url" ] && { echo "$url"; return 0; }
    kill -0 "$pid" 2>/dev/null || { echo "test.sh: process $pid exited; see $log" >&2; cat "$log" >&2; return 1; }
    sleep 0.1
  done
  echo "test.sh: no URL in $log after 60 s" >&2
  return 1
}

cd "$root"
node --import tsx src/cli/bin.ts sim --port 0 --time-scale 100 >"$work/sim.log" 2>&1 &
pids+=($!)
sim_url="$(listening_url "${pids[0]}" "$work/sim.log" 'http://127\.0\.0\.1:[0-9]+')"

token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf '%s\n' "$token" >"$work/token"
chmod 600 "$work/token"
node --import tsx src/cli/bin.ts serve --port 0 --druid "$sim_url" --ledger "sqlite:$work/ledger.db" \
  --api-token-file "$work/token" --tick 50 --log-level warn >"$work/serve.log" 2>&1 &
pids+=($!)
serve_url="$(listening_url "${pids[1]}" "$work/serve.log" 'listening on http://127\.0\.0\.1:[0-9]+' | sed 's/^listening on //')"

cd "$here"
export SEGOPS_TEST_URL="$serve_url" SEGOPS_TEST_TOKEN="$token" SEGOPS_TEST_SIM_URL="$sim_url"
export SEGOPS_TEST_WORK="$work"
"$bin/python" -m pytest -p no:cacheprovider "$@"
