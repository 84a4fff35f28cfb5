"""Every API error path: one clear exception naming the problem and the allowed range."""

import sys

import numpy as np
import pytest

import terrasynth

DEM = np.arange(20, dtype=np.float32).reshape(4, 5)


def test_recipe_errors():
    with pytest.raises(ValueError, match="nope"):
        terrasynth.Recipe.preset("nope")
    with pytest.raises(ValueError):
        terrasynth.Recipe.from_toml("width = ")
    with pytest.raises(ValueError, match="unknown field"):
        terrasynth.Recipe.from_toml("colour = 3")
    bad = terrasynth.Recipe.from_toml('[[steps]]\ntype = "diamond-square"\nroughness = -1\n')
    with pytest.raises(ValueError, match=r"step 1 \(diamond-square\).*roughness.*allowed"):
        bad.generate(size=17)
    unknown = terrasynth.Recipe.from_toml('[[steps]]\ntype = "no-such-step"\n')
    with pytest.raises(ValueError, match="no-such-step"):
        unknown.generate(size=17)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"size": 1}, r"`width` = 1: allowed an integer in 2..="),
        ({"size": (17,)}, "size"),
        ({"size": "big"}, "size"),
        ({"size": 10**6}, "4 GiB limit"),  # the mesh check comes first, as in the CLI
        ({"seed": -1}, "seed"),
        ({"seed": 2**64}, r"seed = 18446744073709551616: allowed an integer in 0..=18446744073709551615"),
        ({"threads": 0}, "threads"),
        ({"threads": 10**6}, "threads"),
    ],
)
def test_generate_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        terrasynth.Recipe.preset("island").generate(**kwargs)


def test_export_errors(tmp_path):
    terrain = terrasynth.Recipe.preset("island").generate(size=17)
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(OSError):
        terrain.export(afile)
    with pytest.raises(ValueError, match="bogus"):
        terrain.export(tmp_path / "out", engine="bogus")
    assert not (tmp_path / "out").exists()


def test_progress_exception_propagates_and_cancels():
    class Stop(Exception):
        pass

    def progress(f):
        raise Stop("from the callback")

    with pytest.raises(Stop):
        terrasynth.Recipe.preset("island").generate(size=65, progress=progress)


@pytest.mark.parametrize(
    "args, match",
    [
        (('kind = "nope"', 0, 0, 4, 4), "nope"),
        (("not toml", 0, 0, 4, 4), "."),
        (('kind = "perlin"', float("nan"), 0, 4, 4), "x0"),
        (('kind = "perlin"', 0, 0, 0, 4), "size"),
        (('kind = "perlin"', 0, 0, 4, 4, 0.0), "dx"),
        (('kind = "perlin"', 0, 0, 4, 4, 1.0, -1.0), "dy"),
        (({"kind": "perlin", "octaves": object()}, 0, 0, 4, 4), "noise parameter"),
    ],
)
def test_noise_errors(args, match):
    with pytest.raises(ValueError, match=match):
        terrasynth.noise(*args)


@pytest.mark.parametrize(
    "fn",
    [terrasynth.fill, terrasynth.flow_directions, terrasynth.flow_accumulation, terrasynth.rivers, terrasynth.analyze],
)
def test_dem_errors(fn):
    nan = DEM.copy()
    nan[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"NaN at cell \(3, 2\).*finite"):
        fn(nan)
    inf = DEM.copy()
    inf[0, 1] = np.inf
    with pytest.raises(ValueError, match=r"inf at cell \(1, 0\)"):
        fn(inf)
    with pytest.raises(ValueError, match="2-D"):
        fn(np.zeros(5, dtype=np.float32))
    with pytest.raises(ValueError, match="2-D"):
        fn(np.zeros((2, 2, 2), dtype=np.float32))
    with pytest.raises(ValueError, match="dtype complex"):
        fn(DEM.astype(np.complex64))
    with pytest.raises(ValueError, match="dtype bool"):
        fn(DEM > 3)
    with pytest.raises(ValueError, match="size"):
        fn(np.zeros((0, 5), dtype=np.float32))


