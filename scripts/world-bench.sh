#!/usr/bin/env bash
# World benchmark (issue 11): a world as C×C tiles of N² cells (`terrasynth tiles`) against
# `terrasynth generate` of the same area as one map (`--window 0,0,SxS`, S = C·(N−1)+1), wall
# time and peak RSS of each from /usr/bin/time -v; then the latency of one 513² window (the
# pipeline seconds of report.json, median of RUNS windows at different origins).
#
# usage: scripts/world-bench.sh [TILES=8] [TILE=2049] [RUNS=9] [ONE_MAP_SIDE=S]
#   The `world` preset is used when it exists, else the small world recipe below (fBm noise +
#   normalize over a declared range). Both runs write the same files: height.r16 only
#   (exports trimmed to keep the disk use at ~0.5 GB per run); `generate` also computes the
#   hydrology layers for rivers.geojson (it always writes it), the tiles do not (world.json
#   `not_tiled`). ONE_MAP_SIDE < S measures a smaller one-map window when memory is short.
#   Output folders go to target/world-bench/ and are removed after each run.
# Prints a Markdown table for the README, with the machine's load average.
set -euo pipefail
cd "$(dirname "$0")/.."
TILES="${1:-8}"
TILE="${2:-2049}"
RUNS="${3:-9}"
SIDE=$(( TILES * (TILE - 1) + 1 ))
ONE="${4:-$SIDE}"
OUT=target/world-bench
BIN=target/release/terrasynth

cargo build --release -q -p terrasynth-cli
rm -rf "$OUT"
mkdir -p "$OUT"

# The recipe: the world preset with its exports trimmed, or the fallback world.
if "$BIN" presets | grep -q '^world\b'; then
  "$BIN" recipe world > "$OUT/base.toml"
else
  cat > "$OUT/base.toml" <<'EOF'
name = "bench-world"
description = "world-bench.sh fallback: fBm noise over a declared height range"
cell-size = 30.0
seed = 11
[world]
height-range = [-1500.0, 2500.0]
[[steps]]
type = "noise"
kind = "perlin"
fractal = "fbm"
octaves = 8
feature-size-m = 20000.0
[[steps]]
type = "normalize"
input-range = [-0.9, 0.9]
min = -1500.0
max = 2500.0
EOF
fi
python3 - "$OUT/base.toml" "$OUT/bench.toml" <<'PY'
import sys, tomllib
src, dst = sys.argv[1:]
text = open(src).read()
r = tomllib.loads(text)
keep = {"png": False, "r16": True, "exr": False, "tiff": False, "images": False, "glb": False, "obj": False}
ex = r.get("exports", {})
ex.update(keep)
# Re-emit [exports] and keep the rest of the file as it is.
lines, skip = [], False
for line in text.splitlines():
    if line.strip() == "[exports]":
        skip = True
        continue
    if skip and line.startswith("["):
        skip = False
    if not skip:
        lines.append(line)
def val(v):
    return ("true" if v else "false") if isinstance(v, bool) else repr(v)
block = ["[exports]"] + [f"{k} = {val(v)}" for k, v in ex.items()]
# [exports] must come before the [[steps]] array of tables.
i = next((k for k, l in enumerate(lines) if l.startswith("[")), len(lines))
open(dst, "w").write("\n".join(lines[:i] + block + [""] + lines[i:]) + "\n")
PY
R="$OUT/bench.toml"

# "Elapsed (wall clock) time (h:mm:ss or m:ss): 1:02.33" and "Maximum resident set size (kbytes): N".
measure() {
  local log="$1"; shift
  /usr/bin/time -v "$@" 2> "$log" >/dev/null || { cat "$log" >&2; return 1; }
  python3 - "$log" <<'PY'
import sys
wall = rss = None
cpu = 0.0
for line in open(sys.argv[1]):
    if "User time" in line or "System time" in line:
        cpu += float(line.rsplit(": ", 1)[1])
    if "Elapsed (wall clock)" in line:
        t = line.rsplit(": ", 1)[1].strip().split(":")
        wall = sum(float(x) * 60 ** i for i, x in enumerate(reversed(t)))
    if "Maximum resident set size" in line:
        rss = int(line.rsplit(": ", 1)[1]) / 1024 / 1024
print(f"{wall:.1f} {rss:.2f} {cpu:.1f}")
PY
}

load0=$(cut -d' ' -f1-3 /proc/loadavg)
echo "world-bench: $(nproc) cores, load $load0, recipe $(grep -m1 '^name' "$R")" >&2

echo "world-bench: tiles ${TILES}x${TILES} of ${TILE}² (${SIDE}²)…" >&2
read -r t_wall t_rss t_cpu < <(measure "$OUT/tiles.log" "$BIN" tiles --recipe "$R" --tiles "${TILES}x${TILES}" --tile "$TILE" --quiet --out "$OUT/tiles")
tiles_bytes=$(du -sb "$OUT/tiles" | cut -f1)
rm -rf "$OUT/tiles"

echo "world-bench: generate --window 0,0,${ONE}x${ONE}…" >&2
if read -r g_wall g_rss g_cpu < <(measure "$OUT/generate.log" "$BIN" generate --recipe "$R" --window "0,0,${ONE}x${ONE}" --quiet --out "$OUT/one"); then
  :
else
  g_wall="failed"; g_rss="(see $OUT/generate.log)"; g_cpu="—"
fi
rm -rf "$OUT/one"

echo "world-bench: ${RUNS} windows of 513²…" >&2
lat=()
for k in $(seq 1 "$RUNS"); do
  x=$(( k * 7919 - 40000 )); y=$(( k * 104729 % 50000 - 25000 ))
  "$BIN" generate --recipe "$R" --window "$x,$y,513x513" --quiet --out "$OUT/w"
  lat+=("$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["seconds"])' "$OUT/w/report.json")")
  rm -rf "$OUT/w"
done
median=$(printf '%s\n' "${lat[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}')
load1=$(cut -d' ' -f1-3 /proc/loadavg)

cat <<EOF
| run | cells | wall time | CPU time (user + sys) | peak RSS |
|---|---|---|---|---|
| \`tiles --tiles ${TILES}x${TILES} --tile ${TILE}\` (${TILES}² tiles) | ${SIDE}² | ${t_wall} s | ${t_cpu} s | ${t_rss} GiB |
| \`generate --window 0,0,${ONE}x${ONE}\` (one map) | ${ONE}² | ${g_wall} s | ${g_cpu} s | ${g_rss} GiB |
| one 513² window (pipeline, all threads, median of ${RUNS}) | 513² | $(python3 -c "print(f'{${median} * 1000:.1f}')") ms | — | — |

Machine: $(nproc) cores, load average $load0 before, $load1 after; tile set on disk $(( tiles_bytes / 1024 / 1024 )) MiB.
EOF
