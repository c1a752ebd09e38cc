#!/usr/bin/env bash
# The scheduler integrations' tests (`npm run test:integrations`): the Airflow provider and the Dagster
# package, each against `segops serve` on the emulator, each provisioning its own virtualenv from its
# committed lock file. Both run even when the first fails; exits non-zero if either did.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
for name in airflow dagster; do
  start=$(date +%s)
  echo "test-integrations: $name"
  # Teed to a log of its own: scripts/test.sh replays a failed suite's last lines at the very end of the run,
  # where a CI log cut to its tail still shows them.
  mkdir -p .tmp
  rm -f ".tmp/integration-$name.failed"
  if bash "integrations/$name/scripts/test.sh" 2>&1 | tee ".tmp/integration-$name.log"; then
    echo "test-integrations: $name passed in $(($(date +%s) - start)) s"
  else
    echo "test-integrations: $name FAILED after $(($(date +%s) - start)) s" >&2
    touch ".tmp/integration-$name.failed"
    status=1
  fi
done
exit "$status"
