#!/usr/bin/env bash
# The screenshot of segops' connection form in Airflow 3's UI (docs/images/airflow-connection-form.png): starts
# the test venv's `airflow api-server` (a throwaway AIRFLOW_HOME, simple auth with everyone an admin), opens
# Admin → Connections → Add Connection in headless Chromium (Debian's, through the repository's playwright-core),
# picks the segops type, opens its standard and extra fields, and saves the picture. Run after scripts/venv.sh.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/docs/images/airflow-connection-form.png}
export AIRFLOW_HOME
AIRFLOW_HOME=$(mktemp -d)
port=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
export AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS=True AIRFLOW__CORE__LOAD_EXAMPLES=False \
  AIRFLOW__API__SECRET_KEY=screenshot AIRFLOW__API_AUTH__JWT_SECRET=screenshot AIRFLOW__API__HOST=127.0.0.1 \
  AIRFLOW__API__PORT=$port AIRFLOW__API__WORKERS=1
"$here/.venv/bin/airflow" db migrate >"$AIRFLOW_HOME/migrate.log" 2>&1
"$here/.venv/bin/airflow" api-server >"$AIRFLOW_HOME/api.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$AIRFLOW_HOME"' EXIT
for _ in $(seq 120); do curl -sf "http://127.0.0.1:$port/api/v2/version" >/dev/null && break; sleep 1; done
URL=http://127.0.0.1:$port OUT=$out PLAYWRIGHT="$repo/node_modules/playwright-core/index.mjs" \
  node "$here/scripts/connection-form-screenshot.mjs"
echo "connection form: $out"
