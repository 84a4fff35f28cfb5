#!/usr/bin/env bash
# Real engine/DCC import, measured (issue 14 §7; seed 000's "loading time in an engine").
# Installs Debian's headless Godot 3 (godot3-server) and Blender, writes one preset with
# `terrasynth generate`, then:
#   Godot 3.2: the editor imports mesh.glb (its glTF importer, timed until the imported scene is
#     on disk), then a game script loads the imported scene, loads height.r16 into a
#     HeightMapShape (collision) and height.exr into an Image (scripts/engine-import/godot_check.gd);
#   Blender 3.4: imports mesh.glb with its glTF add-on and builds a displaced grid from height.exr
#     (scripts/engine-import/blender_check.py).
# Each checks width/height and the height range against report.json, that the imported mesh's
# UVs span [0, 1] and its vertex colours lie in [0, 1] with alpha 1 and are not all one colour
# (an importer that misreads an attribute's encoding fails this), that every pixel of
# height.exr matches the same cell of height.r16 (a misdecoded EXR fails this), and reports
# load times. Exit 1 if any check fails (CI runs it at 257²).
# Usage: scripts/engine-import.sh [preset] [size]   (default: rivers 1025)
# TERRASYNTH=path/to/terrasynth picks the binary (default: target/release, else target/debug).
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET=${1:-rivers}
SIZE=${2:-1025}
BIN=${TERRASYNTH:-}
if [ -z "$BIN" ]; then
  for b in target/release/terrasynth target/debug/terrasynth; do [ -x "$b" ] && BIN=$b && break; done
fi
[ -n "$BIN" ] || { cargo build -q --release -p terrasynth-cli; BIN=target/release/terrasynth; }
need=()
command -v godot3-server >/dev/null || need+=(godot3-server)
command -v blender >/dev/null || need+=(blender)
# Blender's glTF add-on needs numpy in Debian's python.
python3 -c 'import numpy' 2>/dev/null || [ -d /usr/lib/python3/dist-packages/numpy ] || need+=(python3-numpy)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT="$WORK/out"
"$BIN" generate --quiet --preset "$PRESET" --size "$SIZE" --out "$OUT"
ls -l "$OUT/mesh.glb" "$OUT/height.r16" "$OUT/height.exr" | awk '{print "  " $5 " bytes  " $NF}'

# --- Godot: editor import, then the game-side load ---------------------------------------
PROJ="$WORK/godot"
mkdir -p "$PROJ"
cp "$OUT"/{mesh.glb,height.r16,height.exr,report.json} "$PROJ/"
cp scripts/engine-import/godot_check.gd "$PROJ/"
printf 'config_version=4\n\n[application]\n\nconfig/name="terrasynth-import"\n' >"$PROJ/project.godot"
# Godot 3.2's `--editor --quit` does not quit on a headless server build: start the editor,
# wait for the imported scene and its checksum, then stop that editor (by its pid).
start=$(date +%s.%N)
godot3-server --no-window --path "$PROJ" --editor >"$WORK/godot-import.log" 2>&1 &
gpid=$!
for _ in $(seq 1 1200); do
  if ls "$PROJ"/.import/mesh.glb-*.md5 >/dev/null 2>&1 && ls "$PROJ"/.import/height.exr-*.md5 >/dev/null 2>&1; then break; fi
  sleep 0.1
done
end=$(date +%s.%N)
kill "$gpid" 2>/dev/null || true
wait "$gpid" 2>/dev/null || true
ls "$PROJ"/.import/mesh.glb-*.scn >/dev/null 2>&1 || { echo "Godot did not import mesh.glb"; tail -20 "$WORK/godot-import.log"; exit 1; }
GODOT_IMPORT_S=$(python3 -c "print(f'{$end - $start:.2f}')")
gstart=$(date +%s.%N)
GODOT=$(godot3-server --no-window --path "$PROJ" -s godot_check.gd 2>&1 | sed -n 's/^RESULT //p')
gend=$(date +%s.%N)
# --- Blender ------------------------------------------------------------------------------
bstart=$(date +%s.%N)
BLENDER=$(blender -b --factory-startup --python scripts/engine-import/blender_check.py -- "$OUT" 2>&1 | sed -n 's/^RESULT //p')
bend=$(date +%s.%N)
python3 - "$PRESET" "$SIZE" "$GODOT_IMPORT_S" "$gstart" "$gend" "$bstart" "$bend" "$GODOT" "$BLENDER" <<'PY'
import json, sys
preset, size, gimport, gs, ge, bs, be, godot, blender = sys.argv[1:]
g = json.loads(godot) if godot else {}
b = json.loads(blender) if blender else {}
ok = lambda d, k: "yes" if d.get(k) else "**NO**"
print(f"\nengine import of `{preset}` at {size}x{size} (scripts/engine-import.sh {preset} {size})\n")
print("| program | mesh.glb load | mesh size/range ok | UVs / colours ok | heightmap load | heightmap ok | whole process |")
print("|---|---:|:---:|:---:|---:|:---:|---:|")
print(f"| {g.get('engine', 'Godot (failed)')} editor import | {float(gimport)*1e3:.0f} ms | | | | | |")
print(f"| {g.get('engine', 'Godot (failed)')} game load | {g.get('mesh_load_ms', float('nan')):.1f} ms | {ok(g, 'mesh_ok')} "
      f"| {ok(g, 'mesh_uv_ok')} / {ok(g, 'mesh_color_ok')} "
      f"| r16 → HeightMapShape {g.get('heightmap_load_ms', float('nan')):.0f} ms; EXR → Image {g.get('exr_load_ms', float('nan')):.0f} ms "
      f"| {ok(g, 'heightmap_ok')} / {ok(g, 'exr_ok')} | {float(ge)-float(gs):.2f} s |")
print(f"| {b.get('engine', 'Blender (failed)')} | {b.get('mesh_load_ms', float('nan')):.0f} ms | {ok(b, 'mesh_ok')} "
      f"| {ok(b, 'mesh_uv_ok')} / {ok(b, 'mesh_color_ok')} "
      f"| EXR → displaced grid {b.get('heightmap_load_ms', float('nan')):.0f} ms | {ok(b, 'heightmap_ok')} | {float(be)-float(bs):.2f} s |")
print("\nGodot:", json.dumps(g))
print("Blender:", json.dumps(b))
checks = ["mesh_ok", "mesh_uv_ok", "mesh_color_ok", "heightmap_ok"]
sys.exit(0 if all(g.get(k) for k in checks + ["exr_ok"]) and all(b.get(k) for k in checks) else 1)
PY
