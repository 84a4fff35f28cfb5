"""One stream-power step of fastscapelib 0.3 on a raw f32 DEM, for scripts/realism-bench.sh.

The step is fastscapelib's own landscape-evolution loop body (its docs' "river profile" and
"escarpment" examples, Braun & Willett 2013 for the SPL solver): uplift, flow routing
(SingleFlowRouter + PFloodSinkResolver on a RasterGrid with fixed-value borders), drainage
area, SPLEroder, DiffusionADIEroder. Parameters are terrasynth's StreamPowerParams defaults
(K 0.2, m 0.4, n 1, U 0.005, dt 1, Kd 0.01, dx 1) so both sides solve the same problem size.
Prints the median wall time of one step after a warm-up step, and of the routing alone.

Usage: python realism_bench_fastscapelib.py DEM.f32 SIDE [RUNS]
"""

import statistics
import sys
import time

import fastscapelib as fs
import numpy as np


def main() -> None:
    path, side = sys.argv[1], int(sys.argv[2])
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    elevation = np.fromfile(path, dtype="<f4").astype(np.float64).reshape(side, side)
    k, m, n, uplift, dt, kd = 0.2, 0.4, 1.0, 0.005, 1.0, 0.01
    grid = fs.RasterGrid([side, side], [1.0, 1.0], fs.NodeStatus.FIXED_VALUE)
    graph = fs.FlowGraph(grid, [fs.SingleFlowRouter(), fs.PFloodSinkResolver()])
    spl = fs.SPLEroder(graph, k, m, n, 1e-5)
    diffusion = fs.DiffusionADIEroder(grid, kd)
    uplift_rate = np.full_like(elevation, uplift)
    uplift_rate[[0, -1], :] = 0.0
    uplift_rate[:, [0, -1]] = 0.0

    def step(h: np.ndarray) -> np.ndarray:
        uplifted = h + dt * uplift_rate
        graph.update_routes(uplifted)
        area = graph.accumulate(1.0)
        spl_erosion = spl.erode(uplifted, area, dt)
        diff_erosion = diffusion.erode(uplifted - spl_erosion, dt)
        return uplifted - spl_erosion - diff_erosion

    elevation = step(elevation)  # warm-up, as the Rust bench does
    steps, routing = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        elevation = step(elevation)
        steps.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        graph.update_routes(elevation)
        routing.append(time.perf_counter() - t0)
    print(
        f"fastscapelib {fs.__version__} stream power {side}x{side}: one step "
        f"{statistics.median(steps):.3f} s wall; routing alone (update_routes) "
        f"{statistics.median(routing):.3f} s (median of {runs})"
    )


if __name__ == "__main__":
    main()
