#!/usr/bin/env bash
# The one test command: provisions what the suites need, then lint, typecheck, every fast suite (emulator,
# SQLite, a throwaway PostgreSQL), the Airflow and Dagster integrations (real Airflow 2.10 and 3.3, Dagster 1.10
# and 1.13, in virtualenvs from their lock files) and the release files installed outside the checkout, then the real-Druid
# stage (Druid 33 from Maven Central: the spec oracle, conformance, e2e, doctor, TLS and the Router checks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/provision.sh
npx biome check .
npx tsc -p tsconfig.json --noEmit
mkdir -p .tmp
rm -f .tmp/vitest.json .tmp/conformance.json .tmp/integration-*
set +e
npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest.json "$@"
fast=$?
npm run --silent test:integrations
integrations=$?
bash scripts/ci-druid.sh
druid=$?
set -e
# A CI log may keep only its tail, which the real-Druid stage fills: replay what failed earlier here, last.
if [ "$fast" -ne 0 ]; then
  echo; echo "test: the fast suites failed:"
  node -e '
    try {
      const r = JSON.parse(require("fs").readFileSync(".tmp/vitest.json", "utf8"));
      for (const f of r.testResults)
        for (const t of f.assertionResults)
          if (t.status === "failed")
            console.log(`  ${f.name.replace(process.cwd() + "/", "")} > ${t.fullName}\n    ${(t.failureMessages[0] ?? "").split("\n")[0]}`);
    } catch { console.log("  (no report: the run crashed; see its output above)"); }'
fi
if [ "$integrations" -ne 0 ]; then
  for failed in .tmp/integration-*.failed; do
    [ -f "$failed" ] || continue
    echo; echo "test: $(basename "$failed" .failed) failed; the last 60 lines of its output:"
    tail -n 60 "${failed%.failed}.log"
  done
fi
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
  // The Airflow and Dagster suites (pytest) and the test of the release files count as one case: all green or not.
  if (integrations === 0) passed += 1; else failed += 1;
  if (fast !== 0 && failed === 0) failed += 1; // the fast suites failed without a report (e.g. a crash)
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$fast" "$druid" "$integrations"
[ "$fast" -eq 0 ] && [ "$druid" -eq 0 ] && [ "$integrations" -eq 0 ]
