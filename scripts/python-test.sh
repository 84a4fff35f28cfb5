#!/usr/bin/env bash
# Builds the Python package from crates/terrasynth-py into a fresh venv and runs its pytest
# suite (crates/terrasynth-py/tests). Used by .ci/run; run it by hand the same way.
#
# - The venv is target/py-venv (recreated on every run, so the install is what a fresh machine
#   gets: `pip install ./crates/terrasynth-py`, maturin from the build requirements).
# - The wheel is built with cargo's `dev` profile by default (TERRASYNTH_PY_PROFILE=dev), which
#   reuses the artefacts `cargo test --workspace` already built; TERRASYNTH_PY_PROFILE=release
#   builds what a user's `pip install` builds.
# - The tests compare against the debug CLI (target/debug/terrasynth, built here if missing).
# - If `python3 -m venv` does not work (Debian without python3-venv), the Debian package is
#   installed when running as root with apt, as scripts/setup.sh does for Mesa.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
VENV=target/py-venv
PROFILE="${TERRASYNTH_PY_PROFILE:-dev}"
start=$(date +%s)

if ! "$PYTHON" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    ver=$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')
    echo "python-test: installing python${ver}-venv (apt)" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! log=$(apt-get update -qq 2>&1 && apt-get install -y -qq --no-install-recommends "python${ver}-venv" 2>&1); then
      echo "$log" >&2
      echo "python-test: apt-get failed; install python3-venv" >&2
      exit 1
    fi
  else
    echo "python-test: $PYTHON has no venv/ensurepip module; install python3-venv" >&2
    exit 1
  fi
fi

rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)
"${PIP[@]}" install pytest numpy xarray
cargo build -q -p terrasynth-cli
# maturin's PEP 517 backend passes MATURIN_PEP517_ARGS to `cargo build`.
MATURIN_PEP517_ARGS="--profile $PROFILE" "${PIP[@]}" install ./crates/terrasynth-py
echo "python-test: venv and install took $(( $(date +%s) - start )) s" >&2
TERRASYNTH_CLI="$PWD/target/debug/terrasynth" "$VENV/bin/python" -m pytest -q crates/terrasynth-py/tests "$@"
echo "python-test: done in $(( $(date +%s) - start )) s" >&2
