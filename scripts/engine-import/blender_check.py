# Run by scripts/engine-import.sh:  blender -b --factory-startup --python blender_check.py -- FOLDER
# FOLDER is a terrasynth output folder. Imports mesh.glb with Blender's glTF importer and builds
# a displaced grid from height.exr (Blender's own EXR reader), checks sizes and height ranges
# against report.json, every EXR pixel against height.r16, and prints one JSON line starting
# `RESULT `.
import json
import sys
import time

import bpy
import numpy
from mathutils import Vector

# Blender 3.4's glTF importer still uses `numpy.bool`, which numpy 1.24 (Debian bookworm)
# removed; Blender 3.5 fixed it. Restore the alias for the importer.
if not hasattr(numpy, "bool"):
    numpy.bool = bool

folder = sys.argv[sys.argv.index("--") + 1]
report = json.load(open(f"{folder}/report.json"))
w, h = report["size"]["width"], report["size"]["height"]
cell = report["size"]["cell_size_m"]
lo, hi = report["height_range"]["min_m"], report["height_range"]["max_m"]
tol = 1e-3 * max(1.0, abs(lo), abs(hi))
out = {"engine": "Blender " + bpy.app.version_string}

bpy.ops.wm.read_factory_settings(use_empty=True)

# mesh.glb (glTF is Y up; Blender's importer turns it to Z up: rows run along -Y).
t0 = time.perf_counter()
bpy.ops.import_scene.gltf(filepath=f"{folder}/mesh.glb")
out["mesh_load_ms"] = (time.perf_counter() - t0) * 1e3
meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
pts = [o.matrix_world @ Vector(c) for o in meshes for c in o.bound_box]
if pts:
    mn = [min(p[i] for p in pts) for i in range(3)]
    mx = [max(p[i] for p in pts) for i in range(3)]
    size = [mx[i] - mn[i] for i in range(3)]
    out["mesh_size"] = size
    out["mesh_z"] = [mn[2], mx[2]]
    out["mesh_vertices"] = sum(len(o.data.vertices) for o in meshes)
    out["mesh_ok"] = (
        abs(size[0] - (w - 1) * cell) < 1e-3 * w * cell
        and abs(size[1] - (h - 1) * cell) < 1e-3 * h * cell
        and mn[2] >= lo - tol
        and mx[2] <= hi + tol
    )
else:
    out["mesh_ok"] = False

# The mesh's UVs span [0, 1] (Blender flips V) and its vertex colours lie in [0, 1], alpha 1,
# and differ over the map (sea and land: an importer that misreads them gives one colour).
uv_ok, color_ok = bool(meshes), bool(meshes)
for o in meshes:
    data = o.data
    if not data.uv_layers:
        uv_ok = False
    else:
        uv = numpy.empty(2 * len(data.loops), dtype=numpy.float32)
        data.uv_layers[0].data.foreach_get("uv", uv)
        out["mesh_uv_range"] = [float(uv.min()), float(uv.max())]
        uv_ok = uv_ok and bool(abs(uv.min()) < 1e-4 and abs(uv.max() - 1) < 1e-4)
    attrs = getattr(data, "color_attributes", None) or getattr(data, "vertex_colors", None)
    if not attrs:
        color_ok = False
    else:
        layer = attrs[0]
        rgba = numpy.empty(4 * len(layer.data), dtype=numpy.float32)
        layer.data.foreach_get("color", rgba)
        rgba = rgba.reshape(-1, 4)
        rgb, alpha = rgba[:, :3], rgba[:, 3]
        out["mesh_color_range"] = [float(rgb.min()), float(rgb.max())]
        out["mesh_color_alpha"] = [float(alpha.min()), float(alpha.max())]
        color_ok = color_ok and bool(
            rgb.min() >= 0 and rgb.max() <= 1 and rgb.max() - rgb.min() > 0.1 and alpha.min() > 0.999
        )
out["mesh_uv_ok"] = uv_ok
out["mesh_color_ok"] = color_ok

# height.exr: a grid of w x h vertices displaced by the pixel heights (metres).
t0 = time.perf_counter()
img = bpy.data.images.load(f"{folder}/height.exr")
iw, ih = img.size
px = img.pixels[:]  # RGBA floats, bottom row first
ch = img.channels
heights = [px[((ih - 1 - y) * iw + x) * ch] for y in range(ih) for x in range(iw)]
verts = [(x * cell, -y * cell, heights[y * iw + x]) for y in range(ih) for x in range(iw)]
faces = [
    (y * iw + x, y * iw + x + 1, (y + 1) * iw + x + 1, (y + 1) * iw + x) for y in range(ih - 1) for x in range(iw - 1)
]
mesh = bpy.data.meshes.new("height")
mesh.from_pydata(verts, [], faces)
mesh.update()
obj = bpy.data.objects.new("height", mesh)
bpy.context.scene.collection.objects.link(obj)
out["heightmap_load_ms"] = (time.perf_counter() - t0) * 1e3
zs = [v.co.z for v in mesh.vertices]
out["heightmap_size"] = [iw, ih]
out["heightmap_range"] = [min(zs), max(zs)]
# Every pixel against the same cell of height.r16 (16-bit, [0, 1] of the range, row 0 first):
# at most half the 16-bit quantum apart, plus rounding, when the EXR's samples decode right.
with open(f"{folder}/height.r16", "rb") as f:
    r16 = numpy.frombuffer(f.read(), dtype="<u2").astype(numpy.float64)
same_size = iw == w and ih == h and r16.size == w * h
diff = float(numpy.abs(numpy.array(heights) - (lo + r16 / 65535.0 * (hi - lo))).max()) if same_size else None
out["exr_r16_max_diff_m"] = diff
out["heightmap_ok"] = (
    same_size
    and abs(min(zs) - lo) <= tol
    and abs(max(zs) - hi) <= tol
    and diff <= (hi - lo) / 65535.0 + 1e-6 * max(1.0, abs(lo), abs(hi))
)
print("RESULT " + json.dumps(out))
