//! The small vector instruction set the bulk kernels are written in, once, and its
//! implementations:
//!
//! - [`Portable`]: 8 lanes in plain arrays, no intrinsics: every platform (the `scalar` level
//!   on x86-64, the only level on aarch64 and wasm32; the compiler may auto-vectorise it);
//! - [`Avx2`]: 8 f32 lanes in a `__m256` (AVX2, x86-64);
//! - [`Avx512`]: 16 f32 lanes in a `__m512` (AVX-512F), masks in `__mmask16`;
//! - [`Avx2x2`]: 16 lanes emulated with two `__m256` halves (AVX2). It follows the
//!   16-lane logic of [`Avx512`] (vector width, padding, 16-entry windows, table lookups by
//!   the low 4 index bits, masks) with AVX2 instructions, so that logic runs and is tested on
//!   CPUs without AVX-512.
//!
//! Every operation is exactly rounded the same way in every implementation (IEEE single
//! precision add/sub/mul, exact compares, selects and integer ops), so a kernel gives the same
//! bits whatever the implementation and the platform. **There is no fused multiply-add**: a
//! fused `a·b + c` rounds once, a multiplication then an addition twice, and only some targets
//! have it in hardware (baseline x86-64 and wasm32 would call a slow software `fmaf`), so the
//! kernels never fuse and every platform computes the same two roundings (issue 11 part 6).
//!
//! A value of an implementation type is a token: it can only be made by `new`, which checks
//! the CPU, so every method may use the instructions safely. The methods are
//! `#[inline(always)]`; a kernel generic over [`Lanes`] is instantiated inside a
//! `#[target_feature]` function, where the intrinsics inline.
//!
//! The AVX-512 instantiation compiles, and its 16-lane logic is tested through [`Avx2x2`], but
//! it has not been executed on AVX-512 hardware by its authors (the development machine, an AMD
//! EPYC Zen 3, lacks AVX-512): `super::SimdLevel` therefore checks it against the AVX2
//! kernels bit for bit on first use and falls back to AVX2 when they differ.

/// The vector operations of the bulk kernels, on `N` f32 lanes (`F`), `N` i32 lanes (`I`) and
/// `N`-lane masks (`M`).
pub(crate) trait Lanes: Copy {
    /// Lanes per vector.
    const N: usize;
    /// `N` f32.
    type F: Copy;
    /// `N` i32 (integer ops wrap).
    type I: Copy;
    /// A lane mask (result of a compare).
    type M: Copy;
    /// An 8-entry f32 table prepared for [`Lanes::lookup8`].
    type Table8: Copy;

    /// `x` in every lane.
    fn splat(self, x: f32) -> Self::F;
    /// `x` in every lane.
    fn splat_i(self, x: i32) -> Self::I;
    /// Loads `N` f32 from `p` (unaligned).
    ///
    /// # Safety
    /// `p` must be valid for reading `N` f32.
    unsafe fn load(self, p: *const f32) -> Self::F;
    /// Loads `N` i32 from `p` (unaligned).
    ///
    /// # Safety
    /// `p` must be valid for reading `N` i32.
    unsafe fn load_i(self, p: *const i32) -> Self::I;
    /// Stores `N` f32 to `p` (unaligned).
    ///
    /// # Safety
    /// `p` must be valid for writing `N` f32.
    unsafe fn store(self, p: *mut f32, v: Self::F);

