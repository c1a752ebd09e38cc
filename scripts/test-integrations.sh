#!/usr/bin/env bash
# The scheduler integrations' tests (`npm run test:integrations`): segops' Python client they are built on
# (its generated files current, its transport's tests), Python's Druid clients against the emulator itself
# (integrations/pydruid: pydruid's native queries, SQLAlchemy over its dialect), then the Airflow provider and the Dagster
# package, each against `segops serve` on the emulator, each provisioning its own virtualenv from its
# committed lock file; then the release files (scripts/test-release.sh: the npm tarball, wheels and sdists
# built, installed outside the checkout and run; its Python part reuses what those venvs' locks cached).
# Each runs even when one before failed; exits non-zero if any did.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
for name in client pydruid airflow dagster release; do
  start=$(date +%s)
  echo "test-integrations: $name"
  # Teed to a log of its own: scripts/test.sh replays a failed suite's last lines at the very end of the run,
  # where a CI log cut to its tail still shows them.
  mkdir -p .tmp
  rm -f ".tmp/integration-$name.failed"
  script=integrations/$name/scripts/test.sh
  [[ $name == release ]] && script=scripts/test-release.sh
  if bash "$script" 2>&1 | tee ".tmp/integration-$name.log"; then
    echo "test-integrations: $name passed in $(($(date +%s) - start)) s"
  else
    echo "test-integrations: $name FAILED after $(($(date +%s) - start)) s" >&2
    touch ".tmp/integration-$name.failed"
    status=1
  fi
done
exit "$status"
