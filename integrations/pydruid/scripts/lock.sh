#!/usr/bin/env bash
# Recompiles requirements.lock from requirements.in (every package pinned, with hashes), for CPython 3.11 on
# Linux as the integrations' locks are. Needs uv on PATH, or run after scripts/venv.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
uv="$(command -v uv || echo "$here/.venv/bin/uv")"
cd "$here"
"$uv" pip compile --quiet --python-version 3.11 --python-platform x86_64-unknown-linux-gnu --generate-hashes \
  --no-header requirements.in -o requirements.lock
