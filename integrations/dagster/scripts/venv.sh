#!/usr/bin/env bash
# Creates integrations/dagster/.venv from requirements-test.lock (every package pinned, with hashes) and
# installs this package and segops' Python client (../client, a path dependency) into it, editable; a no-op when
# the lock, both pyprojects and the interpreter are unchanged (integrations/scripts/uv-venv.sh).
#
#   PYTHON=python3.12 integrations/dagster/scripts/venv.sh   # another interpreter (default python3.11)
#   integrations/dagster/scripts/venv.sh floor                # .venv-floor from requirements-test-floor.lock
#                                                             # (the oldest Dagster supported)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
case "${1:-}" in
  "") venv="$here/.venv" lock="$here/requirements-test.lock" ;;
  floor) venv="$here/.venv-floor" lock="$here/requirements-test-floor.lock" ;;
  *) echo "venv.sh: unknown environment '$1' (expected nothing, for the newest Dagster, or 'floor')" >&2; exit 2 ;;
esac
client="$(cd "$here/../client" && pwd)"
exec bash "$here/../scripts/uv-venv.sh" "$venv" "$lock" \
  --stamp "$here/pyproject.toml" --stamp "$client/pyproject.toml" --editable "$client" --editable "$here"
