#!/usr/bin/env bash
# Installs Ray (the pinned `ray[default]`, with its dashboard and Jobs API) into a virtual
# environment for the @cairn/remote-ray tests: .venv-ray at the repository root (gitignored), or
# $CAIRN_RAY_VENV. Idempotent: does nothing when the pinned version is already there. pip keeps
# its wheel cache (~/.cache/pip), so a second fresh clone installs from it. Starts nothing:
# tools/testenv/ray.ts starts and stops its own head and worker nodes.
# The version is pinned (and why) in packages/remote-ray/README.md; change both together.
set -euo pipefail
RAY_VERSION=2.60.0
cd "$(dirname "$0")/../.."
venv="${CAIRN_RAY_VENV:-$PWD/.venv-ray}"
if [ -x "$venv/bin/ray" ] && [ "$("$venv/bin/python" -c 'import ray; print(ray.__version__)' 2>/dev/null)" = "$RAY_VERSION" ]; then
  echo "install-ray: ray $RAY_VERSION already in $venv"
  exit 0
fi
py=""
for c in python3.11 python3.12 python3.10 python3; do
  if command -v "$c" >/dev/null 2>&1; then py="$c"; break; fi
done
if [ -z "$py" ]; then
  echo "install-ray: no python3 found; install Python 3.10-3.12 (with venv) or the Ray tests skip (fail in CI)" >&2
  exit 1
fi
if ! "$py" -m venv --help >/dev/null 2>&1; then
  echo "install-ray: $py has no venv module; install python3-venv" >&2
  exit 1
fi
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "ray[default]==$RAY_VERSION"
echo "install-ray: installed ray $RAY_VERSION into $venv ($("$venv/bin/python" --version))"
