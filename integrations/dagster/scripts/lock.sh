#!/usr/bin/env bash
# Recompiles requirements-test.lock from requirements-test.in (every package pinned, with hashes).
# Needs uv on PATH, or run after scripts/venv.sh: it falls back to the venv's own uv.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
uv="$(command -v uv || echo "$here/.venv/bin/uv")"
cd "$here"
"$uv" pip compile --quiet --python-version 3.11 --generate-hashes --upgrade \
  --custom-compile-command "integrations/dagster/scripts/lock.sh" \
  requirements-test.in -o requirements-test.lock
