#!/usr/bin/env bash
# The one test command: provisions what the suites need, then lint, typecheck, every fast suite (emulator,
# SQLite, a throwaway PostgreSQL), the Airflow and Dagster integrations (real Airflow 3.3 and Dagster 1.13 in
# virtualenvs from their lock files), then the real-Druid stage (Druid 33 from Maven Central: conformance + e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/provision.sh
npx biome check .
npx tsc -p tsconfig.json --noEmit
mkdir -p .tmp
rm -f .tmp/vitest.json .tmp/conformance.json
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json "$@"
fast=$?
npm run --silent test:integrations
integrations=$?
bash scripts/ci-druid.sh
druid=$?
set -e
# One closing line for the whole run: the fast suites, the conformance cases on real Druid, and the
# end-to-end run on real Druid as one case.
node -e '
  const fs = require("fs");
  const read = (f) => { try { return JSON.parse(fs.readFileSync(f, "utf8")); } catch { return null; } };
  const runs = [read(".tmp/vitest.json"), read(".tmp/conformance.json")].filter(Boolean);
  let passed = 0, failed = 0, skipped = 0;
  for (const r of runs) { passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests; }
  const [fast, druid, integrations] = process.argv.slice(1).map(Number);
  if (druid === 0) passed += 1; else failed += 1;
  // The Airflow and Dagster suites (pytest) count as one case: both green or not.
  if (integrations === 0) passed += 1; else failed += 1;
  if (fast !== 0 && failed === 0) failed += 1; // the fast suites failed without a report (e.g. a crash)
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$fast" "$druid" "$integrations"
[ "$fast" -eq 0 ] && [ "$druid" -eq 0 ] && [ "$integrations" -eq 0 ]
