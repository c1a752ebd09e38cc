#!/usr/bin/env bash
# Recompiles requirements-test.lock and requirements-test-floor.lock from their .in files (every package
# pinned, with hashes).
# Needs uv on PATH, or run after scripts/venv.sh: it falls back to the venv's own uv.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
uv="$(command -v uv || echo "$here/.venv/bin/uv")"
cd "$here"
# The newest Dagster supported, and the oldest (the floor): the suite runs on both (scripts/test.sh).
for name in requirements-test requirements-test-floor; do
  "$uv" pip compile --quiet --python-version 3.11 --generate-hashes --upgrade \
    --custom-compile-command "integrations/dagster/scripts/lock.sh" \
    "$name.in" -o "$name.lock"
done
