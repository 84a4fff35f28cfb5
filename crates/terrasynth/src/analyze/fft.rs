//! A small in-place radix-2 complex FFT for the power spectrum of [`super::realism`]: the
//! iterative decimation-in-time form of Cooley & Tukey (1965, "An algorithm for the machine
//! calculation of complex Fourier series", Math. Comp. 19:297–301): bit-reversal permutation,
//! then log₂ n passes of butterflies with twiddles `e^{∓2πik/len}` computed per pass in f64.
//! Sizes are powers of two; the analysis crops its window to one.

use std::f64::consts::PI;

/// A complex number `(re, im)`.
pub(crate) type Complex = (f64, f64);

/// Transforms `data` in place: forward (`inverse = false`) is `X_k = Σ x_j e^{−2πijk/n}`;
/// inverse uses `e^{+2πijk/n}` and does not divide by `n`. `data.len()` must be a power of
/// two (checked by the callers; a debug assertion here).
pub(crate) fn fft(data: &mut [Complex], inverse: bool) {
    let n = data.len();
    debug_assert!(n.is_power_of_two());
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
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut len = 2;
    while len <= n {
        let half = len / 2;
        let twiddles: Vec<Complex> = (0..half)
            .map(|k| {
                let a = sign * 2.0 * PI * k as f64 / len as f64;
                (terrasynth_noise::detmath::cos(a), terrasynth_noise::detmath::sin(a))
            })
            .collect();
        for start in (0..n).step_by(len) {
            for (k, &(wr, wi)) in twiddles.iter().enumerate() {
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

/// 2-D transform of an `n × n` row-major grid: rows, then columns.
pub(crate) fn fft2(data: &mut [Complex], n: usize, inverse: bool) {
    for row in data.chunks_exact_mut(n) {
        fft(row, inverse);
    }
    let mut col = vec![(0.0, 0.0); n];
    for x in 0..n {
        for (y, c) in col.iter_mut().enumerate() {
            *c = data[y * n + x];
        }
        fft(&mut col, inverse);
        for (y, c) in col.iter().enumerate() {
            data[y * n + x] = *c;
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
