"""terrasynth.World: windows of an endless world are crops of larger windows (bit for bit),
chunks share edges, 16-bit exports map the world's height range, bad input is refused."""

import os

import numpy as np
import pytest

import terrasynth

# A small world of point steps, so the test does not depend on the `world` preset.
WORLD = """
name = "py-world"
cell-size = 30.0
seed = 3
[world]
height-range = [-500.0, 1500.0]
[exports]
glb = false
images = false
[[steps]]
type = "noise"
feature-size-m = 2000.0
octaves = 6
[[steps]]
type = "normalize"
input-range = [-0.8, 0.8]
min = -500.0
max = 1500.0
"""


@pytest.fixture(scope="module")
def world():
    return terrasynth.World(recipe=WORLD)


def test_a_window_is_the_crop_of_a_larger_window(world):
    big = world.window(-50, -31, 81, 67).height
    assert big.dtype == np.float32 and big.shape == (67, 81)
    assert np.ptp(big) > 0  # not flat: a crop test on a constant would prove nothing
    for x, y, w, h in [(-50, -31, 13, 9), (-3, 4, 17, 11), (20, 26, 11, 10), (-49, 30, 5, 3)]:
        small = world.window(x, y, w, h).height
        crop = big[y + 31 : y + 31 + h, x + 50 : x + 50 + w]
        assert small.tobytes() == crop.tobytes(), (x, y, w, h)


def test_far_windows_are_crops_too(world):
    big = world.window(10_000_000, -10_000_003, 40, 30).height
    small = world.window(10_000_011, -9_999_990, 7, 9).height
    assert small.tobytes() == big[13:22, 11:18].tobytes()


def test_chunks_share_their_edges(world):
    a = world.chunk(-1, 2, 33).height
    b = world.chunk(0, 2, 33).height
    c = world.chunk(-1, 3, 33).height
    assert a[:, -1].tobytes() == b[:, 0].tobytes()
    assert a[-1, :].tobytes() == c[0, :].tobytes()
    assert a.tobytes() == world.window(-32, 64, 33, 33).height.tobytes()


def test_height_range_seed_and_recipe(world):
    assert world.height_range == (-500.0, 1500.0)
    assert world.recipe.name == "py-world"
    h = world.window(0, 0, 20, 20).height
    assert h.min() >= -500.0 and h.max() <= 1500.0
    other = terrasynth.World(recipe=WORLD, seed=4).window(0, 0, 20, 20).height
    assert other.tobytes() != h.tobytes()
    assert terrasynth.World(recipe=terrasynth.Recipe.from_toml(WORLD)).window(0, 0, 20, 20).height.tobytes() == h.tobytes()


def test_a_window_exports_on_the_world_range(world, tmp_path):
    t = world.window(300, -70, 40, 30)
    assert t.height_scale == 1.0
    report = t.export(tmp_path / "w")
    assert report["world_height_range_m"] == [-500.0, 1500.0]
    q = np.fromfile(os.path.join(tmp_path, "w", "height.r16"), dtype="<u2").reshape(30, 40)
    want = np.round((t.height.astype(np.float64) + 500.0) / 2000.0 * 65535.0).astype(np.uint16)
    assert np.array_equal(q, want)


def test_bad_worlds_and_windows_are_refused(world):
    with pytest.raises(ValueError, match="world recipe"):
        terrasynth.World(preset="island")
    with pytest.raises(ValueError, match="preset or recipe"):
        terrasynth.World(preset="island", recipe=WORLD)
    with pytest.raises(ValueError, match="2..=32769"):
        world.window(0, 0, 1, 5)
    with pytest.raises(ValueError, match="999999999999"):
        world.window(10**12, 0, 5, 5)
    with pytest.raises(ValueError, match="allowed an integer"):
        world.window(0.5, 0, 5, 5)
    with pytest.raises(ValueError, match="at least 2 cells"):
        world.chunk(0, 0, 1)
