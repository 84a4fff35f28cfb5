"""Hydrology and erosion on numpy DEMs: exact values on hand-made maps, conversions."""

import numpy as np
import pytest

import terrasynth

# A 5x5 bowl: rim 9, walls 5, pit 1 in the centre, spill point 3 on the south edge.
BOWL = np.array(
    [
        [9, 9, 9, 9, 9],
        [9, 5, 5, 5, 9],
        [9, 5, 1, 5, 9],
        [9, 5, 5, 5, 9],
        [9, 9, 3, 9, 9],
    ],
    dtype=np.float32,
)

# A 5-wide, 4-tall plane z = x + 2y: every interior cell's steepest descent is north-west
# (drop 3/√2 ≈ 2.12 beats north's 2 and west's 1). Not square, so a transposition shows.
PLANE = np.fromfunction(lambda y, x: x + 2 * y, (4, 5), dtype=np.float32)


def test_fill_raises_the_pit_to_its_spill_height():
    filled = terrasynth.fill(BOWL)
    expect = BOWL.copy()
    expect[2, 2] = 5.0  # the lowest path out goes over a 5 wall to the spill point 3
    assert filled.dtype == np.float32
    assert np.array_equal(filled, expect)
    assert np.array_equal(BOWL[2, 2], 1.0), "input unchanged"


def test_epsilon_fill_drains_everything_to_the_spill_point():
    eps = terrasynth.fill(BOWL, epsilon=True)
    assert np.all(eps >= terrasynth.fill(BOWL))
    assert np.array_equal(eps[0], BOWL[0]) and np.array_equal(eps[:, 0], BOWL[:, 0]), "edges keep heights"
    acc = terrasynth.flow_accumulation(eps)
    # The 9 interior cells drain through the spill cell (row 4, column 2).
    assert acc[4, 2] == 10.0
    rec = terrasynth.flow_directions(eps)
    roots = rec.ravel() == np.arange(rec.size)
    assert acc.ravel()[roots].sum() == BOWL.size  # every cell reaches an outlet


def test_d8_receivers_and_accumulation_on_a_plane():
    rec = terrasynth.flow_directions(PLANE)
    h, w = PLANE.shape
    expect = np.arange(h * w, dtype=np.uint32).reshape(h, w)
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            expect[y, x] = (y - 1) * w + (x - 1)  # north-west
    assert rec.dtype == np.uint32
    assert np.array_equal(rec, expect)
    acc = terrasynth.flow_accumulation(PLANE)
    assert acc.dtype == np.float64
    assert np.array_equal(
        acc,
        np.array([[3, 3, 2, 1, 1], [2, 2, 2, 1, 1], [1, 1, 1, 1, 1], [1, 1, 1, 1, 1]], dtype=np.float64),
    )
    weighted = terrasynth.flow_accumulation(PLANE, weights=np.full(PLANE.shape, 0.5))
    assert np.array_equal(weighted, acc * 0.5)


def test_sea_level_makes_outlets():
    # With the sea at 4.5 every cell below it (z < 4.5) is its own receiver.
    rec = terrasynth.flow_directions(PLANE, sea_level=4.5)
    own = rec.ravel() == np.arange(rec.size)
    assert np.array_equal(own.reshape(PLANE.shape)[1:-1, 1:-1], PLANE[1:-1, 1:-1] < 4.5)


def test_conversions_give_the_same_results():
    rng = np.random.default_rng(3)
    dem32 = rng.random((33, 47), dtype=np.float32)
    base = terrasynth.fill(dem32, epsilon=True)
    # float64 values that are exact float32s, Fortran order, a strided view, integers.
    assert np.array_equal(terrasynth.fill(dem32.astype(np.float64), epsilon=True), base)
    assert np.array_equal(terrasynth.fill(np.asfortranarray(dem32), epsilon=True), base)
    big = np.zeros((66, 94), dtype=np.float32)
    big[::2, ::2] = dem32
    assert np.array_equal(terrasynth.fill(big[::2, ::2], epsilon=True), base)
    ints = (dem32 * 1000).astype(np.int32)
    assert np.array_equal(terrasynth.fill(ints), terrasynth.fill(ints.astype(np.float32)))
    assert np.array_equal(terrasynth.flow_accumulation(dem32.tolist()), terrasynth.flow_accumulation(dem32))


