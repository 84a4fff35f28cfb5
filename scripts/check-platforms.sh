#!/usr/bin/env bash
# The same bytes on every platform (issue 11 part 6): builds crates/terrasynth-platform-check
# (every noise kind × fractal over a fixed region and a far cell window, the detmath functions
# over fixed sweeps, a world window of a small world recipe, single maps of five presets and of
# one recipe with the products their output files are written from; each reduced to its
# SHA-256) and
# compares its report between
#   - x86-64 through every SIMD level this CPU has (TERRASYNTH_SIMD=scalar, avx2, avx512),
#   - wasm32-unknown-unknown, run under Node (a tiny loader below),
#   - aarch64-unknown-linux-gnu, cross-linked with Debian's gcc-aarch64-linux-gnu and run under
#     qemu-user (qemu-aarch64 -L /usr/aarch64-linux-gnu).
# Installs what it needs (rustup targets; apt packages, with sudo when not root; node).
# Exits non-zero on any difference and prints the differing lines.
#
# usage: scripts/check-platforms.sh [--no-aarch64] [--no-wasm] [--keep DIR]
#   CI runs `scripts/check-platforms.sh --no-aarch64` (scalar vs AVX2, and wasm32).
set -euo pipefail

cd "$(dirname "$0")/.."
aarch64=1
wasm=1
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --no-aarch64) aarch64=0 ;;
        --no-wasm) wasm=0 ;;
        --keep) out="$2"; shift ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "check-platforms: unknown argument '$1' (allowed: --no-aarch64, --no-wasm, --keep DIR)" >&2; exit 2 ;;
    esac
    shift
done
[ -n "$out" ] || out=$(mktemp -d)
mkdir -p "$out"
crate=terrasynth-platform-check
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_install() {
    local missing=()
    for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing ${missing[*]} (apt)"
        sudo_if_needed apt-get update -qq
        sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
    fi
}
rust_target() {
    rustup target list --installed | grep -qx "$1" || rustup target add "$1"
}

# --- x86-64 (or whatever the host is): every SIMD level this CPU has --------------------
echo "== host: building $crate"
cargo build --quiet -p "$crate" --bin "$crate"
host_bin="$target_dir/debug/$crate"
levels=(scalar)
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then levels+=(avx2); fi
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then levels+=(avx512); fi
for level in "${levels[@]}"; do
    echo "== host: TERRASYNTH_SIMD=$level"
    TERRASYNTH_SIMD=$level "$host_bin" > "$out/host-$level.txt"
done
reference="$out/host-scalar.txt"
reports=()
for level in "${levels[@]}"; do reports+=("$out/host-$level.txt"); done

# --- wasm32-unknown-unknown under Node --------------------------------------------------
if [ "$wasm" = 1 ]; then
    rust_target wasm32-unknown-unknown
    command -v node >/dev/null || apt_install nodejs
    echo "== wasm32: building $crate (cdylib; rayon runs on the one thread)"
    cargo build --quiet -p "$crate" --lib --target wasm32-unknown-unknown
    wasm_file="$target_dir/wasm32-unknown-unknown/debug/${crate//-/_}.wasm"
    cat > "$out/load.mjs" <<'JS'
// Instantiates the platform check (no imports), runs it, prints its report.
import { readFileSync } from "node:fs";
const { instance } = await WebAssembly.instantiate(readFileSync(process.argv[2]), {});
const len = instance.exports.check_run();
const ptr = instance.exports.check_ptr();
process.stdout.write(new TextDecoder().decode(new Uint8Array(instance.exports.memory.buffer, ptr, len)));
JS
    echo "== wasm32: node"
    node "$out/load.mjs" "$wasm_file" > "$out/wasm32.txt"
    reports+=("$out/wasm32.txt")
fi

# --- aarch64-unknown-linux-gnu under qemu-user ------------------------------------------
if [ "$aarch64" = 1 ]; then
    rust_target aarch64-unknown-linux-gnu
    apt_install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
    echo "== aarch64: cross-building $crate"
    # No debug info for the cross build: a quarter of the disk and faster.
    CARGO_PROFILE_DEV_DEBUG=0 CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc \
        cargo build --quiet -p "$crate" --bin "$crate" --target aarch64-unknown-linux-gnu
    echo "== aarch64: qemu-aarch64"
    qemu-aarch64 -L /usr/aarch64-linux-gnu "$target_dir/aarch64-unknown-linux-gnu/debug/$crate" > "$out/aarch64.txt"
    reports+=("$out/aarch64.txt")
fi

# --- compare ------------------------------------------------------------------------------
status=0
lines=$(wc -l < "$reference")
if [ "$lines" -lt 40 ] || grep -q "error:" "$reference"; then
    echo "check-platforms: the reference report is incomplete ($lines lines) or holds errors:" >&2
    grep "error:" "$reference" >&2 || true
    status=1
fi
for r in "${reports[@]}"; do
    [ "$r" = "$reference" ] && continue
    name=$(basename "$r" .txt)
    ref="$reference"
    # A platform that cannot run the world window says why (wasm32 today): compare the rest.
    if grep -q '^world-window skipped' "$r"; then
        echo "note: $name: $(grep '^world-window skipped' "$r" | sed 's/^world-window //')"
        ref="$out/reference-without-world.txt"
        grep -v '^world-window ' "$reference" > "$ref"
        grep -v '^world-window ' "$r" > "$r.compared"
        r="$r.compared"
    fi
    if cmp -s "$ref" "$r"; then
        echo "same bytes: $name = host-scalar ($(wc -l < "$r") outputs)"
    else
        echo "DIFFERENT: $name vs host-scalar:"
        diff "$ref" "$r" | grep '^[<>]' | sed 's/^/    /' || true
        status=1
    fi
done
echo "reports in $out"
exit $status