    /// `a + b`.
    fn add(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a − b`.
    fn sub(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a · b`.
    fn mul(self, a: Self::F, b: Self::F) -> Self::F;
    /// `max(a, b)` (operands are never NaN here).
    fn max(self, a: Self::F, b: Self::F) -> Self::F;
    /// `min(a, b)` (operands are never NaN here).
    fn min(self, a: Self::F, b: Self::F) -> Self::F;
    /// `a` with its sign bit flipped in the lanes where bit 31 of `h` is set.
    fn flip_sign(self, a: Self::F, h: Self::I) -> Self::F;

    /// Lanes where `a ≥ b` (ordered).
    fn ge(self, a: Self::F, b: Self::F) -> Self::M;
    /// Lanes where `a > b` (ordered).
    fn gt(self, a: Self::F, b: Self::F) -> Self::M;
    /// `t` where `m` is set, else `f`.
    fn select(self, m: Self::M, f: Self::F, t: Self::F) -> Self::F;
    /// `t` where `m` is set, else `f`.
    fn select_i(self, m: Self::M, f: Self::I, t: Self::I) -> Self::I;
    /// `x` where `m` is set, else `+0.0` (the same bits as `select(m, splat(0.0), x)`).
    fn keep(self, m: Self::M, x: Self::F) -> Self::F;
    /// `x` where `m` is set, else 0.
    fn keep_i(self, m: Self::M, x: Self::I) -> Self::I;

    /// `a + b` (wrapping).
    fn add_i(self, a: Self::I, b: Self::I) -> Self::I;
    /// `a − b` (wrapping).
    fn sub_i(self, a: Self::I, b: Self::I) -> Self::I;
    /// The low 32 bits of `a · b`.
    fn mul_i(self, a: Self::I, b: Self::I) -> Self::I;
    /// `a ^ b`.
    fn xor_i(self, a: Self::I, b: Self::I) -> Self::I;
    /// `a >> k`, logical (`k < 32`).
    fn shr_i(self, a: Self::I, k: u32) -> Self::I;

    /// `p[idx]` per lane for `idx` in `0..N`, from a window of `N` values at `p`.
    ///
    /// # Safety
    /// `p` must be valid for reading `N` f32, and every lane of `idx` in `0..N`.
    unsafe fn window(self, p: *const f32, idx: Self::I) -> Self::F;
    /// `p[idx]` per lane (a gather).
    ///
    /// # Safety
    /// `p.add(idx)` must be valid for reading one f32 for every lane of `idx`.
    unsafe fn gather(self, p: *const f32, idx: Self::I) -> Self::F;
    /// Prepares `t` for [`Lanes::lookup8`].
    fn table8(self, t: &[f32; 8]) -> Self::Table8;
    /// `t[idx & 7]` per lane.
    fn lookup8(self, t: Self::Table8, idx: Self::I) -> Self::F;
}

/// 8 lanes in plain arrays: the kernels without intrinsics, on every platform. Each method
/// computes, lane by lane, exactly what the x86 instruction of the same name does (including
/// `max`/`min` returning the second operand on ties, and ordered compares).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Portable;

/// Applies `f` lane by lane.
#[inline(always)]
fn lanes8<U>(f: impl Fn(usize) -> U) -> [U; 8] {
    std::array::from_fn(f)
}

// SAFETY (every `unsafe` block in this impl): plain reads and writes of `N` values; pointer
// validity is the caller's contract stated on each trait method.
#[allow(clippy::undocumented_unsafe_blocks, reason = "the one SAFETY comment above covers every block")]
impl Lanes for Portable {
    const N: usize = 8;
    type F = [f32; 8];
    type I = [i32; 8];
    type M = [bool; 8];
    type Table8 = [f32; 8];

