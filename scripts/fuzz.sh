#!/usr/bin/env bash
# Fuzzes terrasynth's parsers and importers with cargo-fuzz (libFuzzer) on the nightly toolchain
# (issue 15 part 1). The targets live in fuzz/fuzz_targets/, their entry functions in
# fuzz/src/entries.rs (the stable test crates/terrasynth/tests/fuzz_corpus.rs replays the
# committed corpus through the same functions, so CI needs no nightly).
#
# usage: scripts/fuzz.sh [--install-only] [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  libFuzzer -max_total_time per target (default 60)
#   TARGET              targets to run (default: every target in fuzz/fuzz_targets)
#        scripts/fuzz.sh --totals      (cumulative time and executions per target, from fuzz/RUNS.tsv)
#        scripts/fuzz.sh --cmin [TARGET...]   (minimise the committed corpus, keeping named files)
# Environment: FUZZ_JOBS (default 1), FUZZ_NICE (default 19), FUZZ_LOG_DIR (default
# fuzz/logs), FUZZ_RSS_MB (libFuzzer -rss_limit_mb, default 2048), FUZZ_MERGE=1 to merge, after each
# run, the new inputs that add coverage into fuzz/corpus/<target> (libFuzzer -merge=1, as
# cargo fuzz cmin; the committed files are kept), FUZZ_SANITIZER (default none: see fuzz/RUNS.md for why; address for ASan),
# FUZZ_RECORD=1 to append each run's figures to fuzz/RUNS.tsv (committed).
#
# Build: release (-O) with debug assertions (overflow checks, debug_assert!) and no sanitizer
# by default; `run` gets the same flags, or cargo fuzz would rebuild.
#
# Targets run one at a time, niced. New inputs go to fuzz/corpus-new/<target> (not
# committed); crashes to fuzz/artifacts/<target>. Each run's last libFuzzer status line
# (executions, coverage, features, corpus) is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: the nightly toolchain is missing: rustup toolchain install nightly" >&2
  exit 1
fi
if ! cargo fuzz --version >/dev/null 2>&1; then
  echo "fuzz: installing cargo-fuzz (crates.io)" >&2
  cargo install cargo-fuzz --locked
