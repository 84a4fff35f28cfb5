#!/usr/bin/env bash
# Frame rate of the real terrasynth-gui window without a GPU: Xvfb + Mesa lavapipe (software
# Vulkan), the mouse driven by xdotool. Two drags on a SIZE² map (default 1025): a 2D pan
# (shaded view, Inspect tool) and a 3D orbit. The app appends the time of every frame it draws
# to $TERRASYNTH_FRAME_LOG; the script counts the frames between mouse-down and mouse-up.
# Targets (issue 10): 2D pan >= 20 fps, 3D orbit >= 15 fps.
# Needs what scripts/gui-screenshots.sh needs (Xvfb, xdotool, mesa-vulkan-drivers, ...).
# Usage: scripts/gui-fps.sh [path/to/terrasynth-gui]   (default: target/release/terrasynth-gui)
#        SIZE=2049 STEPS=150 scripts/gui-fps.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-${CARGO_TARGET_DIR:-target}/release/terrasynth-gui}
SIZE=${SIZE:-1025}
STEPS=${STEPS:-150}          # mouse moves per drag, one every 10 ms (the event rate caps the fps at ~100)
WAIT=${WAIT:-20}             # seconds for the window, the full map and the water layers
for tool in Xvfb xdotool; do
  command -v "$tool" >/dev/null || { echo "needs $tool (see scripts/gui-screenshots.sh)" >&2; exit 1; }
done
[ -x "$BIN" ] || { echo "no $BIN: cargo build --release -p terrasynth-gui" >&2; exit 1; }
XDG_RUNTIME_DIR=$(mktemp -d)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
export XDG_STATE_HOME="$XDG_RUNTIME_DIR/state"
export DISPLAY=:78
LOG="$XDG_RUNTIME_DIR/frames.log"
Xvfb :78 -screen 0 1400x880x24 -nolisten tcp >/dev/null 2>&1 &
XVFB=$!
APP=
trap 'kill $APP $XVFB 2>/dev/null || true; wait $XVFB 2>/dev/null || true; rm -rf "$XDG_RUNTIME_DIR"' EXIT
sleep 1
CX=870; CY=440

start() {
  TERRASYNTH_FRAME_LOG="$LOG" "$BIN" --size "$SIZE" --no-help "$@" >/dev/null 2>&1 &
  APP=$!
  WIN=$(xdotool search --sync --name 'terrasynth$' | head -1)
  xdotool windowmove "$WIN" 0 0 windowsize "$WIN" 1400 880
  sleep "$WAIT"
}
stop() { kill "$APP" 2>/dev/null || true; wait "$APP" 2>/dev/null || true; APP=; }

# drag <label>: holds button 1 at the map centre and moves in a circle of 150 px for STEPS
# moves; prints frames, seconds, fps, median and longest frame interval.
drag() {
  xdotool mousemove $CX $CY
  sleep 1
  : > "$LOG"
  local t0 t1
  t0=$(date +%s.%N)
  # One xdotool process for the whole drag (its own sleeps between moves): a process per move
  # took about 10 % of the 2 cores away from the editor being measured.
  local moves
  moves=$(awk -v n="$STEPS" -v cx="$CX" -v cy="$CY" 'BEGIN {
    for (i = 1; i <= n; i++) { a = 6.2832 * i / n
      printf "mousemove %d %d sleep 0.01 ", cx + int(150 * sin(a)), cy + int(80 * (1 - cos(a))) } }')
  # shellcheck disable=SC2086
  xdotool mousedown 1 $moves mouseup 1
  t1=$(date +%s.%N)
  sleep 1
  awk -v t0="$t0" -v t1="$t1" -v label="$1" -v size="$SIZE" '
    $1 >= t0 && $1 <= t1 { t[n++] = $1 }
    END {
      if (n < 2) { printf "%s %s²: %d frames\n", label, size, n; exit }
      for (k = 1; k < n; k++) g[k - 1] = t[k] - t[k - 1]
      m = n - 1
      for (a = 0; a < m; a++) for (b = a + 1; b < m; b++) if (g[b] < g[a]) { x = g[a]; g[a] = g[b]; g[b] = x }
      printf "%-9s %s²: %3d frames in %.2f s = %5.1f fps (frame interval median %.0f ms, longest %.0f ms, first frame after %.0f ms)\n",
        label, size, n, t1 - t0, n / (t1 - t0), 1000 * g[int(m / 2)], 1000 * g[m - 1], 1000 * (t[0] - t0)
    }' "$LOG"
}

start --view shaded
drag "2D pan"
stop
start --3d
drag "3D orbit"
stop
