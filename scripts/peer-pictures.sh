#!/usr/bin/env bash
# The README's side-by-side pictures (issue 13): our realistic presets beside terrain-generator
# 0.3.1's default pipeline, same seed, about the same size (1025² against its 1024²; the tiles
# are cropped to 1024² and box-filtered down by FACTOR). Installs terrain-generator into
# target/peers with `cargo install --locked` when missing (as scripts/realism-bench.sh does).
# Usage: scripts/peer-pictures.sh [seed] [factor] [out.png]
#        (defaults 5, 3, docs/images/compare-terrain-generator.png)
set -euo pipefail
cd "$(dirname "$0")/.."
SEED=${1:-5}
FACTOR=${2:-3}
OUT_PNG=${3:-docs/images/compare-terrain-generator.png}
DIR="$PWD/target/peer-pictures"
PEER=target/peers/bin/terrain-generator
if [ ! -x "$PEER" ]; then
  echo "[peer-pictures] installing terrain-generator 0.3.1 into target/peers" >&2
  cargo install terrain-generator --version 0.3.1 --locked --root target/peers
fi
cargo build -q -p terrasynth-cli
rm -rf "$DIR" && mkdir -p "$DIR"
"$PEER" -W 1024 -H 1024 -s "$SEED" -o "$DIR/peer" > /dev/null
TILES=("terrain-generator=$DIR/peer/map$SEED.png")
for p in rivers highlands eroded-island; do
  target/debug/terrasynth generate --quiet --preset "$p" --size 1025 --seed "$SEED" --out "$DIR/$p"
  TILES+=("$p=$DIR/$p/shaded.png")
done
cargo run -q -p terrasynth --example side_by_side -- "$OUT_PNG" "$FACTOR" "${TILES[@]}"
