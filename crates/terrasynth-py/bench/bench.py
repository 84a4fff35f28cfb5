#!/usr/bin/env python3
"""terrasynth's Python API against the Python terrain/hydrology packages, on the same data.

Usage: bench.py [side] [runs]       (default 2048, 3; scripts/python-bench.sh installs the peers)

1. Hydrology, fill + D8 + accumulation on one DEM (terrasynth's `mountains` preset at side²):
   - terrasynth: fill(dem, epsilon=True) -> flow_directions(filled) -> flow_accumulation(filled)
     (flow_accumulation routes again: its D8 time is inside);
   - pysheds 0.5: fill_pits -> fill_depressions -> resolve_flats -> flowdir -> accumulation;
   - richdem (the richdem-fork wheel): FillDepressions(epsilon=True) -> FlowAccumulation(D8).
   Each exact (no ε) filled surface is compared with terrasynth's fill(dem).
2. Generation at side²: terrasynth `Recipe.preset("island").generate` (the whole preset:
   noise, shaping, erosion) and `terrasynth.noise` (fBm alone) vs xarray-spatial's
   `generate_terrain` (fBm-style noise on an xarray DataArray).
3. The binding's overhead: each terrasynth hydrology call's wall time minus the library's
   own time for the same work measured inside Rust (`_terrasynth._bench_hydro`).

Prints a Markdown table of medians over `runs` runs (wall seconds).
"""

import importlib.metadata as md
import os
import statistics
import sys
import time

import numpy as np

import terrasynth
from terrasynth import _terrasynth


def timed(fn, runs):
    out, times = None, []
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def version(pkg):
    try:
        return md.version(pkg)
    except md.PackageNotFoundError:
        return None


def main():
    side = int(sys.argv[1]) if len(sys.argv) > 1 else 2048
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    rows = []  # (task, package, seconds, note)
    dem = np.array(terrasynth.Recipe.preset("mountains").generate(size=side, seed=1).height)

    # 1. Hydrology.
    stage = {"fill": [], "d8": [], "acc": []}
    for _ in range(runs):
        t0 = time.perf_counter()
        filled = terrasynth.fill(dem, epsilon=True)
        t1 = time.perf_counter()
        terrasynth.flow_directions(filled)
        t2 = time.perf_counter()
        acc = terrasynth.flow_accumulation(filled)
        t3 = time.perf_counter()
        for k, v in zip(stage, (t1 - t0, t2 - t1, t3 - t2)):
            stage[k].append(v)
    ours_total = statistics.median([a + b + c for a, b, c in zip(*stage.values())])
    rows.append(("fill + D8 + accumulation", f"terrasynth {terrasynth.__version__}", ours_total, "Priority-Flood+ε, D8, accumulation"))
    exact = terrasynth.fill(dem)

    # 3. Binding overhead, per call.
    rust = [_terrasynth._bench_hydro(dem) for _ in range(runs)]
    rust_med = [statistics.median(r[i] for r in rust) for i in range(3)]
    overhead = []
    for name, key, r in zip(("fill", "flow_directions", "flow_accumulation"), stage, rust_med):
        py = statistics.median(stage[key])
        overhead.append((name, py, r))

    if version("pysheds"):
        if not hasattr(np, "in1d"):  # pysheds 0.5 calls np.in1d, removed in numpy 2
            np.in1d = np.isin
        from pysheds.grid import Grid
        from pysheds.sview import Raster, ViewFinder

        d64 = dem.astype(np.float64)
        vf = ViewFinder(shape=d64.shape, nodata=np.nan)
        grid = Grid(viewfinder=vf)
        raster = Raster(d64, viewfinder=vf)

        def pysheds_chain():
            pits = grid.fill_pits(raster)
            flooded = grid.fill_depressions(pits)
            inflated = grid.resolve_flats(flooded)
            fdir = grid.flowdir(inflated)
            acc = grid.accumulation(fdir)
            return flooded, acc

        (flooded, _), sec = timed(pysheds_chain, runs)
        diff = float(np.max(np.abs(np.asarray(flooded) - exact.astype(np.float64))))
        rows.append(("fill + D8 + accumulation", f"pysheds {version('pysheds')}", sec, f"largest fill difference from terrasynth exact fill: {diff:.3g}"))

    if version("richdem-fork") or version("richdem"):
        import richdem as rd

        rd_dem = rd.rdarray(dem.astype(np.float64), no_data=-1e30)

        def richdem_chain():
            filled = rd.FillDepressions(rd_dem, epsilon=True, in_place=False)
            acc = rd.FlowAccumulation(filled, method="D8")
            return acc

        sys.stdout.flush()
        with open(os.devnull, "w") as null:
            saved = [os.dup(1), os.dup(2)]
            os.dup2(null.fileno(), 1)  # richdem prints progress, warnings and citations
            os.dup2(null.fileno(), 2)
            try:
                _, sec = timed(richdem_chain, runs)
                rd_exact = np.asarray(rd.FillDepressions(rd_dem, epsilon=False, in_place=False))
            finally:
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
        diff = float(np.max(np.abs(rd_exact - exact.astype(np.float64))))
        pkg = "richdem-fork" if version("richdem-fork") else "richdem"
        rows.append(("fill + D8 + accumulation", f"{pkg} {version(pkg)}", sec, f"largest fill difference from terrasynth exact fill: {diff:.3g}"))

    # 2. Generation.
    _, sec = timed(lambda: terrasynth.Recipe.preset("island").generate(size=side, seed=1), runs)
    rows.append((f"generate {side}²", f"terrasynth {terrasynth.__version__}", sec, "`island` preset: fBm noise, fall-off, normalise"))
    spec = {"kind": "perlin", "fractal": "fbm", "octaves": 8, "seed": 1}
    _, sec = timed(lambda: terrasynth.noise(spec, 0, 0, side, side, 1 / 256, 1 / 256), runs)
    rows.append((f"generate {side}²", f"terrasynth {terrasynth.__version__}", sec, "`noise` fBm, 8 octaves"))
    if version("xarray-spatial"):
        import xarray as xr
        from xrspatial import generate_terrain

        agg = xr.DataArray(np.zeros((side, side), dtype=np.float32), dims=["y", "x"])
        generate_terrain(xr.DataArray(np.zeros((64, 64), dtype=np.float32), dims=["y", "x"]))  # numba JIT warm-up
        _, sec = timed(lambda: generate_terrain(agg, seed=1), runs)
        rows.append((f"generate {side}²", f"xarray-spatial {version('xarray-spatial')}", sec, "`generate_terrain` (after a JIT warm-up call)"))

    print(f"DEM {side}×{side} (terrasynth `mountains`, seed 1), median of {runs} runs, wall seconds, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}\n")
    print("| task | package | seconds | note |")
    print("|---|---|---:|---|")
    for task, pkg, sec, note in rows:
        print(f"| {task} | {pkg} | {sec:.3f} | {note} |")
    print("\nBinding overhead (terrasynth call from Python minus the same library work timed in Rust):\n")
    print("| call | Python s | library s | overhead s |")
    print("|---|---:|---:|---:|")
    for name, py, r in overhead:
        print(f"| {name} | {py:.4f} | {r:.4f} | {py - r:.4f} |")


if __name__ == "__main__":
    main()
