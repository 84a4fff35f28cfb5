#!/usr/bin/env bash
# Bias or chance? The grid signature of a preset (or a recipe file) over many seeds, from the
# signed harmonics of `terrasynth analyze --json` (docs/ANALYZE.md, docs/EROSION.md
# "Session 42").
#
# Usage: scripts/isotropy-seeds.sh PRESET|RECIPE.toml SIZE [FIRST_SEED LAST_SEED]
#        (seeds 1-36 by default; TERRASYNTH=binary, default target/release/terrasynth, built if
#        missing; JOBS=parallel runs, default 2, each on one thread)
#
# Prints, for the 8- and the 4-fold harmonic: the mean of the signed part along the grid (c8,
# c4) with its standard error, the chance scatter sigma (the root mean square of the mirror-odd
# part s8, s4, which averages to zero for any generator that treats mirrored directions
# alike), how many runs are above the real-DEM bound, and how many an unbiased generator with
# that scatter would put there: n * exp(-bound^2 / (2 sigma^2)), the tail of a Rayleigh
# distribution (c and s independent, normal, of equal spread).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n 5,8p "$0"; exit 2; }
what=$1 size=$2 first=${3:-1} last=${4:-36}
BIN=${TERRASYNTH:-target/release/terrasynth}
[ -x "$BIN" ] || cargo build -q --release -p terrasynth-cli
if [[ $what == *.toml ]]; then source=(--recipe "$what"); else source=(--preset "$what"); fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export BIN work size
export SOURCE="${source[*]}"
run_one() {
  local seed=$1 out="$work/run-$1"
  # shellcheck disable=SC2086 # SOURCE is two words: the flag and its value
  "$BIN" generate $SOURCE --size "$size" --seed "$seed" --out "$out" --quiet --threads 1
  "$BIN" analyze "$out" --json >"$work/seed-$seed.json"
  rm -rf "$out"
}
export -f run_one
seq "$first" "$last" | xargs -P "${JOBS:-2}" -I{} bash -c 'run_one {}'
python3 - "$work" "$what" "$size" <<'PY'
import glob, json, math, statistics, sys
work, what, size = sys.argv[1:4]
runs = [json.load(open(f)) for f in sorted(glob.glob(f"{work}/seed-*.json"))]
n = len(runs)
print(f"{what} at {size}², {n} seeds")
for k in (8, 4):
    c = [r[f"isotropy_c{k}"] for r in runs]
    s = [r[f"isotropy_s{k}"] for r in runs]
    modulus = [r[f"isotropy_h{k}"] for r in runs]
    bound = next(v["high"] for v in runs[0]["real_ranges"] if v["figure"] == f"isotropy H{k}")
    sigma = math.sqrt(sum(v * v for v in s) / n)
    err = statistics.stdev(c) / math.sqrt(n) if n > 1 else float("nan")
    above = sum(v > bound for v in modulus)
    chance = n * math.exp(-bound * bound / (2 * sigma * sigma)) if sigma > 0 else 0.0
    print(f"  H{k}: mean c{k} {statistics.mean(c):+.4f} ± {err:.4f}, chance scatter sigma {sigma:.4f} "
          f"(rms s{k}), median H{k} {statistics.median(modulus):.4f}; above {bound}: {above} of {n} "
          f"runs, {chance:.1f} expected of an unbiased generator")
PY
