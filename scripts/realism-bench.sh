#!/usr/bin/env bash
# Speed of the realistic presets against terrain-generator 0.3.1 and of one stream-power step
# against fastscapelib 0.3, in one run (issue 13 §5). Installs the peers into target/ (skipped
# when present): terrain-generator with `cargo install --locked --root target/peers`,
# fastscapelib (the PyPI wheel) in target/realism-bench-venv. Then times, median of RUNS each,
# with one thread and with all threads:
#   terrasynth generate --preset P --size SIDE --seed 5 --out DIR   (all outputs; release build)
#   terrain-generator -W PEER -H PEER -s 5 -o DIR                   (its default pipeline:
#       fBm + island + droplets + Priority-Flood + rivers, one shaded PNG; single-threaded)
# each preset once at BIG² on all threads, and one stream-power step at 4096² for both
# libraries (ours: benches/hydro.rs `stream-power`, ρ8 routing, the default; theirs:
# scripts/realism_bench_fastscapelib.py). Prints a Markdown report with the load average
# before and after: paste it into docs/EROSION.md.
# Usage: scripts/realism-bench.sh [runs] [side] [peer-side] [big-side] [sp-side]
#        (defaults 3 1025 1024 4097 4096; big-side 0 skips the BIG² runs)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-3}
SIDE=${2:-1025}
PEER_SIDE=${3:-1024}
BIG=${4:-4097}
SP_SIDE=${5:-4096}
SEED=5
OUT="$PWD/target/realism-bench"
ALL=$(nproc)
mkdir -p "$OUT"
log() { echo "[realism-bench] $*" >&2; }

PEER=target/peers/bin/terrain-generator
if [ ! -x "$PEER" ]; then
  log "installing terrain-generator 0.3.1 into target/peers"
  cargo install terrain-generator --version 0.3.1 --locked --root target/peers
fi
VENV=target/realism-bench-venv
if ! "$VENV/bin/python" -c 'import fastscapelib' 2>/dev/null; then
  log "installing fastscapelib 0.3.0 into $VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check numpy fastscapelib==0.3.0
fi
log "building the release CLI (the hydro bench builds when first run)"
cargo build -q --release -p terrasynth-cli
BIN=target/release/terrasynth

PRESETS="rivers eroded-island olsen-eroded"
if "$BIN" presets | grep -qw highlands; then PRESETS="$PRESETS highlands"; fi

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
TIMES="$OUT/times.tsv"  # who, threads, side, run, wall s, CPU s, pipeline s, total s (report.json)
: > "$TIMES"

# One timed run: ours (report.json read after) or the peer; wall and CPU (user + system)
# seconds from /usr/bin/time: on a loaded machine the CPU seconds are the steadier figure.
run_ours() {  # preset threads side run
  local dir="$OUT/$1-$3-t$2-r$4"
  rm -rf "$dir"
  RAYON_NUM_THREADS=$2 /usr/bin/time -f '%e %U %S' -o "$OUT/time.txt" "$BIN" generate --quiet \
    --preset "$1" --size "$3" --seed "$SEED" --threads "$2" --out "$dir" > /dev/null
  python3 - "$dir/report.json" "$1" "$2" "$3" "$4" "$OUT/time.txt" >> "$TIMES" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["run"]
assert r["threads"] == int(sys.argv[3]), f"report.json says {r['threads']} threads"
wall, user, system = map(float, open(sys.argv[6]).read().split()[-3:])
cells = [f"{wall:.3f}", f"{user + system:.3f}", f"{r['seconds']:.3f}", f"{r['total_seconds']:.3f}"]
print("\t".join(sys.argv[2:6] + cells))
PY
}
run_peer() {  # threads run
  local dir="$OUT/terrain-generator-$PEER_SIDE-t$1-r$2"
  rm -rf "$dir"
  RAYON_NUM_THREADS=$1 /usr/bin/time -f '%e %U %S' -o "$OUT/time.txt" \
    "$PEER" -W "$PEER_SIDE" -H "$PEER_SIDE" -s "$SEED" -o "$dir" > /dev/null
  read -r wall user system < <(tail -n 1 "$OUT/time.txt")
  printf 'terrain-generator\t%s\t%s\t%s\t%s\t%s\t-\t-\n' "$1" "$PEER_SIDE" "$2" "$wall" \
    "$(echo "$user + $system" | bc -l)" >> "$TIMES"
}

