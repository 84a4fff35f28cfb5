"""The Python package gives the CLI's results: same heights, same files, same rivers."""

import json
import os
import struct

import numpy as np

import terrasynth
from conftest import run_cli


def read_f32_tiff(path):
    """The pixels of an uncompressed single-strip-set float32 little-endian TIFF (the
    library's height.tif), from its StripOffsets tags (a minimal reader: no dependency)."""
    data = open(path, "rb").read()
    assert data[:4] == b"II*\x00", "little-endian TIFF"
    (ifd,) = struct.unpack_from("<I", data, 4)
    (n,) = struct.unpack_from("<H", data, ifd)
    tags = {}
    for k in range(n):
        tag, typ, count, value = struct.unpack_from("<HHII", data, ifd + 2 + 12 * k)
        if typ == 3 and count == 1:
            value &= 0xFFFF
        tags[tag] = (typ, count, value)
    w, h = tags[256][2], tags[257][2]
    assert tags[259][2] == 1, "uncompressed"

    def values(tag):
        typ, count, value = tags[tag]
        if count == 1:
            return [value]
        fmt = "<%d%s" % (count, "H" if typ == 3 else "I")
        return list(struct.unpack_from(fmt, data, value))

    out = b"".join(data[o : o + c] for o, c in zip(values(273), values(279)))
    return np.frombuffer(out, dtype="<f4").reshape(h, w)


def test_generate_and_export_equal_the_cli(cli, tmp_path):
    cli_dir, py_dir = tmp_path / "cli", tmp_path / "py"
    run_cli(cli, "generate", "--preset", "island", "--size", "65", "--seed", "7", "--out", str(cli_dir))
    terrain = terrasynth.Recipe.preset("island").generate(size=65, seed=7)
    # Heights: height.tif holds height × height-scale in f32, computed in f64 as the library does.
    metres = (terrain.height.astype(np.float64) * terrain.height_scale).astype(np.float32)
    tif = read_f32_tiff(cli_dir / "height.tif")
    assert terrain.height.shape == (65, 65) and terrain.height.dtype == np.float32
    assert np.array_equal(metres.view(np.uint32), tif.view(np.uint32))
    # Every file the CLI wrote, byte for byte, from Terrain.export.
    report = terrain.export(py_dir)
    cli_files = sorted(os.listdir(cli_dir))
    assert sorted(os.listdir(py_dir)) == cli_files
    assert len(cli_files) > 5
    for name in cli_files:
        if name != "report.json":
            assert (cli_dir / name).read_bytes() == (py_dir / name).read_bytes(), name
    # report.json: equal except the machine-dependent timings and run figures.
    cli_report = json.loads((cli_dir / "report.json").read_text())
    for r in (cli_report, report):
        r.pop("timings")
        r.pop("run")
    assert report == cli_report
    assert report == {k: v for k, v in terrain.report.items() if k not in ("timings", "run")}


def test_report_before_export_is_report_json(island):
    rep = island.report
    assert rep["size"] == {"width": 65, "height": 65, "cell_size_m": island.cell_size}
    assert rep["seed"] == 7
    assert rep["height_range"]["min"] == float(island.height.min())
    assert rep["height_range"]["max"] == float(island.height.max())
    assert "height.png" in rep["files"]


def test_rivers_equal_the_exported_geojson(island, tmp_path):
    """The export computes the rivers of the final heights at the `rivers` step's default
    threshold (the island recipe has no rivers step); rivers() at that threshold and the
    terrain's sea level finds the same polylines."""
    report = island.export(tmp_path / "out")
    assert "rivers" in report["hydrology"]["computed_by_outputs"]
    geo = json.loads((tmp_path / "out" / "rivers.geojson").read_text())
    got = terrasynth.rivers(island.height, sea_level=island.sea_level)  # the step's defaults
    assert len(got) == report["hydrology"]["rivers"] == len(geo["features"]) > 0
    for river, feature in zip(got, geo["features"]):
        grid = np.array(feature["properties"]["grid"], dtype=np.float64)
        assert np.array_equal(river[:, :2], grid)
        z = np.array(feature["geometry"]["coordinates"])[:, 2]
        assert np.allclose(river[:, 2] * island.height_scale, z, rtol=0, atol=1e-9)


def test_noise_equals_the_cli_png(cli, tmp_path):
    """noise() fills the same grid as `terrasynth noise` (its PNG maps min..max to 0..65535)."""
    spec = 'kind = "perlin", fractal = "fbm", octaves = 5, seed = 11'
    out = tmp_path / "n.png"
    run_cli(cli, "noise", "--noise", spec, "--size", "40x30", "--origin", "2,-3", "--spacing", "0.125", "--out", str(out))
    arr = terrasynth.noise(spec, 2.0, -3.0, 40, 30, dx=0.125, dy=0.125)
    assert arr.shape == (30, 40) and arr.dtype == np.float32
    as_dict = terrasynth.noise({"kind": "perlin", "fractal": "fbm", "octaves": 5, "seed": 11}, 2, -3, 40, 30, 0.125, 0.125)
    assert np.array_equal(arr, as_dict)
    # Tiles from global coordinates stitch exactly.
    left = terrasynth.noise(spec, 2.0, -3.0, 17, 30, dx=0.125, dy=0.125)
    right = terrasynth.noise(spec, 2.0 + 17 * 0.125, -3.0, 23, 30, dx=0.125, dy=0.125)
    assert np.array_equal(np.hstack([left, right]), arr)
    png = read_png16(out)
    lo, hi = float(arr.min()), float(arr.max())
    expect = np.round((arr.astype(np.float64) - lo) / (hi - lo) * 65535.0)
    assert np.max(np.abs(png.astype(np.float64) - expect)) <= 1.0


def read_png16(path):
    """A 16-bit grayscale PNG without filters beyond the five standard ones (stdlib only)."""
    import zlib

    data = open(path, "rb").read()
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
            assert (depth, color) == (16, 0)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride, bpp = w * 2, 2
    out = bytearray()
    prev = bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        out += line
        prev = line
    return np.frombuffer(bytes(out), dtype=">u2").reshape(h, w)


def test_the_cli_reads_json_floats_exactly(cli, tmp_path):
    """The CLI here is built without the editor (scripts/python-test.sh: `cargo build -p
    terrasynth-cli`), as users build it. serde_json's default parser reads about one float in ten
    one ULP off (906.7979265841685 became 906.7979265841684), which would move the values of a
    project or JSON recipe; the workspace turns on its exact parser (`float_roundtrip`)."""
    text = "906.7979265841685"
    recipe = tmp_path / "r.json"
    recipe.write_text('{"name": "t", "width": 17, "height": 17, "cell-size": %s, "steps": [{"type": "noise"}]}' % text)
    run_cli(cli, "generate", "--recipe", str(recipe), "--out", str(tmp_path / "out"))
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["size"]["cell_size_m"] == float(text)


def test_analyze_equals_the_cli(cli):
    """Terrain.analyze gives the figures and verdicts of `terrasynth analyze --preset --json`
    for the same run (the same numbers, to the last digit of the JSON)."""
    import subprocess

    terrain = terrasynth.Recipe.preset("rivers").generate(size=97, seed=3)
    ours = terrain.analyze()
    out = subprocess.run(
        [cli, "analyze", "--preset", "rivers", "--size", "97", "--seed", "3", "--json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    theirs = json.loads(out)
    assert theirs.pop("map") == "preset rivers at 97x97, seed 3"
    assert ours == theirs
    assert [v["figure"] for v in ours["real_ranges"]][:3] == [
        "spectral slope beta",
        "isotropy H4",
        "isotropy H8",
    ]
