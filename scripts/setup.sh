#!/usr/bin/env bash
# Installs the run-time tools the tests need. Idempotent; safe to run again.
# - Node's gltf-validator (the Khronos glTF validator) into tools/node_modules, used by the
#   glTF export test. Skipped if already present.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x tools/node_modules/.bin/gltf-validator ] && [ ! -f tools/node_modules/gltf-validator/package.json ]; then
  if command -v npm >/dev/null 2>&1; then
    (cd tools && npm ci --no-audit --no-fund --loglevel=error)
  else
    echo "setup: npm not found; the glTF validator test will fail" >&2
  fi
fi
