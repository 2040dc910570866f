#!/usr/bin/env bash
# Installs the Python peers of the benchmark suite (Snakemake, Dask) into a virtual environment:
# .venv-bench at the repository root (gitignored), or $CAIRN_BENCH_VENV. Idempotent: does nothing
# when the pinned versions are already there. Exits non-zero with one line saying why when the
# venv cannot be made (no python3/venv, no network): the suite then reports the peer rows as
# skipped with that line, and the Cairn rows still run.
# Pinned so that rows from different days compare the same code; change the pins here only.
set -euo pipefail
SNAKEMAKE_VERSION=9.27.1
DASK_VERSION=2026.8.0
cd "$(dirname "$0")/../../.."
venv="${CAIRN_BENCH_VENV:-$PWD/.venv-bench}"
want="snakemake $SNAKEMAKE_VERSION, dask $DASK_VERSION"
have() {
  "$venv/bin/python" - <<'PY' 2>/dev/null
import importlib.metadata as m
print(f"snakemake {m.version('snakemake')}, dask {m.version('dask')}")
PY
}
if [ -x "$venv/bin/python" ] && [ "$(have)" = "$want" ]; then
  echo "bench python peers: $want already in $venv"
  exit 0
fi
# The first Python >= 3.11 (Snakemake 9's floor) that can make a venv.
py=""
for c in python3.11 python3.12 python3.13 python3; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then py="$c"; break; fi
done
if [ -z "$py" ]; then
  echo "bench python peers: no Python >= 3.11 with the venv module (Snakemake $SNAKEMAKE_VERSION needs it); install python3-venv" >&2
  exit 1
fi
rm -rf "$venv"
"$py" -m venv "$venv"
if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "snakemake==$SNAKEMAKE_VERSION" "dask==$DASK_VERSION"; then
  echo "bench python peers: pip could not install $want into $venv (offline? see pip's output above)" >&2
  exit 1
fi
echo "bench python peers: installed $want into $venv ($("$venv/bin/python" --version))"
