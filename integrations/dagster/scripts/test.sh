#!/usr/bin/env bash
# The Dagster integration's tests, from any directory:
#   1. provisions integrations/dagster/.venv (the newest Dagster supported) and .venv-floor (the oldest)
#      from their locks (scripts/venv.sh; nothing to do when current),
#   2. lints (ruff check, ruff format --check) and type-checks (mypy --strict) the package and the tests,
#   3. for each environment: starts the Druid emulator (`segops sim`) and `segops serve` (with a bearer
#      token, on a fresh SQLite ledger) from the repository root, each on a free port, runs pytest against
#      them (extra arguments go to pytest), and stops both.
# DAGSTER_ENVS="newest" (or "floor") runs one environment only; the default is both.
# Needs Node 20 with the repository's node_modules (npm ci) and python3.11 (or PYTHON=...).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="$here/.venv/bin"
envs="${DAGSTER_ENVS:-newest floor}"
for env in $envs; do
  case "$env" in
    newest) bash "$here/scripts/venv.sh" ;;
    floor) bash "$here/scripts/venv.sh" floor ;;
    *) echo "test.sh: unknown DAGSTER_ENVS entry '$env' (expected newest and/or floor)" >&2; exit 2 ;;
  esac
done
[ -x "$bin/ruff" ] || bash "$here/scripts/venv.sh" # the linters come from the newest environment

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
    for log in "$work"/*/*.log; do
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

# One environment: a fresh emulator and service (the tests count submissions per datasource, so each
# suite starts from an empty Druid and ledger), then pytest with that environment's interpreter.
run_suite() {
  local env=$1 python=$2 dir="$work/$1" sim_pid serve_pid sim_url serve_url token
  mkdir -p "$dir"
  cd "$root"
  node --import tsx src/cli/bin.ts sim --port 0 --time-scale 100 >"$dir/sim.log" 2>&1 &
  sim_pid=$!
  pids+=("$sim_pid")
  sim_url="$(listening_url "$sim_pid" "$dir/sim.log" 'http://127\.0\.0\.1:[0-9]+')"

  token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  printf '%s\n' "$token" >"$dir/token"
  chmod 600 "$dir/token"
  node --import tsx src/cli/bin.ts serve --port 0 --druid "$sim_url" --ledger "sqlite:$dir/ledger.db" \
    --api-token-file "$dir/token" --tick 50 --log-level warn >"$dir/serve.log" 2>&1 &
  serve_pid=$!
  pids+=("$serve_pid")
  serve_url="$(listening_url "$serve_pid" "$dir/serve.log" 'listening on http://127\.0\.0\.1:[0-9]+' | sed 's/^listening on //')"

  cd "$here"
  echo "test.sh: Dagster $("$python" -c 'import dagster; print(dagster.__version__)') ($env)" >&2
  local status=0
  SEGOPS_TEST_URL="$serve_url" SEGOPS_TEST_TOKEN="$token" SEGOPS_TEST_SIM_URL="$sim_url" \
    SEGOPS_TEST_WORK="$dir" "$python" -m pytest -p no:cacheprovider "${@:3}" || status=$?
  kill "$sim_pid" "$serve_pid" 2>/dev/null || true
  wait "$sim_pid" "$serve_pid" 2>/dev/null || true
  pids=()
  return "$status"
}

# Both environments run even when the first fails (the failure of either fails the script).
failed=""
for env in $envs; do
  case "$env" in
    newest) run_suite newest "$here/.venv/bin/python" "$@" || failed+=" newest" ;;
    floor) run_suite floor "$here/.venv-floor/bin/python" "$@" || failed+=" floor" ;;
  esac
done
if [ -n "$failed" ]; then
  echo "test.sh: pytest failed with Dagster:$failed" >&2
  exit 1
fi
