#!/usr/bin/env bash
# Kill safety (issue 15 part 3): SIGKILLs `terrasynth generate`, `terrasynth tiles` and the
# editor's project save (`recipe::project::save_project`, driven by the example
# crates/terrasynth/examples/project_save_loop.rs) at random moments, then checks that every
# file present is either the previous good version or a complete new one (byte-compared with
# reference runs; report.json, whose timings differ per run, must parse and name the right
# seed), never partial, and that a rerun of `tiles` completes the set. Also checks Ctrl-C
# (SIGINT) on a long `generate`: it stops, exits 130 and leaves no file.
#
# usage: scripts/kill-test.sh [TRIALS]     (default 50 per command; CI uses fewer)
# Hidden temporary files of a killed write (`.<name>.tmp-<pid>-<n>`, `.x<i>_y<j>.partial/`)
# are counted and reported: they are never taken for outputs, and the next run removes them.
set -euo pipefail
cd "$(dirname "$0")/.."
trials=${1:-50}

cargo build -q -p terrasynth-cli
cargo build -q -p terrasynth --example project_save_loop
bin=$(pwd)/target/debug/terrasynth
saver=$(pwd)/target/debug/examples/project_save_loop
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Whether process $1 still runs (a finished, unreaped one is a zombie, state Z).
running() { local s; s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) && [ "$s" != Z ]; }

# $2 random delays in [0, $1) milliseconds, as seconds for sleep, one a line. Drawn before the
# trials: a python3 start between the spawn and the sleep would add tens of ms to each delay.
rand_delays() { python3 -c "import random; print('\n'.join(str(random.uniform(0, $1) / 1000) for _ in range($2)))"; }

# Same content (report.json: parses and has the seed) as one of the reference folders.
check_generate_dir() { # dir old_ref new_ref new_seed -> prints "ok N_old N_new N_tmp" or fails
  python3 - "$@" <<'PY'
import json, os, sys
d, old, new, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
n_old = n_new = n_tmp = 0
for f in sorted(os.listdir(d)):
    p = os.path.join(d, f)
    if f.startswith('.') and '.tmp-' in f:
        n_tmp += 1
        continue
    data = open(p, 'rb').read()
    if f == 'report.json':
        r = json.loads(data)  # a partial report would not parse
        if r['recipe']['seed'] not in (seed, seed + 1):
            sys.exit(f'report.json names seed {r["recipe"]["seed"]}')
        continue
    o = os.path.join(old, f); n = os.path.join(new, f)
    if os.path.exists(n) and data == open(n, 'rb').read():
        n_new += 1
    elif os.path.exists(o) and data == open(o, 'rb').read():
        n_old += 1
    else:
        sys.exit(f'{f}: neither the previous nor the new version ({len(data)} bytes)')
print('ok', n_old, n_new, n_tmp)
PY
}

echo "kill-test: $trials trials each (generate, tiles, project save)" >&2

# --- generate -------------------------------------------------------------------------------
gen() { "$bin" generate --quiet --preset eroded-island --size 129 --threads 2 --seed "$1" --out "$2"; }
t0=$(date +%s%N)
gen 8 "$work/new" >/dev/null
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
gen 9 "$work/old" >/dev/null
g_old=0; g_new=0; g_tmp=0; g_landed=0
mapfile -t delays < <(rand_delays $((ms * 12 / 10)) "$trials")
for i in $(seq "$trials"); do
  d="$work/g"; rm -rf "$d"; cp -r "$work/old" "$d"
  # Not through `gen`: a backgrounded function is a subshell, and SIGKILL would miss the binary.
  "$bin" generate --quiet --preset eroded-island --size 129 --threads 2 --seed 8 --out "$d" >/dev/null 2>&1 &
  pid=$!
  sleep "${delays[i - 1]}"
  running "$pid" && kill -KILL "$pid" 2>/dev/null && g_landed=$((g_landed + 1))
  wait "$pid" 2>/dev/null || true
  read -r _ o n t < <(check_generate_dir "$d" "$work/old" "$work/new" 8) || { echo "generate trial $i FAILED" >&2; exit 1; }
  g_old=$((g_old + o)); g_new=$((g_new + n)); g_tmp=$((g_tmp + t))
done
# A rerun over a killed folder: complete, and the stale temp files are gone.
gen 8 "$d" >/dev/null
left=$(find "$d" -name '.*.tmp-*' | wc -l)
read -r _ o n t < <(check_generate_dir "$d" "$work/old" "$work/new" 8)
[ "$o" = 0 ] && [ "$left" = 0 ] || { echo "generate rerun left $o old files, $left temp files" >&2; exit 1; }
echo "generate: $trials kills ($g_landed while it ran) over ${ms} ms runs: every file old or new ($g_old old, $g_new new, $g_tmp hidden temp files of the killed writes); rerun complete, temps removed"

