#!/usr/bin/env bash
# The fast suites (the vitest stage of scripts/test.sh) several times in a row on a loaded machine: two
# processes burning a core each run beside them the whole time, so a test that depends on how fast the
# machine is fails here instead of now and then in CI. Prints each run's result, duration and load
# average, and exits non-zero when any run failed.
#
#   bash scripts/stress-suite.sh                 # 3 runs
#   bash scripts/stress-suite.sh 5               # 5 runs
#   bash scripts/stress-suite.sh 2 test/serve    # 2 runs of what vitest selects with these arguments
#
# STRESS_HOGS sets the number of CPU-burning processes (default 2). Each run's output and JSON report are
# kept in .tmp/stress/.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=${1:-3}
[ $# -gt 0 ] && shift
hogs=${STRESS_HOGS:-2}
case "$runs" in '' | *[!0-9]*) echo "stress-suite: the number of runs must be a number, not '$runs'" >&2; exit 2 ;; esac

bash scripts/provision.sh
out=.tmp/stress
rm -rf "$out"
mkdir -p "$out"

pids=()
cleanup() {
  # Only the processes started here, by their ids.
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for _ in $(seq "$hogs"); do
  node -e 'for (;;) {}' &
  pids+=("$!")
done
# The 1-minute load average every 5 s, to give each run its range.
(while :; do
  echo "$(date +%s) $(cut -d' ' -f1 /proc/loadavg)" >>"$out/load"
  sleep 5
done) &
pids+=("$!")

load_between() { # start end: "min–max" of the samples taken between the two times
  awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b { if (n++ == 0 || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
    END { if (n) printf "%.1f–%.1f", lo, hi; else printf "?" }' "$out/load"
}

echo "stress-suite: $runs run(s) of the fast suites beside $hogs CPU-burning processes ($(nproc) cores)"
summary=()
failed_runs=0
for i in $(seq "$runs"); do
  start=$(date +%s)
  echo "stress-suite: run $i started, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  set +e
  npx vitest run --reporter=default --reporter=json --outputFile.json="$out/run-$i.json" "$@" >"$out/run-$i.log" 2>&1
  rc=$?
  set -e
  end=$(date +%s)
  counts=$(node -e '
    try {
      const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
      console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
      for (const f of r.testResults)
        for (const t of f.assertionResults)
          if (t.status === "failed")
            console.log(`    ${f.name.replace(process.cwd() + "/", "")} > ${t.fullName}\n      ${(t.failureMessages[0] ?? "").split("\n")[0].slice(0, 300)}`);
    } catch { console.log("no report (the run crashed; see its log)"); }' "$out/run-$i.json")
  verdict=passed
  if [ "$rc" -ne 0 ]; then verdict=FAILED; failed_runs=$((failed_runs + 1)); fi
  line="run $i: $verdict in $(((end - start) / 60)) min $(((end - start) % 60)) s, load average $(load_between "$start" "$end"): $counts"
  echo "stress-suite: $line"
  [ "$rc" -ne 0 ] && echo "stress-suite: run $i's output: $out/run-$i.log"
  summary+=("$line")
done

echo
echo "stress-suite: summary ($hogs CPU-burning processes, $(nproc) cores)"
for line in "${summary[@]}"; do echo "  $line"; done
if [ "$failed_runs" -ne 0 ]; then
  echo "stress-suite: $failed_runs of $runs run(s) failed"
  exit 1
fi
echo "stress-suite: all $runs run(s) passed"
