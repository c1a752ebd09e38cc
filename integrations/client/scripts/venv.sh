#!/usr/bin/env bash
# Creates integrations/client/.venv from requirements-dev.lock (every package pinned, with hashes) and installs
# this package into it, editable; a no-op when the lock, the pyproject and the interpreter are unchanged
# (integrations/scripts/uv-venv.sh).
#
#   PYTHON=python3.12 integrations/client/scripts/venv.sh   # another interpreter (default python3.11)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
exec bash "$here/../scripts/uv-venv.sh" "$here/.venv" "$here/requirements-dev.lock" \
  --stamp "$here/pyproject.toml" --editable "$here"
