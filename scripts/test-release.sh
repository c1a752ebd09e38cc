#!/usr/bin/env bash
# The release artifacts, installed the way the README's "Install" section says and tested from there, with no
# checkout around them (everything happens in a temporary directory outside the repository, with the
# checkout's node_modules/.bin and npm's variables out of the environment):
#   1. scripts/release-artifacts.sh builds the npm tarball and the Python wheels and sdists;
#   2. `npm install --global ./segops-<v>.tgz` into a throwaway prefix (from the machine's npm cache where it
#      can; in the background while 3 runs): `segops --version`, `segops demo` (exit 0), the library's entry
#      points, then `segops sim` and `segops serve` (with an API token) on it: the dashboard's page and every
#      asset it names without the token, the OpenAPI document's version, /readyz (the service reaches its
#      ledger and the emulator);
#   3. each Python package: `pip install ./<wheel>` into a fresh venv holding the integration's locked
#      dependencies (uv, from its cache), segops' Python client (segops-client) first, as the documents say,
#      so pip installs each package alone and `pip check` agrees; the sdists install too; Airflow's ProvidersManager finds the provider at the version and the README's example
#      DAG (from the sdist) parses; the Dagster example (from the sdist) loads as Definitions.
# Every version it meets must be package.json's, and CHANGELOG.md must have a section for it.
# Run by scripts/test-integrations.sh (inside the README's test command); on its own: bash scripts/test-release.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started=$SECONDS
version=$(node -p 'require("./package.json").version')
step() { echo "test-release: $* ($((SECONDS - started)) s)"; }
fail() {
  echo "test-release: FAILED: $*" >&2
  exit 1
}

grep -Eq "^## \[?$version\]?( |$)" CHANGELOG.md || fail "CHANGELOG.md has no section for $version"
# The install commands the documents give, to the letter: these are the lines this test runs.
npm_cmd="npm install --global ./segops-$version.tgz"
client_cmd="pip install ./segops_client-$version-py3-none-any.whl"
airflow_cmd="pip install ./airflow_provider_segops-$version-py3-none-any.whl"
airflow_ol_cmd="pip install \"./airflow_provider_segops-$version-py3-none-any.whl[openlineage]\""
dagster_cmd="pip install ./dagster_segops-$version-py3-none-any.whl"
# The command lines (comments cut) of the first bash block under a heading, up to the next heading.
documented() {
  awk -v h="$2" '$0 == h {f = 1; next} f && /^## / {exit} f && /^```bash/ {p = 1; next} p && /^```/ {exit} p' "$1" |
    sed -E 's/[[:space:]]+#.*$//; /^$/d'
}
expect_documented() {
  local file=$1 heading=$2 want got
  shift 2
  want=$(printf '%s\n' "$@")
  got=$(documented "$file" "$heading")
  [[ "$got" == "$want" ]] || fail "$file, \"$heading\", gives other install commands than this test runs:
$got
instead of:
$want"
}
expect_documented README.md "## Install" "$npm_cmd" "$client_cmd" "$airflow_cmd" "$airflow_ol_cmd" "$dagster_cmd"
expect_documented integrations/client/README.md "## Install" "$client_cmd"
expect_documented integrations/airflow/README.md "## Installation" "$client_cmd" "$airflow_cmd" "$airflow_ol_cmd"
expect_documented integrations/dagster/README.md "## Install" "$client_cmd" "$dagster_cmd"
# `segops` on PyPI is another project: no install command may name it.
if grep -nE 'pip3? install[^`]*[ "]segops([ "`[]|$)' README.md docs/*.md integrations/*/README.md; then
  fail "a document tells users to pip install segops, an unrelated PyPI project"
fi

