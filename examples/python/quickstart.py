# %% [markdown]
# # terrasynth from Python: a notebook-style tour
#
# Run it as a script (`python examples/python/quickstart.py [out.png]`) or cell by cell in
# Jupyter/VS Code (`# %%` cells). Needs `pip install ./crates/terrasynth-py matplotlib`.

# %%
import sys

import matplotlib

matplotlib.use("Agg")  # no window needed; drop this line in a notebook
import matplotlib.pyplot as plt
import numpy as np

import terrasynth

# %% [markdown]
# ## A heightmap in three lines

# %%
recipe = terrasynth.Recipe.preset("mountains")
terrain = recipe.generate(size=513, seed=7)
height = terrain.height  # float32 numpy array, shape (513, 513), read-only
print(terrain, height.dtype, height.shape, f"{height.min():.3f}..{height.max():.3f}")

# %% [markdown]
# ## Hydrology on the numpy array (any 2-D DEM works the same)

# %%
filled = terrasynth.fill(height, epsilon=True)  # Priority-Flood+ε: every cell drains
area = terrasynth.flow_accumulation(filled)  # drainage area, cells
rivers = terrasynth.rivers(height, threshold=0.004)  # polylines: x, y, height, discharge, width
print(f"{len(rivers)} rivers, largest drainage area {area.max():.0f} cells")

# %% [markdown]
# ## Erosion from the library's registry, with a progress callback

# %%
eroded = terrasynth.erode(height, "thermal", iterations=30, cell_size=terrain.cell_size,
                          progress=lambda f: None)
print("thermal erosion moved", f"{np.abs(eroded - height).sum():.1f}", "height units")

# %% [markdown]
# ## How real does it look? The realism figures of `terrasynth analyze` (docs/ANALYZE.md)

# %%
report = terrain.analyze()  # cell size, height scale and sea level from the terrain
print(f"spectral slope {report['spectral_beta']:.2f}, Hack exponent {report['hack_exponent']}")
print("outside the ranges of real DEMs:", [v["figure"] for v in report["real_ranges"] if v["inside"] is False])

# %% [markdown]
# ## A picture: heights in metres with the rivers, and the drainage network

# %%
metres = height * terrain.height_scale
extent = (0, height.shape[1] * terrain.cell_size / 1000, height.shape[0] * terrain.cell_size / 1000, 0)
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 5), constrained_layout=True)
im = ax1.imshow(metres, cmap="terrain", extent=extent)
for r in rivers:
    k = terrain.cell_size / 1000
    ax1.plot(r[:, 0] * k, r[:, 1] * k, color="#1f5fbf", lw=0.4 + 1.6 * np.sqrt(r[-1, 3] / area.max()))
ax1.set_title("mountains, seed 7: height (m) and rivers")
ax1.set_xlabel("km")
ax1.set_ylabel("km")
fig.colorbar(im, ax=ax1, shrink=0.8, label="m")
ax2.imshow(np.log10(area), cmap="Blues", extent=extent)
ax2.set_title("log10 drainage area (cells)")
ax2.set_xlabel("km")
out = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "quickstart.png"
fig.savefig(out, dpi=80)
print("wrote", out)

# %% [markdown]
# ## The CLI's files, and an xarray DataArray

# %%
report = terrain.export("out-python")  # the same bytes as `terrasynth generate`
print(len(report["files"]), "files;", report["hydrology"]["rivers"], "rivers in report.json")
try:
    da = terrain.to_xarray()  # x/y in metres
    print(da.dims, float(da.x[1] - da.x[0]), "m per cell")
except ImportError as e:
    print(e)
