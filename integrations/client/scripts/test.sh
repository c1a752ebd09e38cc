#!/usr/bin/env bash
# The client's checks, from any directory:
#   1. provisions integrations/client/.venv from the lock (scripts/venv.sh; nothing to do when current),
#   2. lints (ruff check, ruff format --check) and type-checks (mypy --strict) the package and the tests,
#   3. regenerates the generated files in memory and fails when the committed ones differ (scripts/gen.sh
#      --check: needs the repository's node_modules, npm ci),
#   4. runs pytest (the transport against httpx's mock transport; extra arguments go to pytest).
# The Airflow and Dagster suites run this client against a real `segops serve`.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$here/.venv/bin"
bash "$here/scripts/venv.sh"
cd "$here"
"$bin/ruff" check --quiet .
"$bin/ruff" format --check --quiet .
"$bin/mypy" --no-error-summary
bash "$here/scripts/gen.sh" --check
"$bin/python" -m pytest -p no:cacheprovider "$@"
