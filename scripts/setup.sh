#!/usr/bin/env bash
# Installs the run-time tools the tests need. Idempotent; safe to run again.
# - As root on Debian/apt (CI): the Mesa software-rendering packages that wgpu needs at test
#   time for the editor's snapshot tests (lavapipe Vulkan, with EGL/GL llvmpipe as fallback).
#   Only missing packages are installed; nothing is installed when all are present.
# - Node's gltf-validator (the Khronos glTF validator) into tools/node_modules, used by the
#   glTF export test. Skipped if already present.
set -euo pipefail
cd "$(dirname "$0")/.."

MESA_PACKAGES=(mesa-vulkan-drivers libvulkan1 libegl1 libegl-mesa0 libgl1-mesa-dri libglx-mesa0)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then
  missing=()
  for p in "${MESA_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    # Output is shown only when a command fails.
    if ! log=$(apt-get update -qq 2>&1 && apt-get install -y -qq --no-install-recommends "${missing[@]}" 2>&1); then
      echo "$log" >&2
      echo "setup: apt-get failed" >&2
      exit 1
    fi
  fi
else
  for p in "${MESA_PACKAGES[@]}"; do
    if command -v dpkg >/dev/null 2>&1 && ! dpkg -s "$p" >/dev/null 2>&1; then
      echo "setup: $p is missing (not root or no apt): the editor's snapshot tests may fail" >&2
    fi
  done
fi

if [ ! -x tools/node_modules/.bin/gltf-validator ] && [ ! -f tools/node_modules/gltf-validator/package.json ]; then
  if command -v npm >/dev/null 2>&1; then
    (cd tools && npm ci --no-audit --no-fund --loglevel=error)
  else
    echo "setup: npm not found; the glTF validator test will fail" >&2
  fi
fi
