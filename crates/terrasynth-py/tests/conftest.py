"""Shared fixtures: the CLI binary to compare against, a small generated terrain."""

import os
import shutil
import subprocess

import pytest

import terrasynth


@pytest.fixture(scope="session")
def cli():
    """Path of the terrasynth CLI (TERRASYNTH_CLI, set by scripts/python-test.sh). Required on
    CI; skipped in a hand-run pytest without it."""
    path = os.environ.get("TERRASYNTH_CLI") or shutil.which("terrasynth")
    if not path or not os.path.exists(path):
        if os.environ.get("CI"):
            pytest.fail("TERRASYNTH_CLI is not set: run scripts/python-test.sh")
        pytest.skip("no terrasynth CLI (set TERRASYNTH_CLI)")
    return path


def run_cli(cli, *args):
    subprocess.run([cli, *args], check=True, capture_output=True)


@pytest.fixture(scope="session")
def island():
    """The island preset at 65x65, seed 7 (the same run as the CLI parity test)."""
    return terrasynth.Recipe.preset("island").generate(size=65, seed=7)
