#!/usr/bin/env bash
# Creates integrations/pydruid/.venv from requirements.lock (every package pinned, with hashes); a no-op when
# current (integrations/scripts/uv-venv.sh).
#
#   PYTHON=python3.12 integrations/pydruid/scripts/venv.sh   # another interpreter (default python3.11)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
exec bash "$here/../scripts/uv-venv.sh" "$here/.venv" "$here/requirements.lock"
