# Run by scripts/engine-import.sh inside a Godot 3 project holding one terrasynth output folder
# (mesh.glb imported by the editor beforehand, height.r16, height.exr, report.json):
#   godot3-server --no-window --path PROJECT -s godot_check.gd
# Loads the mesh as a PackedScene and the heightmap into a HeightMapShape (collision), checks
# their size and height range against report.json, every EXR pixel against height.r16, and
# prints one JSON line starting `RESULT `.
extends SceneTree

func _mesh_aabb(node):
	var box = null
	if node is MeshInstance:
		box = node.get_transformed_aabb() if node.is_inside_tree() else node.transform.xform(node.get_aabb())
	for child in node.get_children():
		var b = _mesh_aabb(child)
		if b != null:
			box = b if box == null else box.merge(b)
	return box

func _init():
	var f = File.new()
	f.open("res://report.json", File.READ)
	var report = parse_json(f.get_as_text())
	f.close()
	var w = int(report["size"]["width"])
	var h = int(report["size"]["height"])
	var cell = float(report["size"]["cell_size_m"])
	var lo = float(report["height_range"]["min_m"])
	var hi = float(report["height_range"]["max_m"])
	var out = {"engine": "Godot " + Engine.get_version_info()["string"]}

	# mesh.glb: the editor imported it to a scene; load + instance is what a game does.
	var t0 = OS.get_ticks_usec()
	var scene = load("res://mesh.glb")
	var node = scene.instance() if scene != null else null
	out["mesh_load_ms"] = (OS.get_ticks_usec() - t0) / 1000.0
	var box = _mesh_aabb(node) if node != null else null
	if box == null:
		out["mesh_ok"] = false
	else:
		out["mesh_size"] = [box.size.x, box.size.y, box.size.z]
		out["mesh_y"] = [box.position.y, box.end.y]
		var tol = 1e-3 * max(1.0, max(abs(lo), abs(hi)))
		out["mesh_ok"] = abs(box.size.x - (w - 1) * cell) < 1e-3 * w * cell \
			and abs(box.size.z - (h - 1) * cell) < 1e-3 * h * cell \
			and box.position.y >= lo - tol and box.end.y <= hi + tol
		var verts = 0
		# UVs span [0, 1]; vertex colours lie in [0, 1], alpha 1, and differ over the map (sea
		# and land: an importer that misreads them gives one colour).
		var uv_lo = INF
		var uv_hi = -INF
		var c_lo = INF
		var c_hi = -INF
		var a_lo = INF
		var a_hi = -INF
		var has_uv = false
		var has_color = false
		for mi in node.get_children():
			if mi is MeshInstance:
				verts += mi.mesh.surface_get_array_len(0)
				var arrays = mi.mesh.surface_get_arrays(0)
				var uvs = arrays[Mesh.ARRAY_TEX_UV]
				var colors = arrays[Mesh.ARRAY_COLOR]
				if uvs != null and uvs.size() > 0:
					has_uv = true
					for t in uvs:
						uv_lo = min(uv_lo, min(t.x, t.y))
						uv_hi = max(uv_hi, max(t.x, t.y))
				if colors != null and colors.size() > 0:
					has_color = true
					for c in colors:
						c_lo = min(c_lo, min(c.r, min(c.g, c.b)))
						c_hi = max(c_hi, max(c.r, max(c.g, c.b)))
						a_lo = min(a_lo, c.a)
						a_hi = max(a_hi, c.a)
		out["mesh_vertices"] = verts
		out["mesh_uv_range"] = [uv_lo, uv_hi]
		out["mesh_color_range"] = [c_lo, c_hi]
		out["mesh_color_alpha"] = [a_lo, a_hi]
		out["mesh_uv_ok"] = has_uv and abs(uv_lo) < 1e-4 and abs(uv_hi - 1) < 1e-4
		out["mesh_color_ok"] = has_color and c_lo >= 0 and c_hi <= 1 and c_hi - c_lo > 0.1 and a_lo > 0.999

	# height.r16 into a HeightMapShape (16-bit little-endian, row 0 first, [0, 1] of the range).
	t0 = OS.get_ticks_usec()
	var r16 = File.new()
	var heights = PoolRealArray()
	var ok16 = r16.open("res://height.r16", File.READ) == OK
	if ok16:
		var bytes = r16.get_buffer(r16.get_len())
		r16.close()
		heights.resize(w * h)
		var k = 0
		for i in range(w * h):
			heights[i] = lo + (bytes[k] | (bytes[k + 1] << 8)) / 65535.0 * (hi - lo)
			k += 2
	var shape = HeightMapShape.new()
	shape.map_width = w
	shape.map_depth = h
	shape.map_data = heights
	out["heightmap_load_ms"] = (OS.get_ticks_usec() - t0) / 1000.0
	var hmin = INF
	var hmax = -INF
	for v in shape.map_data:
		hmin = min(hmin, v)
		hmax = max(hmax, v)
	out["heightmap_size"] = [shape.map_width, shape.map_depth]
	out["heightmap_range"] = [hmin, hmax]
	var htol = (hi - lo) / 65535.0 + 1e-3
	out["heightmap_ok"] = ok16 and shape.map_width == w and shape.map_depth == h \
		and abs(hmin - lo) <= htol and abs(hmax - hi) <= htol

	# height.exr as an Image (metres, float): Godot's own EXR reader.
	t0 = OS.get_ticks_usec()
	var img = Image.new()
	var err = img.load("res://height.exr")
	out["exr_load_ms"] = (OS.get_ticks_usec() - t0) / 1000.0
	if err == OK:
		img.lock()
		var emin = INF
		var emax = -INF
		# Every pixel against the same cell of height.r16 (read above), to catch samples that
		# decode to the wrong place or value. Godot 3.2 keeps a float EXR channel as half
		# floats (FORMAT_RH): 0.126 m apart at 250 m, so the tolerance is the range check's.
		var diff = 0.0
		var same_size = ok16 and img.get_width() == w and img.get_height() == h
		for y in range(img.get_height()):
			for x in range(img.get_width()):
				var v = img.get_pixel(x, y).r
				emin = min(emin, v)
				emax = max(emax, v)
				if same_size:
					diff = max(diff, abs(v - heights[y * w + x]))
		img.unlock()
		out["exr_r16_max_diff_m"] = diff if same_size else null
		out["exr_format"] = img.get_format()
		out["exr_size"] = [img.get_width(), img.get_height()]
		out["exr_range"] = [emin, emax]
		var etol = 1e-3 * max(1.0, max(abs(lo), abs(hi)))
		out["exr_ok"] = same_size and abs(emin - lo) <= etol and abs(emax - hi) <= etol \
			and diff <= (hi - lo) / 65535.0 + etol
	else:
		out["exr_ok"] = false
		out["exr_error"] = err
	print("RESULT " + to_json(out))
	quit()
