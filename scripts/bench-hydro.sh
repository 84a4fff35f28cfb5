#!/usr/bin/env bash
# Hydrology benchmark (issue 4 §5): fill + D8 + accumulation on a 4096² DEM, terrasynth vs
# pysheds, median of 3 runs each, and a check that both give the same (epsilon-free) filled
# surface; then one stream-power step at the same side (Braun-Willett, shared routing).
# Usage: scripts/bench-hydro.sh [side] [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
SIDE=${1:-4096}
RUNS=${2:-3}
OUT="$PWD/target/bench-hydro"  # absolute: cargo bench runs in the crate directory
mkdir -p "$OUT"
VENV=target/bench-venv
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  # pysheds 0.5 calls np.in1d, removed in numpy 2 (see /work/shared/research/ecosystem.md).
  "$VENV/bin/pip" install -q "numpy<2" pysheds
fi
DEM="$OUT/dem$SIDE.f32"
cargo bench -q -p terrasynth --bench hydro -- write "$DEM" "$SIDE"
cargo bench -q -p terrasynth --bench hydro -- run "$DEM" "$SIDE" "$OUT/ours_exact_fill.f32" "$RUNS"
"$VENV/bin/python" scripts/bench_pysheds.py "$DEM" "$SIDE" "$OUT/ours_exact_fill.f32" "$RUNS"
cargo bench -q -p terrasynth --bench hydro -- editor
cargo bench -q -p terrasynth --bench hydro -- stream-power "$SIDE" "$RUNS"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
