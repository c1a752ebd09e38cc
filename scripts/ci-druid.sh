#!/usr/bin/env bash
# CI stage "real Druid": assembles and starts a real Apache Druid 33.0.0 from Maven Central
# (scripts/druid/start; jars cached in ~/.m2 between runs), runs the REST conformance suite against it and the
# segops end-to-end run (scripts/druid/e2e) and `segops doctor` (scripts/druid/doctor), and always stops Druid
# and deletes its data, whatever happened.
# Before starting it, holds `segops validate` to Druid 33's own reading of every spec corpus file, mutation and
# rendered template (the spec oracle, scripts/druid/oracle; no cluster needed).
# Exits non-zero on any failure. When Maven Central cannot be reached the stage FAILS (exit 2) with a clear
# message: it never passes without having run against a real Druid.
#
# Runs from a cold start in its own SEGOPS_DRUID_HOME (default /tmp/segops-druid-ci), so a developer's cluster
# under the default home is left alone, but its ports must be free (scripts/druid/stop it first).
# Env: SEGOPS_DRUID_HOME, SEGOPS_DRUID_MAVEN_SETTINGS and the port overrides of scripts/druid/start.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
export SEGOPS_DRUID_HOME=${SEGOPS_DRUID_HOME:-/tmp/segops-druid-ci}
SETTINGS=${SEGOPS_DRUID_MAVEN_SETTINGS:-$REPO/scripts/druid/settings.xml}
T0=$(date +%s)

say() { printf '\nci-druid: %s\n' "$*" >&2; }
elapsed() { echo "$(($(date +%s) - T0)) s"; }
die() {
  say "FAILED: $1"
  exit "${2:-1}"
}

# --- preflight: tools and Maven Central ------------------------------------------------------------------------
for tool in java mvn curl jq node; do
  command -v "$tool" >/dev/null || die "$tool is not installed; this stage needs Java 17, Maven, curl, jq and Node"
done
java_major=$(java -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)
[[ $java_major == 17 ]] || die "Java 17 is required (found: ${java_major:-none}); set JAVA_HOME"

# The repository Maven resolves from (settings.xml mirrors everything to it). A warm ~/.m2 could hide an
# outage for a while, so check it explicitly: this stage must not quietly depend on whatever is cached.
central=$(sed -n 's:.*<url>\(.*\)</url>.*:\1:p' "$SETTINGS" | head -n 1)
central=${central:-https://repo.maven.apache.org/maven2}
probe="$central/org/apache/druid/druid-services/33.0.0/druid-services-33.0.0.pom"
code=$(curl -s -o /dev/null -w '%{http_code}' -m 30 --retry 2 -I "$probe") || true
if [[ $code != 200 ]]; then
  die "Maven Central is not reachable: HEAD $probe gave HTTP ${code:-none} (000: no connection). The real-Druid \
stage cannot assemble Druid and does not pass without it; fix the network or the mirror in $SETTINGS and rerun." 2
fi
say "Maven Central reachable at $central"

# --- spec oracle (no cluster needed) ----------------------------------------------------------------------------
# Every spec fixture, mutation and rendered template read by Druid 33's own Overlord mapper (one JVM,
# scripts/druid/oracle) and by `segops validate --druid-version 33`: any disagreement fails the stage.
say "spec oracle: segops validate against Druid 33's reading of every spec"
t=$(date +%s)
(cd "$REPO" && node --import tsx scripts/druid/oracle/agree.ts) ||
  die "segops validate and Druid 33 disagree on a spec (both verdicts above), or the oracle did not run"
say "spec oracle agreed in $(($(date +%s) - t)) s"

stop_druid() {
  local rc=$?
  say "stopping Druid (exit $rc so far, $(elapsed) in)"
  "$REPO/scripts/druid/stop" --purge || say "scripts/druid/stop failed; check for leftover java processes"
  say "stage finished in $(elapsed) with exit $rc"
  exit "$rc"
}
trap stop_druid EXIT
trap 'exit 130' INT TERM

# --- start -----------------------------------------------------------------------------------------------------
say "starting Druid under $SEGOPS_DRUID_HOME"
t=$(date +%s)
"$REPO/scripts/druid/start" || die "Druid did not start (see the log tail above)"
say "Druid healthy after $(($(date +%s) - t)) s"
# shellcheck disable=SC1091
source "$SEGOPS_DRUID_HOME/run/ports.env"
URL=http://127.0.0.1:$ROUTER_PORT

# --- conformance -----------------------------------------------------------------------------------------------
say "conformance suite against $URL"
t=$(date +%s)
mkdir -p "$REPO/.tmp"
(cd "$REPO" && SEGOPS_CONFORMANCE_URL=$URL npx vitest run --config test/conformance/vitest.config.ts \
  --reporter=default --reporter=json --outputFile.json="$REPO/.tmp/conformance.json") ||
  die "the conformance suite failed against the real Druid"
say "conformance passed in $(($(date +%s) - t)) s"

# --- end to end ------------------------------------------------------------------------------------------------
say "segops end to end against $URL"
t=$(date +%s)
SEGOPS_DRUID_URL=$URL "$REPO/scripts/druid/e2e" || die "the end-to-end run failed"
say "end to end passed in $(($(date +%s) - t)) s"

# --- doctor ----------------------------------------------------------------------------------------------------
say "segops doctor against $URL"
t=$(date +%s)
SEGOPS_DRUID_URL=$URL "$REPO/scripts/druid/doctor" || die "segops doctor failed"
say "doctor passed in $(($(date +%s) - t)) s"

# --- TLS and a Router without the management proxy -------------------------------------------------------------
say "segops over the Router's HTTPS port and via a Router without the management proxy"
t=$(date +%s)
"$REPO/scripts/druid/secured" || die "the TLS / management-proxy checks failed"
say "secured checks passed in $(($(date +%s) - t)) s"
