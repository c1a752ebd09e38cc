#!/usr/bin/env bash
# Creates .venv-fuzz (gitignored) with the API fuzzer (schemathesis) from the committed, fully pinned and
# hashed lock test/fuzz/requirements.txt (pip's hash-checking mode: nothing unpinned or unhashed installs).
# Idempotent and fast: a stamp in the venv holds the lock's hash and the interpreter's version; when both
# match, nothing is done. Regenerate the lock as test/fuzz/requirements.in says.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv-fuzz
lock=test/fuzz/requirements.txt
stamp="$venv/.segops-lock"

# The lock is resolved for Python 3.11 (the machines' python3; Debian 12's too).
python=""
for candidate in python3.11 python3; do
  if command -v "$candidate" >/dev/null 2>&1 &&
    [ "$("$candidate" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = 3.11 ]; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "python-env: Python 3.11 is required (the lock $lock is resolved for it)" >&2
  exit 1
fi

want="$(sha256sum "$lock" | cut -d' ' -f1) $("$python" -c 'import sys; print(sys.version.split()[0])')"
if [ -x "$venv/bin/schemathesis" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

echo "python-env: installing $lock into $venv"
rm -rf "$venv"
if ! "$python" -m venv "$venv" 2>/dev/null; then
  # Debian splits venv (ensurepip) into its own package.
  rm -rf "$venv"
  as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends python3-venv
  "$python" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
  --require-hashes --no-deps --only-binary=:all: -r "$lock"
"$venv/bin/schemathesis" --version >/dev/null
echo "$want" >"$stamp"
