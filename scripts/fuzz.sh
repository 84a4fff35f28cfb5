#!/usr/bin/env bash
# Fuzzes terrasynth's parsers and importers with cargo-fuzz (libFuzzer) on the nightly toolchain
# (issue 15 part 1). The targets live in fuzz/fuzz_targets/, their entry functions in
# fuzz/src/entries.rs (the stable test crates/terrasynth/tests/fuzz_corpus.rs replays the
# committed corpus through the same functions, so CI needs no nightly).
#
# usage: scripts/fuzz.sh [--install-only] [SECONDS_PER_TARGET] [TARGET...]
#   SECONDS_PER_TARGET  libFuzzer -max_total_time per target (default 60)
#   TARGET              targets to run (default: every target in fuzz/fuzz_targets)
# Environment: FUZZ_JOBS (default 1), FUZZ_NICE (default 19), FUZZ_LOG_DIR (default
# fuzz/logs), FUZZ_RSS_MB (libFuzzer -rss_limit_mb, default 2048), FUZZ_MERGE=1 to minimise the
# corpus into fuzz/corpus/<target> after the run (cargo fuzz cmin).
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

secs=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(ls fuzz/fuzz_targets | sed 's/\.rs$//' | sort)
fi
logs=${FUZZ_LOG_DIR:-fuzz/logs}
mkdir -p "$logs"
nice_level=${FUZZ_NICE:-19}

# The fuzz crate has its own target dir (fuzz/target), apart from the workspace's.
nice -n "$nice_level" cargo +nightly fuzz build --fuzz-dir fuzz

status=0
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus-new/$t" "fuzz/corpus/$t" "fuzz/artifacts/$t"
  log="$logs/$t.log"
  echo "fuzz: $t for ${secs}s" >&2
  if ! nice -n "$nice_level" cargo +nightly fuzz run --fuzz-dir fuzz "$t" \
      "fuzz/corpus-new/$t" "fuzz/corpus/$t" -- \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb="${FUZZ_RSS_MB:-2048}" \
      -malloc_limit_mb="${FUZZ_RSS_MB:-2048}" -jobs="${FUZZ_JOBS:-1}" -workers="${FUZZ_JOBS:-1}" \
      -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1; then
    echo "fuzz: $t FAILED (see $log and fuzz/artifacts/$t)" >&2
    status=1
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    tmp=$(mktemp -d)
    nice -n "$nice_level" cargo +nightly fuzz run --fuzz-dir fuzz "$t" "$tmp" "fuzz/corpus/$t" \
      "fuzz/corpus-new/$t" -- -merge=1 >/dev/null 2>&1 || true
    rm -rf "fuzz/corpus/$t" && mv "$tmp" "fuzz/corpus/$t"
  fi
done

echo "fuzz: summary (last status line of each run)" >&2
for t in "${targets[@]}"; do
  line=$(grep -E '^#[0-9]+' "$logs/$t.log" | tail -1 || true)
  echo "$t: ${line:-no status line}"
done
exit $status