# --- tiles ------------------------------------------------------------------------------------
# Big enough that a run lasts well over the process start (3x2 tiles of 129² took 88 ms and
# no kill landed while tiles ran): 12 tiles of 257².
tiles() { "$bin" tiles --quiet --preset world --tiles 4x3 --tile 257 --threads 2 --out "$1"; }
t0=$(date +%s%N)
tiles "$work/tref" >/dev/null
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
strip() { python3 -c "
import json,sys
def s(o):
    if isinstance(o,dict): return {k:s(v) for k,v in o.items() if k not in ('run','timings') and 'seconds' not in k and 'peak' not in k}
    if isinstance(o,list): return [s(v) for v in o]
    return o
print(json.dumps(s(json.load(open(sys.argv[1]))),sort_keys=True))" "$1"; }
check_tiles_dir() { # every file of a complete tile and world.json equals the reference
  local d=$1 bad=0
  [ ! -e "$d/world.json" ] || cmp -s "$d/world.json" "$work/tref/world.json" || { echo "world.json differs" >&2; return 1; }
  for t in "$d"/x*_y*; do
    [ -d "$t" ] || continue
    [ -f "$t/report.json" ] || { echo "$t: tile folder without report.json" >&2; return 1; }
    for f in "$t"/*; do
      r="$work/tref/$(basename "$t")/$(basename "$f")"
      if [ "$(basename "$f")" = report.json ]; then
        [ "$(strip "$f")" = "$(strip "$r")" ] || { echo "$f differs" >&2; return 1; }
      else
        cmp -s "$f" "$r" || { echo "$f differs from the reference" >&2; bad=1; }
      fi
    done
  done
  return $bad
}
k_tiles=0; k_partial=0; t_landed=0
mapfile -t delays < <(rand_delays $((ms * 12 / 10)) "$trials")
for i in $(seq "$trials"); do
  d="$work/t"; rm -rf "$d"
  "$bin" tiles --quiet --preset world --tiles 4x3 --tile 257 --threads 2 --out "$d" >/dev/null 2>&1 &
  pid=$!
  sleep "${delays[i - 1]}"
  running "$pid" && kill -KILL "$pid" 2>/dev/null && t_landed=$((t_landed + 1))
  wait "$pid" 2>/dev/null || true
  check_tiles_dir "$d" || { echo "tiles trial $i FAILED" >&2; exit 1; }
  k_tiles=$((k_tiles + $(find "$d" -maxdepth 1 -name 'x*_y*' -type d 2>/dev/null | wc -l)))
  k_partial=$((k_partial + $(find "$d" -maxdepth 1 -name '.x*.partial' 2>/dev/null | wc -l)))
  # The rerun completes the set.
  tiles "$d" >/dev/null
  check_tiles_dir "$d"
  [ "$(find "$d" -maxdepth 1 -name 'x*_y*' -type d | wc -l)" = 12 ] || { echo "tiles rerun $i incomplete" >&2; exit 1; }
  [ -z "$(find "$d" -maxdepth 1 -name '.x*.partial')" ] || { echo "tiles rerun $i left partial tiles" >&2; exit 1; }
done
echo "tiles: $trials kills ($t_landed while it ran) over ${ms} ms runs: $k_tiles complete tiles kept (all equal to the reference), $k_partial partial tile folders (hidden, removed by the rerun); every rerun completed the 12 tiles"

# --- project save (the editor's Save and recovery file) -------------------------------------
p="$work/p.tsproj"
"$saver" save "$p" >/dev/null 2>&1 &
pid=$!; sleep 0.3; kill -KILL "$pid"; wait "$pid" 2>/dev/null || true
versions=""
mapfile -t delays < <(rand_delays 200 "$trials")
for i in $(seq "$trials"); do
  "$saver" save "$p" >/dev/null 2>&1 &
  pid=$!
  sleep "${delays[i - 1]}"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  k=$("$saver" check "$p") || { echo "project save trial $i FAILED" >&2; exit 1; }
  versions="$versions $k"
done
distinct=$(echo $versions | tr ' ' '\n' | sort -u | wc -l)
echo "project save: $trials kills: the file was always one complete saved version ($distinct distinct versions seen)"

# --- Ctrl-C on a long run -------------------------------------------------------------------
# 4097² (about 25 s in the dev profile, whose own crates are optimised): long enough that the
# signal lands inside the pipeline, before any file is written.
d="$work/int"
"$bin" generate --quiet --preset eroded-island --size 4097 --threads 2 --out "$d" >/dev/null 2>&1 &
pid=$!
sleep 2
running "$pid" || { echo "Ctrl-C: the run ended before the signal (make it longer)" >&2; exit 1; }
kill -INT "$pid"
set +e; wait "$pid"; code=$?; set -e
[ "$code" = 130 ] || { echo "Ctrl-C: exit code $code, 130 expected" >&2; exit 1; }
[ ! -e "$d" ] || [ -z "$(ls -A "$d")" ] || { echo "Ctrl-C left files: $(ls -A "$d")" >&2; exit 1; }
echo "Ctrl-C: a 4097² eroded-island run stopped with exit code 130 and no file"
echo "kill-test: all checks passed"
