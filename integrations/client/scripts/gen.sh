#!/usr/bin/env bash
# Regenerates the client's generated files (src/segops_client/models.py and _operations.py) from the
# service's OpenAPI document: scripts/gen-python-client.ts at the repository root, with this package's venv
# (datamodel-code-generator and ruff, pinned in requirements-dev.lock). Run after changing an API route or
# schema; commit the files. `--check` only says whether they are current (exit 1 when stale).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
bash "$here/scripts/venv.sh"
cd "$root"
exec node --import tsx scripts/gen-python-client.ts "$@"