fi
[ "${1:-}" = "--install-only" ] && exit 0
if [ "${1:-}" = "--cmin" ]; then
  # Minimises fuzz/corpus/<target> (and fuzz/corpus-new/<target>) into the committed corpus:
  # the named files (seed-*, preset-*, regression-*) stay; of the others only a smallest set
  # that keeps every coverage feature (libFuzzer -set_cover_merge=1), named by SHA-1.
  shift
  targets=("$@")
  [ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(ls fuzz/fuzz_targets | sed 's/\.rs$//' | sort)
  for t in "${targets[@]}"; do
    out=$(mktemp -d)
    # The named files first: their coverage counts as already had.
    find "fuzz/corpus/$t" -maxdepth 1 -type f ! -regex '.*/[0-9a-f]\{40\}' -exec cp {} "$out/" \;
    mkdir -p "fuzz/corpus-new/$t"
    cargo +nightly fuzz run --fuzz-dir fuzz -O --debug-assertions -s "${FUZZ_SANITIZER:-none}" "$t" \
      "$out" "fuzz/corpus/$t" "fuzz/corpus-new/$t" -- -set_cover_merge=1 -timeout=10 \
      -rss_limit_mb="${FUZZ_RSS_MB:-2048}" >"fuzz/logs/$t.cmin.log" 2>&1 || { echo "cmin $t failed" >&2; exit 1; }
    rm -rf "fuzz/corpus/$t" && mv "$out" "fuzz/corpus/$t" && chmod 755 "fuzz/corpus/$t"
    echo "$t: $(ls "fuzz/corpus/$t" | wc -l) files, $(du -sk "fuzz/corpus/$t" | cut -f1) KiB"
  done
  exit 0
fi
if [ "${1:-}" = "--totals" ]; then
  # target  runs  seconds  executions  crashes  (cov, ft and corpus of the last run)  CPU
  # seconds (of the runs that recorded it: the first ones did not)
  awk -F'\t' 'NR > 1 { n[$2]++; s[$2] += $3; e[$2] += $4; c[$2] += $8; u[$2] += $9; last[$2] = $5 "\t" $6 "\t" $7 }
    END { print "target\truns\tseconds\texecutions\tcrashes\tcov\tft\tcorpus\tcpu_seconds";
          for (t in n) print t "\t" n[t] "\t" s[t] "\t" e[t] "\t" c[t] "\t" last[t] "\t" u[t] }' fuzz/RUNS.tsv |
    (read -r h; echo "$h"; sort)
  exit 0
fi

secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(ls fuzz/fuzz_targets | sed 's/\.rs$//' | sort)
fi
logs=${FUZZ_LOG_DIR:-fuzz/logs}
mkdir -p "$logs"
nice_level=${FUZZ_NICE:-19}
flags=(--fuzz-dir fuzz -O --debug-assertions -s "${FUZZ_SANITIZER:-none}")

# The fuzz crate has its own target dir (fuzz/target), apart from the workspace's.
nice -n "$nice_level" cargo +nightly fuzz build "${flags[@]}"

status=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus-new/$t" "fuzz/corpus/$t" "fuzz/artifacts/$t"
  log="$logs/$t.log"
  echo "fuzz: $t for ${secs}s" >&2
  crashes_before=$(find "fuzz/artifacts/$t" -type f | wc -l)
  # -jobs makes libFuzzer fork workers that log to fuzz-N.log in the current folder: only
  # when more than one job is asked for.
  jobs=()
  if [ "${FUZZ_JOBS:-1}" -gt 1 ]; then jobs=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS"); fi
  # CPU seconds (user + system) of the run, when /usr/bin/time is there: the wall seconds
  # overstate the work when the run shares the machine.
  timer=()
  if [ -x /usr/bin/time ]; then timer=(/usr/bin/time -f '%U %S' -o "$logs/$t.cpu"); fi
  if ! nice -n "$nice_level" "${timer[@]}" cargo +nightly fuzz run "${flags[@]}" "$t" \
      "fuzz/corpus-new/$t" "fuzz/corpus/$t" -- \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb="${FUZZ_RSS_MB:-2048}" -print_final_stats=1 \
      -malloc_limit_mb="${FUZZ_RSS_MB:-2048}" "${jobs[@]}" \
      -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1; then
    echo "fuzz: $t FAILED (see $log and fuzz/artifacts/$t)" >&2
    status=1
  fi
  if [ "${FUZZ_RECORD:-0}" = 1 ]; then
    # date, target, seconds run, executions, cov, ft, corpus units, new crash files, CPU seconds
    [ -f fuzz/RUNS.tsv ] || printf 'date\ttarget\tseconds\texecutions\tcov\tft\tcorpus\tcrashes\tcpu_seconds\n' >fuzz/RUNS.tsv
    last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    ran=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
    crashes=$(( $(find "fuzz/artifacts/$t" -type f | wc -l) - crashes_before ))
    # The last line: /usr/bin/time writes "Command exited with non-zero status N" before it.
    cpu=$(tail -n 1 "$logs/$t.cpu" 2>/dev/null | awk '{ printf "%.0f", $1 + $2 }' || true)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$t" "${ran:-$secs}" "${execs:-0}" \
      "${cov:-}" "${ft:-}" "${corp:-}" "$crashes" "${cpu:-}" >>fuzz/RUNS.tsv
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    # Into the committed corpus: its files (seeds, regression-*) stay as they are; of the new
    # inputs only a minimal set that adds coverage (features) is copied in, named by SHA-1.
    nice -n "$nice_level" cargo +nightly fuzz run "${flags[@]}" "$t" "fuzz/corpus/$t" \
      "fuzz/corpus-new/$t" -- -merge=1 -timeout=10 -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
      >"$logs/$t.merge.log" 2>&1 || { echo "fuzz: merging $t failed (see $logs/$t.merge.log)" >&2; status=1; }
  fi
done

echo "fuzz: summary (last status line of each run)" >&2
for t in "${targets[@]}"; do
  line=$(grep -E '^#[0-9]+' "$logs/$t.log" | tail -1 || true)
  echo "$t: ${line:-no status line}"
done
exit $status
