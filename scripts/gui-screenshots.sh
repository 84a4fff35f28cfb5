#!/usr/bin/env bash
# Screenshots of the real terrasynth-gui window under Xvfb, into docs/screenshots/gui-*.png:
# start screen, 2D shaded view with rivers, 3D view, terraform mode (after a stroke), a typed
# out-of-range size with its error under the field, the rivers preset's shaded view (its
# rivers and lakes drawn as shaded.png has them).
# The editor draws with wgpu; under Xvfb that is Mesa's lavapipe (software Vulkan).
# Needs (apt): xvfb xauth imagemagick xdotool mesa-vulkan-drivers libvulkan1 libgl1-mesa-dri
#              libglx-mesa0 libegl1 libegl-mesa0 libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6
#              libx11-xcb1
# Usage: scripts/gui-screenshots.sh [path/to/terrasynth-gui]
#        (default: $CARGO_TARGET_DIR or target, release build)
set -euo pipefail
cd "$(dirname "$0")/.."
# Install what is missing (as root on apt systems).
if ! command -v Xvfb >/dev/null || ! command -v xdotool >/dev/null || ! command -v import >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq
    apt-get install -y -qq xvfb xauth imagemagick xdotool mesa-vulkan-drivers libvulkan1 libgl1-mesa-dri \
      libglx-mesa0 libegl1 libegl-mesa0 libxkbcommon-x11-0 libxcursor1 libxrandr2 libxi6 libx11-xcb1
  else
    echo "needs Xvfb, xdotool and imagemagick (see the list above)" >&2
    exit 1
  fi
fi
BIN=${1:-${CARGO_TARGET_DIR:-target}/release/terrasynth-gui}
OUT=docs/screenshots
WAIT=${WAIT:-10}
mkdir -p "$OUT"
XDG_RUNTIME_DIR=$(mktemp -d)
export XDG_RUNTIME_DIR
chmod 700 "$XDG_RUNTIME_DIR"
export XDG_STATE_HOME="$XDG_RUNTIME_DIR/state"   # keep the recovery file out of $HOME
export DISPLAY=:77
Xvfb :77 -screen 0 1400x880x24 -nolisten tcp >/dev/null 2>&1 &
XVFB=$!
APP=
trap 'kill $APP $XVFB 2>/dev/null || true' EXIT
sleep 1

# start <name> <args...>: runs the app, waits for its window and the full map.
start() {
  "$BIN" "$@" >/dev/null 2>&1 &
  APP=$!
  # The title is "<file> — terrasynth" ("untitled — terrasynth" for a new project).
  WIN=$(xdotool search --sync --name 'terrasynth$' | head -1)
  xdotool windowmove "$WIN" 0 0 windowsize "$WIN" 1400 880
  sleep "$WAIT"
}
stop() { kill "$APP" 2>/dev/null || true; wait "$APP" 2>/dev/null || true; APP=; }
shot() { import -window root "$OUT/gui-$1.png"; echo "wrote $OUT/gui-$1.png"; }

# The map sits in the central panel; with --no-help it is centred near (870, 440).
CX=870; CY=440

start
shot start
stop

start --tool river --view shaded --no-help
for p in "-60 -40" "90 20" "-20 110" "40 -130" "150 -60"; do
  set -- $p
  xdotool mousemove $((CX + $1)) $((CY + $2)) click 1
  sleep 1
done
xdotool mousemove 1380 860
sleep 4
shot 2d-rivers
stop

start --3d --no-help
shot 3d
stop

start --tool terraform --view shaded --no-help
# Four strokes along the same path (each one undo step), so the raised ridge is visible.
for pass in 1 2 3 4; do
  xdotool mousemove $((CX - 150)) $((CY + 60)) mousedown 1
  for i in $(seq 1 30); do xdotool mousemove $((CX - 150 + i * 10)) $((CY + 60 - i * 3)); sleep 0.05; done
  xdotool mouseup 1
  sleep 1
done
xdotool mousemove $((CX + 40)) $((CY - 120))
sleep 2
shot terraform
stop

# A size typed out of range: not applied, the library's error under the field (no window).
start --tool inspect
# Without a window manager the keyboard goes to the window only once it is focused.
xdotool windowfocus --sync "$WIN"
xdotool mousemove 68 106 click 1
sleep 0.5
xdotool key ctrl+a
xdotool type --delay 150 "0"
xdotool key Return
sleep 2
shot field-error
stop

# The rivers preset: the shaded view draws its rivers and lakes (as the exported shaded.png).
start --preset rivers --view shaded --no-help
sleep "$WAIT"
shot rivers-preset
stop
