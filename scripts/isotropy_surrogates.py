#!/usr/bin/env python3
"""How much of a map's grid signature H4/H8 is chance: the map's figures against those of
isotropic surrogates with the same radial power spectrum and the same land.

Usage (numpy; the realism bench's venv has it):
    target/realism-bench-venv/bin/python scripts/isotropy_surrogates.py OUT_DIR... [--surrogates N]

Each OUT_DIR is a `terrasynth generate` folder of a preset whose last shaping step normalises
the heights to [0, 1], as the eroded presets' does (height.r16 spans that range and report.json
gives the sea level in it). For each
map: H4 and H8 as `terrasynth analyze` computes them (Horn gradients over interior land cells,
`|sum s e^{i m theta}| / sum s`, s the slope, theta the aspect), then N surrogates: the map's
Fourier amplitudes averaged over rings of equal |k| (an isotropic spectrum of the same slope),
with uniform random phases (the phase-randomisation surrogates of Theiler et al. 1992,
"Testing for nonlinearity in time series: the method of surrogate data", Physica D 58), each
measured on the map's own land cells. A surrogate has no preferred direction at all, so the
share of surrogates above a bound is how often a perfectly isotropic surface of that spectrum
and coastline would be judged out of range by chance, and the map's rank among them says
whether its own signature is more than chance.
"""
import argparse
import json

import numpy as np

H8_BOUND = 0.011  # realism::REAL_RANGES, the DEMs' largest H8 (docs/ANALYZE.md)


def harmonics(z, land):
    """H4 and H8 of the slope-weighted aspect of `z` over `land` (interior cells)."""
    gx = (z[:-2, 2:] + 2 * z[1:-1, 2:] + z[2:, 2:]) - (z[:-2, :-2] + 2 * z[1:-1, :-2] + z[2:, :-2])
    gy = (z[2:, :-2] + 2 * z[2:, 1:-1] + z[2:, 2:]) - (z[:-2, :-2] + 2 * z[:-2, 1:-1] + z[:-2, 2:])
    s = np.hypot(gx, gy)[land]
    theta = np.arctan2(gy, gx)[land]
    total = s.sum()
    return [np.hypot((s * np.cos(m * theta)).sum(), (s * np.sin(m * theta)).sum()) / total for m in (4, 8)]


def isotropic_amplitude(z):
    """|FFT| of the square map `z` averaged over rings one wavenumber wide."""
    side = z.shape[0]
    amplitude = np.abs(np.fft.fft2(z - z.mean()))
    k = np.hypot(np.fft.fftfreq(side)[None, :], np.fft.fftfreq(side)[:, None])
    ring = np.minimum((k * side).astype(int), side)
    mean = np.bincount(ring.ravel(), amplitude.ravel()) / np.maximum(np.bincount(ring.ravel()), 1)
    return mean[ring]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--surrogates", type=int, default=40)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print("map | H4 | H8 | surrogates' H8 median / p90 | surrogates above 0.011 | map's H8 rank")
    for d in args.dirs:
        raw = np.fromfile(f"{d}/height.r16", dtype="<u2")
        side = int(round(raw.size**0.5))
        z = raw.reshape(side, side).astype(np.float64) / 65535.0
        report = json.load(open(f"{d}/report.json"))
        land = (z > report["sea_level"])[1:-1, 1:-1]
        h4, h8 = harmonics(z, land)
        amplitude = isotropic_amplitude(z)
        h8s = np.array([
            harmonics(np.real(np.fft.ifft2(amplitude * np.exp(2j * np.pi * rng.random(z.shape)))), land)[1]
            for _ in range(args.surrogates)
        ])
        print(f"{d} | {h4:.4f} | {h8:.4f} | {np.median(h8s):.4f} / {np.percentile(h8s, 90):.4f} | "
              f"{np.mean(h8s > H8_BOUND):.2f} | {np.mean(h8s < h8):.2f}")


if __name__ == "__main__":
    main()
