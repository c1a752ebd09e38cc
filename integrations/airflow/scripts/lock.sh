#!/usr/bin/env bash
# Re-resolves the pinned, hashed requirements from PyPI (Airflow's constraints file lives on GitHub, which
# this project's machines cannot reach, so the resolution is uv's against PyPI for CPython 3.11 on Linux;
# the pins are then what the tests ran with). Run after changing requirements-*.in; commit the .lock files.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"
bash scripts/venv.sh --uv-only
uv=$here/.tools/bin/uv
common=(--generate-hashes --python-version 3.11 --python-platform x86_64-unknown-linux-gnu --no-header --quiet)
"$uv" pip compile "${common[@]}" requirements-uv.in -o requirements-uv.lock
"$uv" pip compile "${common[@]}" requirements-test.in -o requirements-test.lock
"$uv" pip compile "${common[@]}" requirements-test-airflow2.in -o requirements-test-airflow2.lock
for lock in requirements-test.lock requirements-test-airflow2.lock; do
  echo "locked: $(grep -c '==' "$lock") packages in $lock"
done