def test_hydro_argument_errors():
    with pytest.raises(ValueError, match="sea-level"):
        terrasynth.flow_directions(DEM, sea_level=float("nan"))
    with pytest.raises(ValueError, match="size mismatch"):
        terrasynth.flow_accumulation(DEM, weights=np.ones((3, 3)))
    with pytest.raises(ValueError, match="threshold.*allowed"):
        terrasynth.rivers(DEM, -1.0)
    with pytest.raises(ValueError, match="threshold.*allowed"):
        terrasynth.rivers(DEM, float("nan"))
    with pytest.raises(ValueError, match="max-width.*allowed"):
        terrasynth.rivers(DEM, 0.1, max_width=-2)


def test_analyze_errors():
    with pytest.raises(ValueError, match="height-scale.*> 0"):
        terrasynth.analyze(DEM, height_scale=0.0)
    with pytest.raises(ValueError, match="channel-area.*≥ 0"):
        terrasynth.analyze(DEM, channel_area=-1.0)
    with pytest.raises(ValueError, match="depression-tolerance"):
        terrasynth.analyze(DEM, depression_tolerance=float("nan"))
    with pytest.raises(ValueError, match="cell_size.*> 0"):
        terrasynth.analyze(DEM, cell_size=0.0)
    with pytest.raises(ValueError, match="sea-level"):
        terrasynth.analyze(DEM, sea_level=float("nan"))


def test_erode_errors():
    with pytest.raises(ValueError, match="unknown erosion `lava`: allowed one of .*thermal"):
        terrasynth.erode(DEM, "lava")
    with pytest.raises(ValueError, match="`iterations` = -1: allowed an integer in 0..="):
        terrasynth.erode(DEM, "thermal", iterations=-1)
    with pytest.raises(ValueError, match="talus"):
        terrasynth.erode(DEM, "thermal", talus_k=1e9)
    with pytest.raises(ValueError, match="colour"):
        terrasynth.erode(DEM, "thermal", colour=3)
    with pytest.raises(ValueError, match="`iterations`: allowed a bool, number, string or list"):
        terrasynth.erode(DEM, "thermal", iterations={"a": 1})
    with pytest.raises(ValueError, match="cell-size"):
        terrasynth.erode(DEM, "thermal", cell_size=-1.0)
    with pytest.raises(ValueError, match="seed"):
        terrasynth.erode(DEM, "thermal", seed=-3)
    nan = DEM.copy()
    nan[0, 0] = np.nan
    with pytest.raises(ValueError):
        terrasynth.erode(nan, "stream-power")


def test_to_xarray_without_xarray(monkeypatch):
    terrain = terrasynth.Recipe.preset("island").generate(size=9)
    monkeypatch.setitem(sys.modules, "xarray", None)
    with pytest.raises(ImportError, match="pip install xarray"):
        terrain.to_xarray()


def test_height_is_read_only():
    terrain = terrasynth.Recipe.preset("island").generate(size=9)
    with pytest.raises(ValueError, match="read-only"):
        terrain.height[0, 0] = 1.0


def test_any_u64_seed_runs_and_round_trips_through_toml():
    """Seeds past the largest TOML integer (2**63 - 1) are written as strings and read back."""
    recipe = terrasynth.Recipe.preset("island")
    top = recipe.generate(size=17, seed=2**64 - 1)
    assert top.recipe.seed == 2**64 - 1
    assert 'seed = "18446744073709551615"' in top.recipe.to_toml()
    again = terrasynth.Recipe.from_toml(top.recipe.to_toml()).generate()
    assert (again.height == top.height).all()
    assert not (recipe.generate(size=17, seed=2**64 - 2).height == top.height).all()
