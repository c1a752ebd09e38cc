#!/usr/bin/env bash
# The Airflow provider's checks and tests, from a fresh checkout:
#   1. the venv (scripts/venv.sh: pinned, hashed, from PyPI; instant when the lock is unchanged)
#   2. ruff (lint + format) and mypy (strict) over src/ and tests/
#   3. the Druid emulator (slow tasks on request) and `segops serve` with an API token, from the repo root
#   4. pytest: dag.test() over three logical dates, a forced retry, failures, then the real scheduler,
#      dag-processor, triggerer and api-server (LocalExecutor, SQLite) for the deferred state
#   5. 3 and 4 again on the oldest supported Airflow (2.10, .venv-airflow2 from requirements-test-airflow2.lock),
#      with an emulator and a service of its own (the tests count Druid submissions per datasource)
# Extra arguments go to pytest (e.g. -k scheduler). SEGOPS_AIRFLOW_VERSIONS="3 2" (default) chooses the
# Airflow majors to run on. Logs of a run stay in .tmp/run-*/ (the last 4 kept).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"

started=$SECONDS
versions=${SEGOPS_AIRFLOW_VERSIONS:-3 2}
python=$(bash scripts/venv.sh)
bin=$(dirname "$python")
if [[ " $versions " == *" 2 "* ]]; then
  bin2=$(dirname "$(bash scripts/venv.sh --airflow2)")
fi
echo "test.sh: venvs ready ($((SECONDS - started)) s)"

"$bin/ruff" check src tests
"$bin/ruff" format --check src tests
"$bin/mypy" --cache-dir .mypy_cache src tests
echo "test.sh: ruff and mypy passed ($((SECONDS - started)) s)"

[[ -d "$repo/node_modules/tsx" ]] || { echo "test.sh: run npm ci at the repository root first" >&2; exit 2; }

mkdir -p .tmp
{ ls -1dt .tmp/run-* 2>/dev/null || true; } | tail -n +4 | xargs -r rm -rf
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

# Waits for the line a process prints when it listens and echoes the URL in it.
url_from() {
  local file=$1 pattern=$2 pid=$3 deadline=$((SECONDS + 60))
  while ((SECONDS < deadline)); do
    if grep -Eo "$pattern" "$file" 2>/dev/null | head -1 | grep -Eo 'http://[0-9.]+:[0-9]+'; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "test.sh: process $pid exited; see $file" >&2; cat "$file" >&2; return 1; }
    sleep 0.1
  done
  echo "test.sh: no URL in $file after 60 s" >&2
  return 1
}

# The suite under one Airflow: its own emulator and service, then pytest from the venv's bin directory.
suite() {
  local label=$1 venv_bin=$2 work sim_url serve_url status=0
  shift 2
  work=$(mktemp -d "$here/.tmp/run-XXXXXX")
  (cd "$repo" && exec node --import tsx src/cli/bin.ts sim --port 0 --time-scale 100 --capacity 8) \
    >"$work/sim.log" 2>&1 &
  pids+=($!)
  sim_url=$(url_from "$work/sim.log" 'listening on http://[0-9.]+:[0-9]+' "${pids[-1]}")

  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
  (cd "$repo" && exec node --import tsx src/cli/bin.ts serve --port 0 --druid "$sim_url" \
    --ledger "sqlite:$work/ledger.db" --api-token-file "$work/token" --tick 50 --log-level warn) \
    >"$work/serve.log" 2>&1 &
  pids+=($!)
  serve_url=$(url_from "$work/serve.log" 'listening on http://[0-9.]+:[0-9]+' "${pids[-1]}")
  echo "test.sh: $label: emulator $sim_url, segops serve $serve_url, logs in $work ($((SECONDS - started)) s)"

  SEGOPS_TEST_URL=$serve_url SEGOPS_TEST_SIM_URL=$sim_url SEGOPS_TEST_TOKEN_FILE=$work/token \
    SEGOPS_TEST_WORK=$work "$venv_bin/pytest" -p no:cacheprovider "$@" || status=$?
  echo "test.sh: $label: pytest exit $status ($((SECONDS - started)) s)"
  # This suite's emulator and service end with it (cleanup() still covers an interrupted run).
  kill -TERM "${pids[-1]}" "${pids[-2]}" 2>/dev/null || true
  wait "${pids[-1]}" "${pids[-2]}" 2>/dev/null || true
  return "$status"
}

status=0
if [[ " $versions " == *" 3 "* ]]; then suite "Airflow 3" "$bin" "$@" || status=1; fi
if [[ " $versions " == *" 2 "* ]]; then suite "Airflow 2.10" "$bin2" "$@" || status=1; fi
exit $status
