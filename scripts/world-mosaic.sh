#!/usr/bin/env bash
# The README's world mosaic: a C×C tile set of a world (`terrasynth tiles`), the tiles'
# shaded.png put side by side (each tile's shared last row/column dropped, the set's last kept),
# so any seam between tiles would show. Python standard library only (zlib PNG read/write).
#
# usage: scripts/world-mosaic.sh [PRESET=world] [TILES=4] [TILE=257] [OUT=docs/images/world-mosaic.png] [ORIGIN=0,0]
set -euo pipefail
cd "$(dirname "$0")/.."
PRESET="${1:-world}"
TILES="${2:-4}"
TILE="${3:-257}"
PNG="${4:-docs/images/world-mosaic.png}"
ORIGIN="${5:-0,0}"
BIN=target/debug/terrasynth
[ -x "$BIN" ] || cargo build -q -p terrasynth-cli
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
if [ -f "$PRESET" ]; then src=(--recipe "$PRESET"); else src=(--preset "$PRESET"); fi
"$BIN" tiles "${src[@]}" --origin "$ORIGIN" --tiles "${TILES}x${TILES}" --tile "$TILE" --quiet --out "$DIR/set"
python3 - "$DIR/set" "$TILES" "$TILE" "$PNG" <<'PY'
import struct, sys, zlib

def read_rgb(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert (depth, color, interlace) == (8, 2, 0), f"{path}: not 8-bit RGB"
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, bpp, stride = zlib.decompress(idat), 3, w * 3
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + b) & 255
            elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, rows

def write_rgb(path, w, rows):
    chunk = lambda k, b: struct.pack(">I", len(b)) + k + b + struct.pack(">I", zlib.crc32(k + b))
    raw = b"".join(b"\x00" + r for r in rows)
    ihdr = struct.pack(">IIBBBBB", w, len(rows), 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(png)

root, c, n, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
side = c * (n - 1) + 1
rows = [bytearray(side * 3) for _ in range(side)]
for j in range(c):
    for i in range(c):
        w, tile = read_rgb(f"{root}/x{i}_y{j}/shaded.png")
        assert w == n
        keep = n if (i == c - 1) else n - 1
        for y in range(n if j == c - 1 else n - 1):
            rows[j * (n - 1) + y][i * (n - 1) * 3:(i * (n - 1) + keep) * 3] = tile[y][:keep * 3]
write_rgb(out, side, [bytes(r) for r in rows])
print(f"world-mosaic: {c}x{c} tiles of {n}² → {out} ({side}x{side})")
PY