def test_rivers_follow_the_receivers():
    terrain = terrasynth.Recipe.preset("mountains").generate(size=65, seed=2)
    rivers = terrasynth.rivers(terrain.height, 0.01)
    assert rivers, "a mountain map has rivers at 1 % of the cells"
    eps = terrasynth.fill(terrain.height, epsilon=True)
    rec = terrasynth.flow_directions(eps)
    acc = terrasynth.flow_accumulation(eps)
    h, w = eps.shape
    for r in rivers:
        assert r.shape[1] == 5 and r.dtype == np.float64
        xs, ys = r[:, 0].astype(int), r[:, 1].astype(int)
        # Consecutive points follow the D8 receivers; discharge is the accumulation there.
        assert np.array_equal(rec[ys[:-1], xs[:-1]], ys[1:] * w + xs[1:])
        assert np.array_equal(r[:, 3], acc[ys, xs].astype(np.float32).astype(np.float64))
        assert np.all(r[:, 3] >= 0.01 * h * w)
        assert np.array_equal(r[:, 2], eps[ys, xs].astype(np.float64))


def test_thermal_erosion_through_the_registry():
    terrain = terrasynth.Recipe.preset("mountains").generate(size=65, seed=2)
    dem = terrain.height
    out = terrasynth.erode(dem, "thermal", iterations=20, talus_k=2)
    assert out.dtype == np.float32 and out.shape == dem.shape
    # Thermal erosion moves material downhill: mass is kept, relief shrinks.
    assert abs(float(out.sum(dtype=np.float64)) - float(dem.sum(dtype=np.float64))) < 1e-3 * float(np.abs(dem).sum())
    assert np.ptp(out) <= np.ptp(dem)
    assert not np.array_equal(out, dem)
    # Zero iterations change nothing; the same call twice gives the same bits.
    assert np.array_equal(terrasynth.erode(dem, "thermal", iterations=0), dem)
    assert np.array_equal(terrasynth.erode(dem, "thermal", iterations=20, talus_k=2), out)


def test_erosion_steps_list_the_registry():
    steps = terrasynth.erosion_steps()
    assert {"thermal", "hydraulic", "droplets", "stream-power"} <= set(steps)
    it = steps["thermal"]["params"]["iterations"]
    assert it["default"] == "50" and "0..=" in it["allowed"]


def test_to_xarray_coords_in_metres():
    xr = pytest.importorskip("xarray")
    terrain = terrasynth.Recipe.preset("island").generate(size=(9, 5))
    da = terrain.to_xarray()
    assert isinstance(da, xr.DataArray)
    assert da.dims == ("y", "x") and da.shape == (5, 9)
    assert np.allclose(da.x.values, (np.arange(9) + 0.5) * terrain.cell_size)
    assert np.array_equal(da.values, terrain.height)


def test_analyze_a_plane_and_a_cone():
    """Reference values: a plane rising 1 m per 10 m cell has every slope atan(0.1) and a
    hypsometric integral of 1/2; a cone drains everything, so it is inside the one-sided
    drainage ranges, and has no basin large enough for Hack's exponent (None, not judged)."""
    plane = np.fromfunction(lambda y, x: x, (40, 32), dtype=np.float32)
    r = terrasynth.analyze(plane, cell_size=10.0)
    assert r["width"] == 32 and r["height"] == 40 and r["cell_size_m"] == 10.0
    assert all(abs(s - np.degrees(np.arctan(0.1))) < 1e-4 for s in r["slope_percentiles_deg"])
    assert abs(r["hypsometric_integral"] - 0.5) < 1e-9
    # The same plane in units of 2 m: every slope is atan(0.2).
    r2 = terrasynth.analyze(plane.astype(np.float64), cell_size=10.0, height_scale=2.0)
    assert abs(r2["slope_percentiles_deg"][2] - np.degrees(np.arctan(0.2))) < 1e-4

    yy, xx = np.mgrid[0:33, 0:33]
    cone = (100.0 - np.hypot(xx - 16.0, yy - 16.0)).astype(np.float32)
    c = terrasynth.analyze(cone)
    verdicts = {v["figure"]: v for v in c["real_ranges"]}
    assert c["hack_exponent"] is None and verdicts["Hack exponent h"]["inside"] is None
    assert (c["drained_fraction_tolerant"], c["depression_fraction"]) == (1.0, 0.0)
    for name in ["drained fraction (tolerant)", "depression fraction", "pits per 10k cells"]:
        assert verdicts[name]["inside"] is True, name
    assert verdicts["depression fraction"] == {
        "figure": "depression fraction",
        "low": None,
        "high": 0.076,
        "value": 0.0,
        "inside": True,
    }
