#!/usr/bin/env bash
# Creates integrations/airflow/.venv from requirements-test.lock (pinned, hashed) plus this package and
# segops' Python client (../client, a path dependency) in editable mode, with uv (itself pinned in
# requirements-uv.lock, installed into .tools/ with pip). Idempotent: when the stamp (a hash of the locks,
# both pyproject.toml and the Python version) is unchanged it returns at once. Nothing is fetched from anywhere but PyPI. Prints the venv's python on stdout.
#   --uv-only   only make sure .tools/bin/uv exists (scripts/lock.sh uses it)
#   --airflow2  the oldest supported Airflow instead: .venv-airflow2 from requirements-test-airflow2.lock
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
lock=requirements-test.lock
venv=$here/.venv
if [[ "${1:-}" == "--airflow2" ]]; then
  lock=requirements-test-airflow2.lock
  venv=$here/.venv-airflow2
fi

python=${SEGOPS_AIRFLOW_PYTHON:-}
if [[ -z "$python" ]]; then
  for candidate in python3.11 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      python=$(command -v "$candidate")
      break
    fi
  done
fi
[[ -n "$python" ]] || { echo "venv.sh: no Python 3.11 found (set SEGOPS_AIRFLOW_PYTHON)" >&2; exit 2; }

uv=$here/.tools/bin/uv
uv_stamp=$(sha256sum requirements-uv.lock | cut -c1-16)
if [[ ! -x "$uv" || "$(cat .tools/.stamp 2>/dev/null)" != "$uv_stamp" ]]; then
  rm -rf .tools
  "$python" -m venv .tools
  .tools/bin/pip install --quiet --disable-pip-version-check --require-hashes -r requirements-uv.lock
  echo "$uv_stamp" > .tools/.stamp
fi
[[ "${1:-}" == "--uv-only" ]] && exit 0

version=$("$python" -c 'import sys; print(sys.version)')
client=$(cd ../client && pwd)
stamp=$(cat "$lock" pyproject.toml "$client/pyproject.toml" <(echo "$version") | sha256sum | cut -c1-16)
if [[ -x "$venv/bin/python" && "$(cat "$venv/.stamp" 2>/dev/null)" == "$stamp" ]]; then
  echo "$venv/bin/python"
  exit 0
fi
export UV_NO_PYTHON_DOWNLOADS=1  # only the machine's Python; uv hardlinks from its cache when it can
rm -f "$venv/.stamp"
[[ -x "$venv/bin/python" ]] || "$uv" venv --quiet --python "$python" "$venv" >&2
"$uv" pip sync --quiet --python "$venv/bin/python" --require-hashes "$lock" >&2
"$uv" pip install --quiet --python "$venv/bin/python" --no-deps --no-build-isolation -e "$client" -e . >&2
echo "$stamp" > "$venv/.stamp"
echo "$venv/bin/python"
