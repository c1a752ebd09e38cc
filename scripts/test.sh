#!/usr/bin/env bash
# The one test command: provisions what the suites need, then lint, typecheck and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/provision.sh
npx biome check .
npx tsc -p tsconfig.json --noEmit
mkdir -p .tmp
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json "$@"
status=$?
set -e
node -e '
  const r = JSON.parse(require("fs").readFileSync(".tmp/vitest.json", "utf8"));
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
' || true
exit $status
