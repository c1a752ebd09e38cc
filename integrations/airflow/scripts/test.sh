#!/usr/bin/env bash
# The Airflow provider's checks and tests, from a fresh checkout:
#   1. the venv (scripts/venv.sh: pinned, hashed, from PyPI; instant when the lock is unchanged)
#   2. ruff (lint + format) and mypy (strict) over src/ and tests/
#   3. the Druid emulator (slow tasks on request) and `segops serve` with an API token, from the repo root
#   4. pytest: dag.test() over three logical dates, a forced retry, failures, then the real scheduler,
#      dag-processor, triggerer and api-server (LocalExecutor, SQLite) for the deferred state
# Extra arguments go to pytest (e.g. -k scheduler). Logs of a run stay in .tmp/run-*/ (the last 3 kept).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
cd "$here"

started=$SECONDS
python=$(bash scripts/venv.sh)
bin=$(dirname "$python")
echo "test.sh: venv ready ($((SECONDS - started)) s)"

"$bin/ruff" check src tests
"$bin/ruff" format --check src tests
"$bin/mypy" --cache-dir .mypy_cache src tests
echo "test.sh: ruff and mypy passed ($((SECONDS - started)) s)"

[[ -d "$repo/node_modules/tsx" ]] || { echo "test.sh: run npm ci at the repository root first" >&2; exit 2; }

mkdir -p .tmp
{ ls -1dt .tmp/run-* 2>/dev/null || true; } | tail -n +3 | xargs -r rm -rf
work=$(mktemp -d "$here/.tmp/run-XXXXXX")
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
echo "test.sh: emulator $sim_url, segops serve $serve_url, logs in $work ($((SECONDS - started)) s)"

export SEGOPS_TEST_URL=$serve_url SEGOPS_TEST_SIM_URL=$sim_url SEGOPS_TEST_TOKEN_FILE=$work/token
export SEGOPS_TEST_WORK=$work
status=0
"$bin/pytest" -p no:cacheprovider "$@" || status=$?
echo "test.sh: pytest exit $status ($((SECONDS - started)) s)"
exit $status
