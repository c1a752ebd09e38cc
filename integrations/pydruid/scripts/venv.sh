#!/usr/bin/env bash
# Creates integrations/pydruid/.venv from requirements.lock (every package pinned, with hashes). Idempotent:
# when .venv/.stamp holds the hash of the lock and the interpreter's version, nothing is done. uv does the
# install (pinned in the lock itself; bootstrapped with pip from the lock's own pin and hashes).
#
#   PYTHON=python3.12 integrations/pydruid/scripts/venv.sh   # another interpreter (default python3.11)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
venv="$here/.venv"
lock="$here/requirements.lock"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null || { echo "venv.sh: $python not found (set PYTHON)" >&2; exit 2; }

stamp="$(
  {
    cat "$lock"
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
export UV_PYTHON="$venv/bin/python" UV_NO_PYTHON_DOWNLOADS=1
"$venv/bin/uv" pip sync --quiet --require-hashes "$lock"
printf '%s\n' "$stamp" >"$venv/.stamp"
echo "venv.sh: $venv ready in $((SECONDS - started)) s" >&2
