#!/usr/bin/env bash
# Creates a venv from a lock in which every package is pinned with hashes, then installs local packages into it
# editable. uv does the install (pinned in the lock itself; bootstrapped with pip from the lock's own pin and
# hashes). Idempotent: when <venv>/.stamp holds the hash of the lock, the --stamp files and the interpreter's
# version, nothing is done. The integrations' own venv.sh scripts call it with their lock and packages.
#
#   uv-venv.sh VENV LOCK [--stamp FILE]... [--editable DIR]...
#   PYTHON=python3.12 uv-venv.sh …   # another interpreter (default python3.11)
set -euo pipefail
[ $# -ge 2 ] || { echo "uv-venv.sh: usage: uv-venv.sh VENV LOCK [--stamp FILE]... [--editable DIR]..." >&2; exit 2; }
venv=$1 lock=$2
shift 2
stamp_files=() editable=()
while [ $# -gt 0 ]; do
  case "$1" in
    --stamp) stamp_files+=("$2"); shift 2 ;;
    --editable) editable+=(-e "$2"); shift 2 ;;
    *) echo "uv-venv.sh: unknown argument '$1' (expected --stamp FILE or --editable DIR)" >&2; exit 2 ;;
  esac
done
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null || { echo "venv.sh: $python not found (set PYTHON)" >&2; exit 2; }

stamp="$(
  {
    cat "$lock" ${stamp_files[@]+"${stamp_files[@]}"}
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
if [ ${#editable[@]} -gt 0 ]; then
  "$venv/bin/uv" pip install --quiet --no-deps --no-build-isolation "${editable[@]}"
fi
printf '%s\n' "$stamp" >"$venv/.stamp"
echo "venv.sh: $venv ready in $((SECONDS - started)) s" >&2
