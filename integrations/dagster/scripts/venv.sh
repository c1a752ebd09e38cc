#!/usr/bin/env bash
# Creates integrations/dagster/.venv from requirements-test.lock (every package pinned, with hashes) and
# installs this package and segops' Python client (../client, a path dependency) into it, editable.
# Idempotent: when .venv/.stamp holds the hash of the lock, both pyprojects and the interpreter's version,
# nothing is done. uv does the install (pinned in the lock
# itself; bootstrapped with pip from the lock's own pin and hashes).
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
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null || { echo "venv.sh: $python not found (set PYTHON)" >&2; exit 2; }

stamp="$(
  {
    cat "$lock" "$here/pyproject.toml" "$client/pyproject.toml"
    "$python" -c 'import sys; print(sys.version)'
  } | sha256sum | cut -d' ' -f1
)"
if [ -f "$venv/.stamp" ] && [ "$(cat "$venv/.stamp")" = "$stamp" ] && [ -x "$venv/bin/python" ]; then
  exit 0
fi

started=$SECONDS
rm -rf "$venv"
"$python" -m venv "$venv"
# uv's pin and hashes, as the lock states them: the block from "uv==" to the next requirement.
uv_req="$(awk '/^uv==/{p=1} p&&/^[a-z]/&&!/^uv==/{exit} p' "$lock" | grep -v '^ *#')"
[ -n "$uv_req" ] || { echo "venv.sh: no uv pin in $lock" >&2; exit 2; }
printf '%s\n' "$uv_req" >"$venv/uv-requirement.txt"
"$venv/bin/python" -m pip install --quiet --no-deps --require-hashes -r "$venv/uv-requirement.txt"
export UV_PYTHON="$venv/bin/python"
"$venv/bin/uv" pip sync --quiet --require-hashes "$lock"
"$venv/bin/uv" pip install --quiet --no-deps --no-build-isolation -e "$client" -e "$here"
printf '%s\n' "$stamp" >"$venv/.stamp"
echo "venv.sh: $venv ready in $((SECONDS - started)) s" >&2
