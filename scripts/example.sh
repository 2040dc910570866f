#!/usr/bin/env bash
# All set-up, then the example pipeline end to end (examples/pipeline.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
export NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund
fi
npx nx run-many -t build --output-style=static
node --import tsx examples/run.ts "$@"