table() {  # the Markdown tables from $TIMES so far
python3 - "$TIMES" "$PRESETS" "$ALL" "$SIDE" "$PEER_SIDE" "$BIG" "$RUNS" <<'PY'
import statistics, sys
from collections import defaultdict
times, presets, all_t, side, peer_side, big, runs = sys.argv[1:]
rows = defaultdict(list)
for line in open(times):
    who, t, s, _, wall, cpu, pipe, total = line.rstrip("\n").split("\t")
    rows[(who, t, s)].append((float(wall), pipe, total, float(cpu)))
med = lambda xs: statistics.median(xs)
peer = {t: rows[("terrain-generator", t, peer_side)] for t in ("1", all_t)}
pw = {t: med([r[0] for r in peer[t]]) for t in peer}
pc = {t: med([r[3] for r in peer[t]]) for t in peer}
print(f"Median of {runs}; wall seconds (CPU seconds in brackets); peer/ours = the ratio of wall times")
print("(of CPU times in brackets).")
print()
print(f"| `generate`, seed 5, all outputs | {side}², 1 thread, s | peer/ours | {side}², {all_t} threads, s | peer/ours | ≥ 5× (wall)? |")
print("| --- | --- | --- | --- | --- | --- |")
print(f"| terrain-generator 0.3.1 default, {peer_side}² | {pw['1']:.2f} ({pc['1']:.2f}) | 1 | {pw[all_t]:.2f} ({pc[all_t]:.2f}) | 1 | |")
for p in presets.split():
    cells, ok = [], True
    for t in ("1", all_t):
        rs = rows[(p, t, side)]
        w, c = med([r[0] for r in rs]), med([r[3] for r in rs])
        ok &= pw[t] / w >= 5
        cells += [f"{w:.2f} ({c:.2f})", f"{pw[t] / w:.2f}× ({pc[t] / c:.2f}×)"]
    print(f"| {p} | " + " | ".join(cells) + f" | {'yes' if ok else 'no'} |")
print()
print(f"Where our time goes (median of {runs}, report.json `run.seconds` = pipeline, "
      "`run.total_seconds` − `run.seconds` = outputs):")
print()
print("| preset | side | threads | wall (s) | pipeline (s) | outputs (s) |")
print("| --- | --- | --- | --- | --- | --- |")
sides = [side] + ([big] if big != "0" else [])
for p in presets.split():
    for s in sides:
        for t in ("1", all_t):
            rs = rows.get((p, t, s))
            if not rs:
                continue
            pipe = med([float(r[1]) for r in rs])
            total = med([float(r[2]) for r in rs])
            wall = med([r[0] for r in rs])
            under = f" ({'under' if wall < 10 else 'over'} 10 s)" if s == big else ""
            print(f"| {p} | {s}² | {t} | {wall:.2f}{under} | {pipe:.2f} | {total - pipe:.2f} |")
PY
}

for threads in 1 "$ALL"; do
  for r in $(seq 1 "$RUNS"); do  # interleaved, so a load burst hits every contender alike
    log "threads $threads, run $r"
    run_peer "$threads" "$r"
    for p in $PRESETS; do run_ours "$p" "$threads" "$SIDE" "$r"; done
  done
done
echo "## ${SIDE}² against terrain-generator (load average before: $LOAD_BEFORE, now: $(cut -d' ' -f1-3 /proc/loadavg))"
echo
table

log "stream power at $SP_SIDE²"
SP_OURS_ALL=$(cargo bench -q -p terrasynth --bench hydro -- stream-power "$SP_SIDE" "$RUNS")
SP_OURS_ONE=$(RAYON_NUM_THREADS=1 cargo bench -q -p terrasynth --bench hydro -- stream-power "$SP_SIDE" "$RUNS")
DEM="$OUT/dem$SP_SIDE.f32"
[ -s "$DEM" ] || cargo bench -q -p terrasynth --bench hydro -- write "$DEM" "$SP_SIDE"
SP_PEER=$("$VENV/bin/python" scripts/realism_bench_fastscapelib.py "$DEM" "$SP_SIDE" "$RUNS")
echo
echo "## Stream power, one step at ${SP_SIDE}² (after a warm-up step, median of $RUNS)"
echo
echo "- terrasynth, all threads: $SP_OURS_ALL"
echo "- terrasynth, 1 thread: $SP_OURS_ONE"
echo "- $SP_PEER"
step_s() { grep -o 'one step [0-9.]* s' <<< "$1" | grep -o '[0-9.]*'; }
echo "- fastscapelib/terrasynth, one step: $(echo "scale=2; $(step_s "$SP_PEER") / $(step_s "$SP_OURS_ALL")" | bc -l)× on all threads, $(echo "scale=2; $(step_s "$SP_PEER") / $(step_s "$SP_OURS_ONE")" | bc -l)× on 1 thread (goal ≥ 10×)"

if [ "$BIG" != 0 ]; then
  for p in $PRESETS; do log "$p at $BIG²"; run_ours "$p" "$ALL" "$BIG" 1; done
  echo
  echo "## With ${BIG}² (once, all threads)"
  echo
  table
fi
echo
echo "Load average before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(date -u '+%Y-%m-%d %H:%M UTC')"