# Outside the repository: Node resolves modules up the directory tree, and would find the checkout's.
work=$(mktemp -d "${TMPDIR:-/tmp}/segops-release.XXXXXX")
case "$work" in "$root"/*) fail "the work directory $work is inside the checkout" ;; esac
pids=()
cleanup() {
  local status=$? pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ $status -eq 0 ]]; then
    rm -rf "$work"
  else
    for log in "$work"/*.log; do
      [[ -f "$log" ]] || continue
      echo "--- last lines of $log" >&2
      tail -n 30 "$log" >&2
    done
    echo "test-release: its files are kept in $work" >&2
  fi
  exit "$status"
}
trap cleanup EXIT

bash scripts/release-artifacts.sh "$work/artifacts" >/dev/null
step "artifacts built"
samples=$root/samples
uv=$root/integrations/airflow/.tools/bin/uv # provisioned by release-artifacts.sh through venv.sh
python=""
for candidate in python3.11 python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
    python=$(command -v "$candidate")
    break
  fi
done
[[ -n "$python" ]] || fail "no Python 3.11 (the integrations' locks are resolved for it)"

# From here on, as a user would: nothing from the checkout on PATH, none of `npm run`'s variables.
PATH=$(tr ':' '\n' <<<"$PATH" | grep -v -e "^$root" -e '/node_modules/' | paste -sd: -)
export PATH
while IFS= read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(npm_|INIT_CWD$|NODE_PATH$|NODE_OPTIONS$)')
cd "$work"

# ---- the npm package: installed in the background while the Python packages are checked ----------------------
# Where no prebuilt better-sqlite3 can be downloaded, npm compiles it: most of this test's time, on one core.
prefix=$work/prefix
(cd artifacts && npm_config_prefix=$prefix npm_config_prefer_offline=true npm_config_audit=false \
  npm_config_fund=false bash -c "$npm_cmd") >"$work/npm-install.log" 2>&1 &
npm_install=$!
pids+=("$npm_install")

# ---- the Python packages -----------------------------------------------------------------------------------
tar -xzf "artifacts/airflow_provider_segops-$version.tar.gz" -C "$work"
tar -xzf "artifacts/dagster_segops-$version.tar.gz" -C "$work"

# A fresh venv with the integration's locked dependencies, then the documented `pip install` of the wheel.
fresh_venv() {
  local venv=$1 lock=$2
  "$python" -m venv "$venv"
  UV_NO_PYTHON_DOWNLOADS=1 "$uv" pip install --quiet --python "$venv/bin/python" --require-hashes -r "$lock"
}
# Runs a documented pip command as written, in the artifacts' directory, with the venv's pip.
run_pip() {
  local venv=$1 command=$2 log=$3
  (cd "$work/artifacts" && PATH="$venv/bin:$PATH" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 bash -c "$command") \
    >>"$log" 2>&1 || fail "$command failed (see $log)"
  "$venv/bin/pip" check --disable-pip-version-check >>"$log" 2>&1 || fail "pip check after $command (see $log)"
}
# The first install of the wheel: it alone is installed (the lock met every requirement it declares).
expect_alone() {
  local dist=$1 log=$2
  grep -q "^Successfully installed $dist-$version\$" "$log" ||
    fail "pip installed more or other than $dist $version: $(grep -E '^(Successfully|Installing)' "$log")"
}

# segops' Python client: alone (its requirements are in both integrations' locks), at the version.
client_check() {
  "$1/bin/python" -c 'import sys, segops_client; sys.exit(segops_client.__version__ != sys.argv[1])' "$version" ||
    fail "segops_client.__version__ in $1 is not $version"
}

fresh_venv "$work/venv-airflow" "$root/integrations/airflow/requirements-test.lock"
run_pip "$work/venv-airflow" "$client_cmd" "$work/pip-airflow.log"
expect_alone segops-client "$work/pip-airflow.log"
client_check "$work/venv-airflow"
run_pip "$work/venv-airflow" "$airflow_cmd" "$work/pip-airflow.log"
expect_alone airflow-provider-segops "$work/pip-airflow.log"
# With the OpenLineage extra: the lock holds that provider, so nothing more comes.
run_pip "$work/venv-airflow" "$airflow_ol_cmd" "$work/pip-airflow.log"
mkdir -p "$work/airflow-home" "$work/dags"
# The README's example DAG, next to the template it reads.
awk '/^## Example DAG/{f=1} f&&/^```python/{p=1;next} p&&/^```/{exit} p' \
  "$work/airflow_provider_segops-$version/README.md" >"$work/dags/wikipedia_dags.py"
[[ -s "$work/dags/wikipedia_dags.py" ]] || fail "no example DAG in the Airflow provider's README"
cp "$samples/templates/wikipedia-daily.json" "$work/dags/"
airflow_check() {
  AIRFLOW_HOME=$work/airflow-home AIRFLOW__CORE__LOAD_EXAMPLES=False AIRFLOW__CORE__DAGS_FOLDER=$work/dags \
    "$work/venv-airflow/bin/python" - "$version" "$work/dags" "$work/venv-airflow" >>"$work/airflow-check.log" 2>&1 <<'EOF' ||
import sys
from pathlib import Path

import segops_airflow
from airflow.dag_processing.dagbag import DagBag
from airflow.providers_manager import ProvidersManager

version, dags, venv = sys.argv[1:]
where = Path(segops_airflow.__file__).resolve()
assert where.is_relative_to(Path(venv).resolve()), f"segops_airflow imported from {where}"
assert segops_airflow.__version__ == version, f"__version__ {segops_airflow.__version__}, package.json {version}"
provider = ProvidersManager().providers.get("airflow-provider-segops")
assert provider is not None, "Airflow's ProvidersManager does not list airflow-provider-segops"
assert provider.version == version, f"Airflow lists the provider at {provider.version}, package.json {version}"
bag = DagBag(dag_folder=dags)
assert not bag.import_errors, f"the example DAG does not import: {bag.import_errors}"
assert sorted(bag.dag_ids) == ["wikipedia_backfill_2025", "wikipedia_daily"], sorted(bag.dag_ids)
print("airflow check passed:", sorted(bag.dag_ids))
EOF
    fail "the installed Airflow provider (see airflow-check.log)"
}
airflow_check
step "airflow-provider-segops: wheel installed, provider listed, example DAG parsed"
# The sdist installs as well (built by hatchling from the lock, as a user's pip would build it).
"$work/venv-airflow/bin/pip" install --disable-pip-version-check --no-input --no-deps --force-reinstall \
  --no-build-isolation "./artifacts/airflow_provider_segops-$version.tar.gz" >>"$work/pip-airflow.log" 2>&1 ||
  fail "pip install of the Airflow provider's sdist (see pip-airflow.log)"
airflow_check

fresh_venv "$work/venv-dagster" "$root/integrations/dagster/requirements-test.lock"
run_pip "$work/venv-dagster" "$client_cmd" "$work/pip-dagster.log"
expect_alone segops-client "$work/pip-dagster.log"
client_check "$work/venv-dagster"
run_pip "$work/venv-dagster" "$dagster_cmd" "$work/pip-dagster.log"
expect_alone dagster-segops "$work/pip-dagster.log"
dagster_check() {
  "$work/venv-dagster/bin/python" -W ignore - "$version" "$work/dagster_segops-$version/examples/definitions.py" \
    "$work/venv-dagster" >>"$work/dagster-check.log" 2>&1 <<'EOF' ||
import runpy
import sys
from pathlib import Path

import dagster as dg
import dagster_segops

version, example, venv = sys.argv[1:]
where = Path(dagster_segops.__file__).resolve()
assert where.is_relative_to(Path(venv).resolve()), f"dagster_segops imported from {where}"
assert dagster_segops.__version__ == version, f"__version__ {dagster_segops.__version__}, package.json {version}"
defs = runpy.run_path(example)["defs"]
assert isinstance(defs, dg.Definitions), type(defs)
dg.Definitions.validate_loadable(defs)
keys = sorted(k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys())
assert keys == ["events", "events_report"], keys
print("dagster check passed:", keys)
EOF
    fail "the installed Dagster integration (see dagster-check.log)"
}
dagster_check
"$work/venv-dagster/bin/pip" install --disable-pip-version-check --no-input --no-deps --force-reinstall \
  --no-build-isolation "./artifacts/dagster_segops-$version.tar.gz" >>"$work/pip-dagster.log" 2>&1 ||
  fail "pip install of the Dagster integration's sdist (see pip-dagster.log)"
dagster_check
"$work/venv-dagster/bin/pip" install --disable-pip-version-check --no-input --no-deps --force-reinstall \
  --no-build-isolation "./artifacts/segops_client-$version.tar.gz" >>"$work/pip-dagster.log" 2>&1 ||
  fail "pip install of the Python client's sdist (see pip-dagster.log)"
client_check "$work/venv-dagster"
dagster_check
step "dagster-segops and segops-client: wheels and sdists installed, example loaded"

# ---- the npm package, installed ----------------------------------------------------------------------------
wait "$npm_install" || fail "npm install --global of the tarball failed (see npm-install.log)"
export PATH="$prefix/bin:$PATH"
[[ "$(command -v segops)" == "$prefix/bin/segops" ]] || fail "segops on PATH is $(command -v segops), not the installed one"
step "npm install --global done"
[[ "$(segops --version)" == "$version" ]] || fail "segops --version says $(segops --version), package.json $version"

# The installed package: no development dependency came with it, and its entry points load.
(cd "$prefix/lib" && node --input-type=module -e '
  const { readdirSync, readFileSync } = await import("node:fs");
  const pkg = JSON.parse(readFileSync("node_modules/segops/package.json", "utf8"));
  const installed = new Set(readdirSync("node_modules/segops/node_modules").flatMap((d) =>
    d.startsWith("@") ? readdirSync(`node_modules/segops/node_modules/${d}`).map((s) => `${d}/${s}`) : [d]));
  const dev = Object.keys(pkg.devDependencies ?? {}).filter((d) => installed.has(d));
  if (dev.length > 0) throw new Error(`development dependencies installed: ${dev.join(", ")}`);
  const root = await import("segops");
  const sim = await import("segops/sim");
  if (typeof root.runJob !== "function" || typeof root.openStore !== "function") throw new Error("segops: no runJob/openStore");
  if (typeof sim.startSim !== "function") throw new Error("segops/sim: no startSim");
') || fail "the installed package's entry points"

mkdir -p demo
(cd demo && segops demo >"$work/demo.log" 2>&1) || fail "segops demo exited $? (see demo.log)"
grep -q "demo ran as designed" "$work/demo.log" || fail "segops demo did not say it ran as designed"
step "segops demo passed"

# Waits until a process's log names the URL it listens on (generous: a loaded machine starts Node slowly).
listening_url() {
  local pid=$1 log=$2 url="" deadline=$((SECONDS + 120))
  while ((SECONDS < deadline)); do
    url=$(grep -oE 'listening on http://[0-9.]+:[0-9]+' "$log" 2>/dev/null | head -n 1 | sed 's/^listening on //' || true)
    [[ -n "$url" ]] && { echo "$url"; return 0; }
    kill -0 "$pid" 2>/dev/null || fail "process $pid exited before listening (see $log)"
    sleep 0.1
  done
  fail "no URL in $log after 120 s"
}
segops sim --port 0 >"$work/sim.log" 2>&1 &
pids+=($!)
sim_url=$(listening_url "${pids[-1]}" "$work/sim.log")
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
segops serve --port 0 --druid "$sim_url" --ledger "sqlite:$work/ledger.db" --api-token-file "$work/token" \
  --log-level warn >"$work/serve.log" 2>&1 &
pids+=($!)
serve_url=$(listening_url "${pids[-1]}" "$work/serve.log")

# GETs a path without the token; prints "<status> <content type>" and keeps the body in $work/body.
get() { curl -sS -o "$work/body" -w '%{http_code} %{content_type}' "$serve_url$1"; }
answer=$(get /)
[[ "$answer" == "200 text/html"* ]] || fail "GET / answered $answer, not the dashboard's page"
grep -q '<div id="app">' "$work/body" || fail "GET / is not the dashboard's page: $(head -c 300 "$work/body")"
assets=$(grep -oE '(src|href)="\./assets/[^"]+"' "$work/body" | sed -E 's/^[a-z]+="\.//; s/"$//')
[[ $(wc -l <<<"$assets") -ge 2 ]] || fail "the dashboard's page names fewer than 2 assets: $assets"
while IFS= read -r asset; do
  answer=$(get "$asset")
  case "$asset" in
    *.js) [[ "$answer" == "200 text/javascript"* ]] || fail "GET $asset answered $answer" ;;
    *.css) [[ "$answer" == "200 text/css"* ]] || fail "GET $asset answered $answer" ;;
    *) [[ "$answer" == "200 "* ]] || fail "GET $asset answered $answer" ;;
  esac
  [[ -s "$work/body" ]] || fail "GET $asset answered an empty body"
done <<<"$assets"
answer=$(get /openapi.json)
[[ "$answer" == "200 "* ]] || fail "GET /openapi.json answered $answer"
served=$(node -p 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).info.version' "$work/body")
[[ "$served" == "$version" ]] || fail "the service says version $served, package.json $version"
answer=$(get /readyz)
[[ "$answer" == "200 "* ]] || fail "GET /readyz answered $answer: $(cat "$work/body")"
step "segops sim and segops serve answered (dashboard, $(wc -l <<<"$assets") assets, version, ready)"
step "all passed"
