//! A small in-place radix-2 complex FFT for the power spectrum of [`super::realism`]: the
//! iterative decimation-in-time form of Cooley & Tukey (1965, "An algorithm for the machine
//! calculation of complex Fourier series", Math. Comp. 19:297–301): bit-reversal permutation,
//! then log₂ n passes of butterflies with twiddles `e^{∓2πik/len}`. The twiddles of every pass
//! are read from one table of `e^{∓2πij/n}` (`j < n/2`, pass `len` takes `j = k·n/len`), the
//! same bits as computing them per pass (`n/len` is a power of two, so `2π·k·(n/len)/n` rounds
//! exactly as `2π·k/len`), computed once per transform size by `detmath` (the same bits on
//! every platform). Sizes are powers of two; the analysis crops its window to one.

use rayon::prelude::*;
use terrasynth_noise::detmath;

use std::f64::consts::PI;

/// A complex number `(re, im)`.
pub(crate) type Complex = (f64, f64);

/// `e^{∓2πij/n}` for `j < n/2` (`−` forward, `+` inverse).
fn twiddle_table(n: usize, inverse: bool) -> Vec<Complex> {
    let sign = if inverse { 1.0 } else { -1.0 };
    (0..n / 2)
        .map(|j| {
            let a = sign * 2.0 * PI * j as f64 / n as f64;
            (detmath::cos(a), detmath::sin(a))
        })
        .collect()
}

/// Transforms `data` in place: forward (`inverse = false`) is `X_k = Σ x_j e^{−2πijk/n}`;
/// inverse uses `e^{+2πijk/n}` and does not divide by `n`. `data.len()` must be a power of
/// two (checked by the callers; a debug assertion here). The analysis calls [`fft2`]; this
/// 1-D form is its tests' reference.
#[cfg(test)]
pub(crate) fn fft(data: &mut [Complex], inverse: bool) {
    fft_with(data, &twiddle_table(data.len(), inverse));
}

/// [`fft`] with the twiddle table of `data.len()` and the direction.
fn fft_with(data: &mut [Complex], table: &[Complex]) {
    let n = data.len();
    debug_assert!(n.is_power_of_two() && table.len() == n / 2);
    radix2(data, |k, len| table[k * (n / len)]);
}

/// The transform's steps whatever the twiddles' source: the bit-reversal permutation, then
/// the passes of butterflies, pass `len` taking `twiddle(k, len)` = `e^{∓2πik/len}` for its
/// `k < len/2` (from the table in [`fft_with`], computed per pass in the tests' oracle).
#[inline(always)]
fn radix2(data: &mut [Complex], twiddle: impl Fn(usize, usize) -> Complex) {
    let n = data.len();
    if n < 2 {
        return;
    }
    // Bit-reversal permutation.
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if j > i {
            data.swap(i, j);
        }
    }
    let mut len = 2;
    while len <= n {
        let half = len / 2;
        for start in (0..n).step_by(len) {
            for k in 0..half {
                let (wr, wi) = twiddle(k, len);
                let (ar, ai) = data[start + k];
                let (br, bi) = data[start + k + half];
                let (tr, ti) = (br * wr - bi * wi, br * wi + bi * wr);
                data[start + k] = (ar + tr, ai + ti);
                data[start + k + half] = (ar - tr, ai - ti);
            }
        }
        len *= 2;
    }
}

/// 2-D transform of an `n × n` row-major grid: rows, then columns, each 1-D transform
/// independent (rows in parallel: the same bits on any thread count). The columns are
/// transformed as the rows of the transposed grid, transposed in place (no second grid).
pub(crate) fn fft2(data: &mut [Complex], n: usize, inverse: bool) {
    let table = twiddle_table(n, inverse);
    data.par_chunks_exact_mut(n).for_each(|row| fft_with(row, &table));
    transpose(data, n);
    data.par_chunks_exact_mut(n).for_each(|col| fft_with(col, &table));
    transpose(data, n);
}

