"""Converts the real DEMs shipped in matplotlib's wheel (mpl-data/sample_data) into R16 files
that `terrasynth analyze` reads, with square cells, and prints their units as JSON.

Used by scripts/calibrate-dems.sh. Usage: dem_reference.py WHEEL OUTDIR
- jacksboro_fault_dem.npz: a 3-arc-second DEM (USGS NED/SRTM-like grid; the wheel states no source) around the Jacksboro fault,
  Tennessee; 344 x 403 int16 metres; 3" cells are 92.6 m north-south and 74.4 m east-west at
  36.6° N, so columns are resampled linearly to 92.6 m (403 -> 323 columns).
- topobathy.npz: topography and bathymetry around Vancouver Island (48-50° N, 126-122° W),
  91 x 120 float32 metres on a 1.31' x 2' grid (2.43 km x 2.43 km); sea = below 0 m.
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
print(json.dumps(out))
