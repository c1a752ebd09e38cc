#!/usr/bin/env bash
# Builds segops' release artifacts into one directory (default .tmp/release/), each named with package.json's
# version <v>:
#   segops-<v>.tgz                                  `npm pack`: dist/ rebuilt from a clean slate (tsc and the
#                                                   dashboard) by the package's prepare script
#   segops_client-<v>-py3-none-any.whl              the Python client both integrations require: wheel and
#   segops_client-<v>.tar.gz                        sdist
#   airflow_provider_segops-<v>-py3-none-any.whl    the Airflow provider: wheel and sdist
#   airflow_provider_segops-<v>.tar.gz
#   dagster_segops-<v>-py3-none-any.whl             the Dagster integration: wheel and sdist
#   dagster_segops-<v>.tar.gz
# The Python packages are built by their own backend, hatchling, at the version pinned in each integration's
# lock (the venvs integrations/*/scripts/venv.sh provision), without build isolation: sdist first, then the
# wheel from the sdist (uv build), so a file the sdist lacks fails the build here rather than for a user.
# Needs `npm ci` done and Python 3.11. Prints the artifacts' paths.
#   bash scripts/release-artifacts.sh [OUT_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/.tmp/release}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
version=$(node -p 'require("./package.json").version')

# Only this version's files: an old artifact left beside them would be mistaken for a current one.
rm -f "$out"/segops-*.tgz "$out"/segops_client-* "$out"/airflow_provider_segops-* "$out"/dagster_segops-*

# A module whose source was removed must not ship: dist/ is built anew (npm pack runs prepare).
rm -rf dist
npm pack --silent --pack-destination "$out" >/dev/null

airflow_python=$(bash integrations/airflow/scripts/venv.sh)
bash integrations/dagster/scripts/venv.sh
bash integrations/client/scripts/venv.sh
uv=$root/integrations/airflow/.tools/bin/uv # pinned in integrations/airflow/requirements-uv.lock
export UV_NO_PYTHON_DOWNLOADS=1
"$uv" build --quiet --offline --no-build-isolation --python integrations/client/.venv/bin/python \
  --out-dir "$out" integrations/client
"$uv" build --quiet --offline --no-build-isolation --python "$airflow_python" --out-dir "$out" integrations/airflow
"$uv" build --quiet --offline --no-build-isolation --python integrations/dagster/.venv/bin/python \
  --out-dir "$out" integrations/dagster

status=0
for file in "segops-$version.tgz" "segops_client-$version-py3-none-any.whl" "segops_client-$version.tar.gz" \
  "airflow_provider_segops-$version-py3-none-any.whl" "airflow_provider_segops-$version.tar.gz" \
  "dagster_segops-$version-py3-none-any.whl" "dagster_segops-$version.tar.gz"; do
  if [[ -f "$out/$file" ]]; then echo "$out/$file"; else echo "release-artifacts: $file was not built" >&2; status=1; fi
done
exit "$status"