/// Transposes an `n × n` row-major grid in place, in tiles of 32 × 32 (cache-friendly).
fn transpose(data: &mut [Complex], n: usize) {
    const TILE: usize = 32;
    for ty in (0..n).step_by(TILE) {
        for tx in (ty..n).step_by(TILE) {
            for y in ty..(ty + TILE).min(n) {
                let x0 = if tx == ty { y + 1 } else { tx };
                for x in x0..(tx + TILE).min(n) {
                    data.swap(y * n + x, x * n + y);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_direct_dft_and_inverts() {
        let n = 16;
        let x: Vec<Complex> =
            (0..n).map(|i| ((i as f64 * 0.7).sin() + 0.1 * i as f64, (i as f64 * 1.3).cos())).collect();
        let mut f = x.clone();
        fft(&mut f, false);
        for (k, fk) in f.iter().enumerate() {
            let (mut re, mut im) = (0.0, 0.0);
            for (j, &(xr, xi)) in x.iter().enumerate() {
                let a = -2.0 * PI * (j * k) as f64 / n as f64;
                re += xr * a.cos() - xi * a.sin();
                im += xr * a.sin() + xi * a.cos();
            }
            assert!((fk.0 - re).abs() < 1e-9 && (fk.1 - im).abs() < 1e-9, "bin {k}");
        }
        fft(&mut f, true);
        for (a, b) in f.iter().zip(&x) {
            assert!((a.0 / n as f64 - b.0).abs() < 1e-12 && (a.1 / n as f64 - b.1).abs() < 1e-12);
        }
    }

    /// The transform with twiddles computed per pass (`e^{∓2πik/len}`), as before the table.
    fn per_pass_fft(data: &mut [Complex], inverse: bool) {
        let sign = if inverse { 1.0 } else { -1.0 };
        radix2(data, |k, len| {
            let a = sign * 2.0 * PI * k as f64 / len as f64;
            (detmath::cos(a), detmath::sin(a))
        });
    }

    /// The shared twiddle table gives the per-pass twiddles' bits, and the parallel 2-D
    /// transform the sequential rows-then-columns one's, on 1 and 3 threads.
    #[test]
    fn table_and_parallel_2d_give_the_per_pass_bits() {
        let bits = |d: &[Complex]| d.iter().flat_map(|c| [c.0.to_bits(), c.1.to_bits()]).collect::<Vec<_>>();
        for n in [2usize, 4, 8, 64, 1024] {
            for inverse in [false, true] {
                let x: Vec<Complex> =
                    (0..n).map(|i| ((i as f64 * 0.37).sin() * 3.0, (i * 7 % 11) as f64 - 5.0)).collect();
                let (mut a, mut b) = (x.clone(), x.clone());
                fft(&mut a, inverse);
                per_pass_fft(&mut b, inverse);
                assert_eq!(bits(&a), bits(&b), "n {n}, inverse {inverse}");
            }
        }
        let n = 64;
        let grid: Vec<Complex> =
            (0..n * n).map(|i| (((i * 2_654_435_761) % 1000) as f64 * 0.01, 0.0)).collect();
        let mut want = grid.clone();
        for row in want.chunks_exact_mut(n) {
            per_pass_fft(row, false);
        }
        let mut col = vec![(0.0, 0.0); n];
        for x in 0..n {
            for (y, c) in col.iter_mut().enumerate() {
                *c = want[y * n + x];
            }
            per_pass_fft(&mut col, false);
            for (y, c) in col.iter().enumerate() {
                want[y * n + x] = *c;
            }
        }
        let mut t: Vec<Complex> = (0..35 * 35).map(|i| (i as f64, 0.0)).collect();
        transpose(&mut t, 35);
        assert!((0..35 * 35).all(|i| t[i].0 == ((i % 35) * 35 + i / 35) as f64), "transpose");
        for threads in [1, 3] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            let mut got = grid.clone();
            pool.install(|| fft2(&mut got, n, false));
            assert_eq!(bits(&got), bits(&want), "{threads} threads");
        }
    }

    #[test]
    fn a_2d_cosine_lands_in_its_two_bins() {
        let n = 8;
        let mut d: Vec<Complex> = (0..n * n)
            .map(|i| ((2.0 * PI * (2.0 * (i % n) as f64 + 1.0 * (i / n) as f64) / n as f64).cos(), 0.0))
            .collect();
        fft2(&mut d, n, false);
        // cos(2π(2x + y)/8) → (kx, ky) = (2, 1) and (6, 7), each n²/2 = 32.
        for (i, &(re, im)) in d.iter().enumerate() {
            let (kx, ky) = (i % n, i / n);
            let want = if (kx, ky) == (2, 1) || (kx, ky) == (6, 7) { 32.0 } else { 0.0 };
            assert!((re - want).abs() < 1e-9 && im.abs() < 1e-9, "({kx},{ky}) = {re},{im}");
        }
    }
}
