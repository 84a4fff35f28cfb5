#!/usr/bin/env python3
"""pysheds side of the hydrology benchmark (issue 4 §5).

Usage: bench_pysheds.py <dem.f32> <side> <ours_exact_filled.f32> [runs]

Reads a raw little-endian f32 DEM, runs pysheds' chain fill_pits -> fill_depressions ->
resolve_flats -> flowdir -> accumulation `runs` times (default 3), prints the median time of each
stage and of the chain, then compares pysheds' filled surface (after fill_depressions, no epsilon)
with terrasynth's exact fill written by `cargo bench --bench hydro -- run`.
"""
import statistics
import sys
import time

import numpy as np

if not hasattr(np, "in1d"):  # pysheds 0.5 calls np.in1d, removed in numpy 2
    np.in1d = np.isin

from pysheds.grid import Grid
from pysheds.sview import Raster, ViewFinder


def main():
    path, side, ours_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    dem = np.fromfile(path, dtype="<f4").reshape(side, side).astype(np.float64)
    vf = ViewFinder(shape=dem.shape, nodata=np.nan)
    raster = Raster(dem, viewfinder=vf)
    grid = Grid(viewfinder=vf)
    stages = {k: [] for k in ("fill_pits", "fill_depressions", "resolve_flats", "flowdir", "accumulation", "total")}
    cpu = []
    flooded = None
    for _ in range(runs):
        c0 = time.process_time()
        t = [time.perf_counter()]
        pits = grid.fill_pits(raster)
        t.append(time.perf_counter())
        flooded = grid.fill_depressions(pits)
        t.append(time.perf_counter())
        inflated = grid.resolve_flats(flooded)
        t.append(time.perf_counter())
        fdir = grid.flowdir(inflated)
        t.append(time.perf_counter())
        acc = grid.accumulation(fdir)
        t.append(time.perf_counter())
        for k, name in enumerate(list(stages)[:-1]):
            stages[name].append(t[k + 1] - t[k])
        stages["total"].append(t[-1] - t[0])
        cpu.append(time.process_time() - c0)
        del acc
    med = {k: statistics.median(v) for k, v in stages.items()}
    print(
        f"pysheds {side}x{side}: "
        + ", ".join(f"{k} {v:.3f} s" for k, v in med.items())
        + f" wall, {statistics.median(cpu):.2f} s CPU (median of {runs})"
    )
    ours = np.fromfile(ours_path, dtype="<f4").reshape(side, side).astype(np.float64)
    theirs = np.asarray(flooded, dtype=np.float64)
    diff = np.abs(ours - theirs)
    raised_ours = int(np.count_nonzero(ours > dem))
    raised_theirs = int(np.count_nonzero(theirs > dem))
    print(
        f"filled surface: max |ours - pysheds| = {diff.max():.3g}, cells differing = "
        f"{int(np.count_nonzero(diff > 0))}, cells raised: ours {raised_ours}, pysheds {raised_theirs}"
    )


if __name__ == "__main__":
    main()