    #[inline(always)]
    fn splat(self, x: f32) -> [f32; 8] {
        [x; 8]
    }
    #[inline(always)]
    fn splat_i(self, x: i32) -> [i32; 8] {
        [x; 8]
    }
    #[inline(always)]
    unsafe fn load(self, p: *const f32) -> [f32; 8] {
        unsafe { p.cast::<[f32; 8]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn load_i(self, p: *const i32) -> [i32; 8] {
        unsafe { p.cast::<[i32; 8]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32, v: [f32; 8]) {
        unsafe { p.cast::<[f32; 8]>().write_unaligned(v) }
    }
    #[inline(always)]
    fn add(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        lanes8(|k| a[k] + b[k])
    }
    #[inline(always)]
    fn sub(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        lanes8(|k| a[k] - b[k])
    }
    #[inline(always)]
    fn mul(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        lanes8(|k| a[k] * b[k])
    }
    #[inline(always)]
    fn max(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        // `maxps`: `a > b ? a : b`.
        lanes8(|k| if a[k] > b[k] { a[k] } else { b[k] })
    }
    #[inline(always)]
    fn min(self, a: [f32; 8], b: [f32; 8]) -> [f32; 8] {
        // `minps`: `a < b ? a : b`.
        lanes8(|k| if a[k] < b[k] { a[k] } else { b[k] })
    }
    #[inline(always)]
    fn flip_sign(self, a: [f32; 8], h: [i32; 8]) -> [f32; 8] {
        lanes8(|k| f32::from_bits(a[k].to_bits() ^ (h[k] as u32 & 0x8000_0000)))
    }
    #[inline(always)]
    fn ge(self, a: [f32; 8], b: [f32; 8]) -> [bool; 8] {
        lanes8(|k| a[k] >= b[k])
    }
    #[inline(always)]
    fn gt(self, a: [f32; 8], b: [f32; 8]) -> [bool; 8] {
        lanes8(|k| a[k] > b[k])
    }
    #[inline(always)]
    fn select(self, m: [bool; 8], f: [f32; 8], t: [f32; 8]) -> [f32; 8] {
        lanes8(|k| if m[k] { t[k] } else { f[k] })
    }
    #[inline(always)]
    fn select_i(self, m: [bool; 8], f: [i32; 8], t: [i32; 8]) -> [i32; 8] {
        lanes8(|k| if m[k] { t[k] } else { f[k] })
    }
    #[inline(always)]
    fn keep(self, m: [bool; 8], x: [f32; 8]) -> [f32; 8] {
        lanes8(|k| if m[k] { x[k] } else { 0.0 })
    }
    #[inline(always)]
    fn keep_i(self, m: [bool; 8], x: [i32; 8]) -> [i32; 8] {
        lanes8(|k| if m[k] { x[k] } else { 0 })
    }
    #[inline(always)]
    fn add_i(self, a: [i32; 8], b: [i32; 8]) -> [i32; 8] {
        lanes8(|k| a[k].wrapping_add(b[k]))
    }
    #[inline(always)]
    fn sub_i(self, a: [i32; 8], b: [i32; 8]) -> [i32; 8] {
        lanes8(|k| a[k].wrapping_sub(b[k]))
    }
    #[inline(always)]
    fn mul_i(self, a: [i32; 8], b: [i32; 8]) -> [i32; 8] {
        lanes8(|k| a[k].wrapping_mul(b[k]))
    }
    #[inline(always)]
    fn xor_i(self, a: [i32; 8], b: [i32; 8]) -> [i32; 8] {
        lanes8(|k| a[k] ^ b[k])
    }
    #[inline(always)]
    fn shr_i(self, a: [i32; 8], k: u32) -> [i32; 8] {
        lanes8(|l| ((a[l] as u32) >> k) as i32)
    }
    #[inline(always)]
    unsafe fn window(self, p: *const f32, idx: [i32; 8]) -> [f32; 8] {
        unsafe { self.gather(p, idx) }
    }
    #[inline(always)]
    unsafe fn gather(self, p: *const f32, idx: [i32; 8]) -> [f32; 8] {
        lanes8(|k| unsafe { *p.add(idx[k] as usize) })
    }
    #[inline(always)]
    fn table8(self, t: &[f32; 8]) -> [f32; 8] {
        *t
    }
    #[inline(always)]
    fn lookup8(self, t: [f32; 8], idx: [i32; 8]) -> [f32; 8] {
        lanes8(|k| t[(idx[k] & 7) as usize])
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use x86::{Avx2, Avx2x2, Avx512};

/// The x86-64 implementations.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Lanes;

    /// 8 lanes of AVX2.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Avx2(());

    impl Avx2 {
        /// The token, if this CPU has AVX2.
        pub(crate) fn new() -> Option<Self> {
            is_x86_feature_detected!("avx2").then_some(Avx2(()))
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx2` exists only when the CPU has AVX2
    // (`Avx2::new`); pointer arguments are the caller's contract.
    #[allow(clippy::undocumented_unsafe_blocks, reason = "the one SAFETY comment above covers every block")]
    impl Lanes for Avx2 {
        const N: usize = 8;
        type F = __m256;
        type I = __m256i;
        type M = __m256;
        type Table8 = __m256;

        #[inline(always)]
        fn splat(self, x: f32) -> __m256 {
            unsafe { _mm256_set1_ps(x) }
        }
        #[inline(always)]
        fn splat_i(self, x: i32) -> __m256i {
            unsafe { _mm256_set1_epi32(x) }
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f32) -> __m256 {
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn load_i(self, p: *const i32) -> __m256i {
            unsafe { _mm256_loadu_si256(p.cast()) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, v: __m256) {
            unsafe { _mm256_storeu_ps(p, v) }
        }
        #[inline(always)]
        fn add(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_mul_ps(a, b) }
        }
        #[inline(always)]
        fn max(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_max_ps(a, b) }
        }
        #[inline(always)]
        fn min(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_min_ps(a, b) }
        }
        #[inline(always)]
        fn flip_sign(self, a: __m256, h: __m256i) -> __m256 {
            unsafe {
                let sign = _mm256_and_si256(h, _mm256_set1_epi32(i32::MIN));
                _mm256_xor_ps(a, _mm256_castsi256_ps(sign))
            }
        }
        #[inline(always)]
        fn ge(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_GE_OQ>(a, b) }
        }
        #[inline(always)]
        fn gt(self, a: __m256, b: __m256) -> __m256 {
            unsafe { _mm256_cmp_ps::<_CMP_GT_OQ>(a, b) }
        }
        #[inline(always)]
        fn select(self, m: __m256, f: __m256, t: __m256) -> __m256 {
            unsafe { _mm256_blendv_ps(f, t, m) }
        }
        #[inline(always)]
        fn select_i(self, m: __m256, f: __m256i, t: __m256i) -> __m256i {
            unsafe {
                _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(f), _mm256_castsi256_ps(t), m))
            }
        }
        #[inline(always)]
        fn keep(self, m: __m256, x: __m256) -> __m256 {
            // A compare mask is all ones or all zeros per lane.
            unsafe { _mm256_and_ps(m, x) }
        }
        #[inline(always)]
        fn keep_i(self, m: __m256, x: __m256i) -> __m256i {
            unsafe { _mm256_and_si256(_mm256_castps_si256(m), x) }
        }
        #[inline(always)]
        fn add_i(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_add_epi32(a, b) }
        }
        #[inline(always)]
        fn sub_i(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_sub_epi32(a, b) }
        }
        #[inline(always)]
        fn mul_i(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_mullo_epi32(a, b) }
        }
        #[inline(always)]
        fn xor_i(self, a: __m256i, b: __m256i) -> __m256i {
            unsafe { _mm256_xor_si256(a, b) }
        }
        #[inline(always)]
        fn shr_i(self, a: __m256i, k: u32) -> __m256i {
            unsafe { _mm256_srl_epi32(a, _mm_cvtsi32_si128(k as i32)) }
        }
        #[inline(always)]
        unsafe fn window(self, p: *const f32, idx: __m256i) -> __m256 {
            unsafe { _mm256_permutevar8x32_ps(_mm256_loadu_ps(p), idx) }
        }
        #[inline(always)]
        unsafe fn gather(self, p: *const f32, idx: __m256i) -> __m256 {
            unsafe { _mm256_i32gather_ps::<4>(p, idx) }
        }
        #[inline(always)]
        fn table8(self, t: &[f32; 8]) -> __m256 {
            unsafe { _mm256_loadu_ps(t.as_ptr()) }
        }
        #[inline(always)]
        fn lookup8(self, t: __m256, idx: __m256i) -> __m256 {
            // `vpermps` reads the low 3 bits of each index.
            unsafe { _mm256_permutevar8x32_ps(t, idx) }
        }
    }

    /// 16 lanes emulated with two halves of [`Avx2`] (low lanes first).
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Avx2x2(Avx2);

    impl Avx2x2 {
        /// The token, if this CPU has AVX2.
        pub(crate) fn new() -> Option<Self> {
            Avx2::new().map(Avx2x2)
        }
    }

    /// Applies an [`Avx2`] operation to both halves.
    macro_rules! halves {
    ($s:ident, $op:ident, $($a:ident),+) => {
        [$s.0.$op($($a[0]),+), $s.0.$op($($a[1]),+)]
    };
}

    // SAFETY (every `unsafe` block in this impl): as for `Avx2`; the 16-value pointer contracts
    // cover both 8-value halves.
    #[allow(clippy::undocumented_unsafe_blocks, reason = "the one SAFETY comment above covers every block")]
    impl Lanes for Avx2x2 {
        const N: usize = 16;
        type F = [__m256; 2];
        type I = [__m256i; 2];
        type M = [__m256; 2];
        type Table8 = [__m256; 2];

        #[inline(always)]
        fn splat(self, x: f32) -> Self::F {
            [self.0.splat(x); 2]
        }
        #[inline(always)]
        fn splat_i(self, x: i32) -> Self::I {
            [self.0.splat_i(x); 2]
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f32) -> Self::F {
            unsafe { [self.0.load(p), self.0.load(p.add(8))] }
        }
        #[inline(always)]
        unsafe fn load_i(self, p: *const i32) -> Self::I {
            unsafe { [self.0.load_i(p), self.0.load_i(p.add(8))] }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, v: Self::F) {
            unsafe {
                self.0.store(p, v[0]);
                self.0.store(p.add(8), v[1]);
            }
        }
        #[inline(always)]
        fn add(self, a: Self::F, b: Self::F) -> Self::F {
            halves!(self, add, a, b)
        }
        #[inline(always)]
        fn sub(self, a: Self::F, b: Self::F) -> Self::F {
            halves!(self, sub, a, b)
        }
        #[inline(always)]
        fn mul(self, a: Self::F, b: Self::F) -> Self::F {
            halves!(self, mul, a, b)
        }
        #[inline(always)]
        fn max(self, a: Self::F, b: Self::F) -> Self::F {
            halves!(self, max, a, b)
        }
        #[inline(always)]
        fn min(self, a: Self::F, b: Self::F) -> Self::F {
            halves!(self, min, a, b)
        }
        #[inline(always)]
        fn flip_sign(self, a: Self::F, h: Self::I) -> Self::F {
            halves!(self, flip_sign, a, h)
        }
        #[inline(always)]
        fn ge(self, a: Self::F, b: Self::F) -> Self::M {
            halves!(self, ge, a, b)
        }
        #[inline(always)]
        fn gt(self, a: Self::F, b: Self::F) -> Self::M {
            halves!(self, gt, a, b)
        }
        #[inline(always)]
        fn select(self, m: Self::M, f: Self::F, t: Self::F) -> Self::F {
            halves!(self, select, m, f, t)
        }
        #[inline(always)]
        fn select_i(self, m: Self::M, f: Self::I, t: Self::I) -> Self::I {
            halves!(self, select_i, m, f, t)
        }
        #[inline(always)]
        fn keep(self, m: Self::M, x: Self::F) -> Self::F {
            halves!(self, keep, m, x)
        }
        #[inline(always)]
        fn keep_i(self, m: Self::M, x: Self::I) -> Self::I {
            halves!(self, keep_i, m, x)
        }
        #[inline(always)]
        fn add_i(self, a: Self::I, b: Self::I) -> Self::I {
            halves!(self, add_i, a, b)
        }
        #[inline(always)]
        fn sub_i(self, a: Self::I, b: Self::I) -> Self::I {
            halves!(self, sub_i, a, b)
        }
        #[inline(always)]
        fn mul_i(self, a: Self::I, b: Self::I) -> Self::I {
            halves!(self, mul_i, a, b)
        }
        #[inline(always)]
        fn xor_i(self, a: Self::I, b: Self::I) -> Self::I {
            halves!(self, xor_i, a, b)
        }
        #[inline(always)]
        fn shr_i(self, a: Self::I, k: u32) -> Self::I {
            [self.0.shr_i(a[0], k), self.0.shr_i(a[1], k)]
        }
        #[inline(always)]
        unsafe fn window(self, p: *const f32, idx: Self::I) -> Self::F {
            // A 16-entry window as two 8-entry halves.
            unsafe {
                let lo = _mm256_loadu_ps(p);
                let hi = _mm256_loadu_ps(p.add(8));
                [window_half(lo, hi, idx[0]), window_half(lo, hi, idx[1])]
            }
        }
        #[inline(always)]
        unsafe fn gather(self, p: *const f32, idx: Self::I) -> Self::F {
            unsafe { [self.0.gather(p, idx[0]), self.0.gather(p, idx[1])] }
        }
        #[inline(always)]
        fn table8(self, t: &[f32; 8]) -> [__m256; 2] {
            // The 16-entry table of `Avx512`, in two halves.
            let t16 = table16(t);
            unsafe { [_mm256_loadu_ps(t16.as_ptr()), _mm256_loadu_ps(t16.as_ptr().add(8))] }
        }
        #[inline(always)]
        fn lookup8(self, t: [__m256; 2], idx: Self::I) -> Self::F {
            // As `Avx512`: the low 4 bits of the index pick one of the 16 entries.
            let fifteen = self.splat_i(15);
            let idx = [unsafe { _mm256_and_si256(idx[0], fifteen[0]) }, unsafe {
                _mm256_and_si256(idx[1], fifteen[1])
            }];
            // SAFETY: `t16` is 16 readable values and every index is in 0..16.
            let t16: [f32; 16] = unsafe { std::mem::transmute(t) };
            unsafe { self.window(t16.as_ptr(), idx) }
        }
    }

    /// 16 lanes of AVX-512F.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Avx512(());

    impl Avx512 {
        /// The token, if this CPU has AVX-512F (and AVX2, which every AVX-512F CPU has).
        pub(crate) fn new() -> Option<Self> {
            (is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx2")).then_some(Avx512(()))
        }
    }

    // SAFETY (every `unsafe` block in this impl): an `Avx512` exists only when the CPU has
    // AVX-512F (`Avx512::new`); pointer arguments are the caller's contract. Only AVX-512F
    // instructions are used (float xor is done on the integer side, `vpxord`, not DQ's `vxorps`).
    #[allow(clippy::undocumented_unsafe_blocks, reason = "the one SAFETY comment above covers every block")]
    impl Lanes for Avx512 {
        const N: usize = 16;
        type F = __m512;
        type I = __m512i;
        type M = __mmask16;
        type Table8 = __m512;

        #[inline(always)]
        fn splat(self, x: f32) -> __m512 {
            unsafe { _mm512_set1_ps(x) }
        }
        #[inline(always)]
        fn splat_i(self, x: i32) -> __m512i {
            unsafe { _mm512_set1_epi32(x) }
        }
        #[inline(always)]
        unsafe fn load(self, p: *const f32) -> __m512 {
            unsafe { _mm512_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn load_i(self, p: *const i32) -> __m512i {
            unsafe { _mm512_loadu_si512(p.cast()) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32, v: __m512) {
            unsafe { _mm512_storeu_ps(p, v) }
        }
        #[inline(always)]
        fn add(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_add_ps(a, b) }
        }
        #[inline(always)]
        fn sub(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_sub_ps(a, b) }
        }
        #[inline(always)]
        fn mul(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_mul_ps(a, b) }
        }
        #[inline(always)]
        fn max(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_max_ps(a, b) }
        }
        #[inline(always)]
        fn min(self, a: __m512, b: __m512) -> __m512 {
            unsafe { _mm512_min_ps(a, b) }
        }
        #[inline(always)]
        fn flip_sign(self, a: __m512, h: __m512i) -> __m512 {
            unsafe {
                let sign = _mm512_and_si512(h, _mm512_set1_epi32(i32::MIN));
                _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), sign))
            }
        }
        #[inline(always)]
        fn ge(self, a: __m512, b: __m512) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_GE_OQ>(a, b) }
        }
        #[inline(always)]
        fn gt(self, a: __m512, b: __m512) -> __mmask16 {
            unsafe { _mm512_cmp_ps_mask::<_CMP_GT_OQ>(a, b) }
        }
        #[inline(always)]
        fn select(self, m: __mmask16, f: __m512, t: __m512) -> __m512 {
            // `vblendmps`: the second operand where the mask bit is set.
            unsafe { _mm512_mask_blend_ps(m, f, t) }
        }
        #[inline(always)]
        fn select_i(self, m: __mmask16, f: __m512i, t: __m512i) -> __m512i {
            unsafe { _mm512_mask_blend_epi32(m, f, t) }
        }
        #[inline(always)]
        fn keep(self, m: __mmask16, x: __m512) -> __m512 {
            // Zero-masking move: `x` where the mask bit is set, else 0.
            unsafe { _mm512_maskz_mov_ps(m, x) }
        }
        #[inline(always)]
        fn keep_i(self, m: __mmask16, x: __m512i) -> __m512i {
            unsafe { _mm512_maskz_mov_epi32(m, x) }
        }
        #[inline(always)]
        fn add_i(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_add_epi32(a, b) }
        }
        #[inline(always)]
        fn sub_i(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_sub_epi32(a, b) }
        }
        #[inline(always)]
        fn mul_i(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_mullo_epi32(a, b) }
        }
        #[inline(always)]
        fn xor_i(self, a: __m512i, b: __m512i) -> __m512i {
            unsafe { _mm512_xor_si512(a, b) }
        }
        #[inline(always)]
        fn shr_i(self, a: __m512i, k: u32) -> __m512i {
            unsafe { _mm512_srl_epi32(a, _mm_cvtsi32_si128(k as i32)) }
        }
        #[inline(always)]
        unsafe fn window(self, p: *const f32, idx: __m512i) -> __m512 {
            // `vpermps zmm`: index first, reads the low 4 bits of each index.
            unsafe { _mm512_permutexvar_ps(idx, _mm512_loadu_ps(p)) }
        }
        #[inline(always)]
        unsafe fn gather(self, p: *const f32, idx: __m512i) -> __m512 {
            // Offsets first, then the base pointer (unlike the AVX2 gather).
            unsafe { _mm512_i32gather_ps::<4>(idx, p) }
        }
        #[inline(always)]
        fn table8(self, t: &[f32; 8]) -> __m512 {
            let t16 = table16(t);
            unsafe { _mm512_loadu_ps(t16.as_ptr()) }
        }
        #[inline(always)]
        fn lookup8(self, t: __m512, idx: __m512i) -> __m512 {
            unsafe { _mm512_permutexvar_ps(idx, t) }
        }
    }

    /// The 8 entries of `t` twice, so that a 4-bit index (what `vpermps zmm` reads) picks
    /// `t[idx & 7]`: the 16-lane tables of [`Avx512`] and [`Avx2x2`].
    #[inline(always)]
    fn table16(t: &[f32; 8]) -> [f32; 16] {
        let mut t16 = [0.0f32; 16];
        t16[..8].copy_from_slice(t);
        t16[8..].copy_from_slice(t);
        t16
    }

    /// `[lo, hi][i]` per lane for `i` in `0..16`: `vpermps` reads the low 3 bits of the index,
    /// and bit 3 picks the half (as `vpermps zmm` reads 4 bits).
    ///
    /// Only called by [`Avx2x2`], whose token proves AVX2.
    #[inline(always)]
    fn window_half(lo: __m256, hi: __m256, i: __m256i) -> __m256 {
        // SAFETY: the caller holds an `Avx2x2` token (AVX2 present).
        unsafe {
            let upper = _mm256_castsi256_ps(_mm256_cmpgt_epi32(i, _mm256_set1_epi32(7)));
            _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, i), _mm256_permutevar8x32_ps(hi, i), upper)
        }
    }
}
