#!/usr/bin/env bash
# Benchmarks the Python package against pysheds, richdem (the richdem-fork wheel) and
# xarray-spatial (crates/terrasynth-py/bench/bench.py), in target/py-bench-venv with a release
# build of the package. Usage: scripts/python-bench.sh [side] [runs]   (default 2048 3)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=target/py-bench-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip -q --disable-pip-version-check install numpy pysheds richdem-fork xarray-spatial matplotlib
fi
"$VENV/bin/python" -m pip -q --disable-pip-version-check install --force-reinstall --no-deps ./crates/terrasynth-py
"$VENV/bin/python" crates/terrasynth-py/bench/bench.py "${1:-2048}" "${2:-3}"
