//! [`Grid<T>`]: a row-major 2D array with a cell size, and [`Heightmap`] = `Grid<f32>`.
//!
//! Modelled on `image::ImageBuffer` (checked constructors, `get` returning `Option`, `Index`
//! that panics with a clear message) and richdem's `Array2D`. Heights are stored as `f32`;
//! statistics accumulate in `f64`.

use std::ops::{Index, IndexMut};

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

mod donors;
mod neighbours;

pub(crate) use donors::Donors;
pub use neighbours::{Boundary, D8, Neighbourhood, d8_link_length};
pub(crate) use neighbours::{Stencil, Topology};

/// Largest width or height accepted, in cells (2^20).
pub const MAX_SIDE: usize = 1 << 20;
/// Largest buffer accepted for one grid, in bytes (16 GiB): larger grids are refused before
/// any allocation.
pub const MAX_GRID_BYTES: u64 = 16 << 30;

/// A row-major grid: cell `(x, y)` is stored at `y * width + x`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grid<T> {
    width: usize,
    height: usize,
    /// World size of one cell, in metres.
    cell_size: f64,
    data: Vec<T>,
}

/// A terrain: one `f32` height per cell.
pub type Heightmap = Grid<f32>;

/// Checks that a `width × height` grid of `T` is a sane size and fits in memory.
pub fn check_size<T>(width: usize, height: usize) -> Result<()> {
    let refuse = |reason: String| Err(Error::InvalidSize { width, height, reason });
    if width == 0 || height == 0 {
        return refuse(format!("width and height must be in 1..={MAX_SIDE}"));
    }
    if width > MAX_SIDE || height > MAX_SIDE {
        return refuse(format!("width and height must be in 1..={MAX_SIDE}"));
    }
    let bytes = (width as u64) * (height as u64) * (std::mem::size_of::<T>().max(1) as u64);
    if bytes > MAX_GRID_BYTES {
        return refuse(format!(
            "one buffer would need {:.1} GiB; at most {} GiB per grid is allowed",
            bytes as f64 / (1u64 << 30) as f64,
            MAX_GRID_BYTES >> 30
        ));
    }
    crate::memory::check_alloc(width, height, bytes, "one grid")
}

fn check_cell_size(cell_size: f64) -> Result<()> {
    if !(cell_size.is_finite() && cell_size > 0.0) {
        return Err(Error::param("cell_size", cell_size, "a finite number > 0 (metres)"));
    }
    Ok(())
}

impl<T: Clone> Grid<T> {
    /// A grid filled with `value`. Errors on a zero, absurd or too large size, or a cell size
    /// that is not finite and positive.
    pub fn filled(width: usize, height: usize, cell_size: f64, value: T) -> Result<Self> {
        check_size::<T>(width, height)?;
        check_cell_size(cell_size)?;
        Ok(Self { width, height, cell_size, data: vec![value; width * height] })
    }

    /// Copies the `w × h` window whose top-left cell is `(x, y)`.
    pub fn crop(&self, x: usize, y: usize, w: usize, h: usize) -> Result<Self> {
        if w == 0
            || h == 0
            || x.checked_add(w).is_none_or(|e| e > self.width)
            || y.checked_add(h).is_none_or(|e| e > self.height)
        {
            return Err(Error::InvalidSize {
                width: w,
                height: h,
                reason: format!(
                    "crop window at ({x}, {y}) must be non-empty and inside the {}x{} grid",
                    self.width, self.height
                ),
            });
        }
        let mut data = Vec::with_capacity(w * h);
        for row in y..y + h {
            data.extend_from_slice(&self.data[row * self.width + x..row * self.width + x + w]);
        }
        Ok(Self { width: w, height: h, cell_size: self.cell_size, data })
    }
}

impl<T: Clone + Default> Grid<T> {
    /// A grid filled with `T::default()` (0.0 for a heightmap).
    pub fn new(width: usize, height: usize, cell_size: f64) -> Result<Self> {
        Self::filled(width, height, cell_size, T::default())
    }
}

impl<T> Grid<T> {
    /// Wraps an existing row-major buffer; its length must be `width * height`.
    pub fn from_vec(width: usize, height: usize, cell_size: f64, data: Vec<T>) -> Result<Self> {
        check_size::<T>(width, height)?;
        check_cell_size(cell_size)?;
        if data.len() != width * height {
            return Err(Error::SizeMismatch {
                what: "buffer".into(),
                expected_w: width,
                expected_h: height,
                got_w: data.len(),
                got_h: 1,
            });
        }
        Ok(Self { width, height, cell_size, data })
    }

    /// A grid of the same size and cell size whose cells are `f(x, y)`.
    pub fn from_fn(
        width: usize,
        height: usize,
        cell_size: f64,
        mut f: impl FnMut(usize, usize) -> T,
    ) -> Result<Self> {
        check_size::<T>(width, height)?;
        check_cell_size(cell_size)?;
        let mut data = Vec::with_capacity(width * height);
        for y in 0..height {
            for x in 0..width {
                data.push(f(x, y));
            }
        }
        Ok(Self { width, height, cell_size, data })
    }

    /// Number of columns.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Number of rows.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Number of cells.
    pub fn len(&self) -> usize {
        self.data.len()
    }
    /// Always false: a grid has at least one cell.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }
    /// World size of one cell, in metres.
    pub fn cell_size(&self) -> f64 {
        self.cell_size
    }
    /// Sets the world size of one cell (finite, > 0).
    pub fn set_cell_size(&mut self, cell_size: f64) -> Result<()> {
        check_cell_size(cell_size)?;
        self.cell_size = cell_size;
        Ok(())
    }
    /// Whether another grid has the same width and height.
    pub fn same_size<U>(&self, other: &Grid<U>) -> bool {
        self.width == other.width && self.height == other.height
    }
    /// Linear index of `(x, y)`; no bounds check beyond debug assertions.
    #[inline]
    pub fn index_of(&self, x: usize, y: usize) -> usize {
        debug_assert!(x < self.width && y < self.height);
        y * self.width + x
    }
    /// The cell at `(x, y)`, or `None` outside the grid.
    #[inline]
    pub fn get(&self, x: usize, y: usize) -> Option<&T> {
        (x < self.width && y < self.height).then(|| &self.data[y * self.width + x])
    }
    /// Mutable cell at `(x, y)`, or `None` outside the grid.
    #[inline]
    pub fn get_mut(&mut self, x: usize, y: usize) -> Option<&mut T> {
        (x < self.width && y < self.height).then(|| &mut self.data[y * self.width + x])
    }
    /// The cell at signed `(x, y)`, or `None` outside the grid.
    #[inline]
    pub fn get_signed(&self, x: i64, y: i64) -> Option<&T> {
        if x < 0 || y < 0 {
            return None;
        }
        self.get(x as usize, y as usize)
    }
    /// The whole buffer, row-major.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }
    /// The whole buffer, row-major, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.data
    }
    /// Takes the buffer.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }
    /// Row `y`.
    pub fn row(&self, y: usize) -> &[T] {
        &self.data[y * self.width..(y + 1) * self.width]
    }
    /// Row `y`, mutable.
    pub fn row_mut(&mut self, y: usize) -> &mut [T] {
        &mut self.data[y * self.width..(y + 1) * self.width]
    }
    /// Iterator over rows.
    pub fn rows(&self) -> std::slice::ChunksExact<'_, T> {
        self.data.chunks_exact(self.width)
    }
    /// Iterator over mutable rows.
    pub fn rows_mut(&mut self) -> std::slice::ChunksExactMut<'_, T> {
        self.data.chunks_exact_mut(self.width)
    }
    /// A grid of the same shape with each cell mapped through `f`.
    pub fn map<U>(&self, f: impl FnMut(&T) -> U) -> Grid<U> {
        Grid {
            width: self.width,
            height: self.height,
            cell_size: self.cell_size,
            data: self.data.iter().map(f).collect(),
        }
    }
}

impl<T: Sync> Grid<T> {
    /// [`Grid::map`] on the threads of the current rayon pool (`f` sees every cell once, in
    /// no set order, so it must not count on one): the same grid, with the new buffer's pages
    /// written by all threads (see `memory::resize_par`).
    pub fn par_map<U: Send>(&self, f: impl Fn(&T) -> U + Sync + Send) -> Grid<U> {
        use rayon::prelude::*;
        Grid {
            width: self.width,
            height: self.height,
            cell_size: self.cell_size,
            data: self.data.par_iter().map(f).collect(),
        }
    }
}

impl<T> Index<(usize, usize)> for Grid<T> {
    type Output = T;
    #[inline]
    fn index(&self, (x, y): (usize, usize)) -> &T {
        assert!(
            x < self.width && y < self.height,
            "cell ({x}, {y}) is outside the {}x{} grid",
            self.width,
            self.height
        );
        &self.data[y * self.width + x]
    }
}

impl<T> IndexMut<(usize, usize)> for Grid<T> {
    #[inline]
    fn index_mut(&mut self, (x, y): (usize, usize)) -> &mut T {
        assert!(
            x < self.width && y < self.height,
            "cell ({x}, {y}) is outside the {}x{} grid",
            self.width,
            self.height
        );
        &mut self.data[y * self.width + x]
    }
}

/// Summary statistics of a heightmap, accumulated in f64 (NaN cells are skipped and counted).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    /// Smallest finite value.
    pub min: f32,
    /// Largest finite value.
    pub max: f32,
    /// Mean of finite values.
    pub mean: f64,
    /// Population standard deviation of finite values.
    pub std: f64,
    /// Number of non-finite cells skipped.
    pub non_finite: usize,
}

impl Heightmap {
    /// Smallest and largest finite height, or `None` if no cell is finite.
    pub fn min_max(&self) -> Option<(f32, f32)> {
        use rayon::prelude::*;
        let start = (f32::INFINITY, f32::NEG_INFINITY);
        // Sixteen running ranges side by side, a non-finite cell read as +∞ for the minimum and
        // −∞ for the maximum, so no cell is skipped and no NaN compared: a loop without
        // branches on SIMD lanes, which the filtered fold was not (about 2 ms a call at 1025²;
        // `generate` calls it some eight times).
        let fold = |(lo, hi): (f32, f32), cells: &[f32]| {
            const LANES: usize = 16;
            let (mut los, mut his) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
            let mut take = |lanes: &[f32]| {
                for ((l, h), &v) in los.iter_mut().zip(his.iter_mut()).zip(lanes) {
                    let finite = v.abs() < f32::INFINITY;
                    let (low, high) = if finite { (v, v) } else { (f32::INFINITY, f32::NEG_INFINITY) };
                    *l = if low < *l { low } else { *l };
                    *h = if high > *h { high } else { *h };
                }
            };
            let mut chunks = cells.chunks_exact(LANES);
            for lanes in chunks.by_ref() {
                take(lanes);
            }
            take(chunks.remainder());
            los.iter().zip(&his).fold((lo, hi), |(lo, hi), (&l, &h)| (lo.min(l), hi.max(h)))
        };
        // Pieces of a fixed size, in parallel, then their ranges folded in order: the same
        // result on any thread count.
        const PIECE: usize = 1 << 16;
        let (lo, hi) = if self.data.len() > 4 * PIECE {
            let pieces: Vec<(f32, f32)> = self.data.par_chunks(PIECE).map(|c| fold(start, c)).collect();
            pieces.iter().fold(start, |(lo, hi), &(a, b)| (lo.min(a), hi.max(b)))
        } else {
            fold(start, &self.data)
        };
        (lo <= hi).then_some((lo, hi))
    }

    /// Sum of all heights in f64 (the volume in cell units; used by mass-conservation checks).
    pub fn sum_f64(&self) -> f64 {
        self.data.iter().map(|&v| v as f64).sum()
    }

    /// Mean height (f64 accumulation).
    pub fn mean(&self) -> f64 {
        self.stats().mean
    }

    /// Population standard deviation of heights (f64 accumulation).
    pub fn std(&self) -> f64 {
        self.stats().std
    }

    /// Min, max, mean and population std (f64). The cells are taken in fixed pieces on the
    /// rayon threads, each piece's mean and sum of squared deviations by two passes over it,
    /// and the pieces merged in order by the pairwise update of Chan, Golub & LeVeque 1979
    /// ("Updating formulae and a pairwise algorithm for computing sample variances"), so the
    /// result does not depend on the thread count.
    pub fn stats(&self) -> Stats {
        use rayon::prelude::*;
        /// Cells per piece.
        const PIECE: usize = 1 << 12;
        // (finite cells, their mean, their sum of squared deviations) of one piece.
        let piece = |cells: &[f32]| -> (u64, f64, f64) {
            let (n, sum) = cells
                .iter()
                .filter(|v| v.is_finite())
                .fold((0u64, 0.0f64), |(n, s), &v| (n + 1, s + v as f64));
            if n == 0 {
                return (0, 0.0, 0.0);
            }
            let mean = sum / n as f64;
            let m2 =
                cells.iter().filter(|v| v.is_finite()).map(|&v| (v as f64 - mean) * (v as f64 - mean)).sum();
            (n, mean, m2)
        };
        let pieces: Vec<(u64, f64, f64)> = self.data.par_chunks(PIECE).map(piece).collect();
        let (n, mean, m2) = pieces.iter().fold((0u64, 0.0f64, 0.0f64), |(na, ma, sa), &(nb, mb, sb)| {
            if nb == 0 {
                return (na, ma, sa);
            }
            let n = na + nb;
            let d = mb - ma;
            (n, ma + d * nb as f64 / n as f64, sa + sb + d * d * (na as f64 * nb as f64 / n as f64))
        });
        let non_finite = self.data.len() - n as usize;
        let (min, max) = self.min_max().unwrap_or((f32::NAN, f32::NAN));
        let std = if n > 0 { (m2 / n as f64).sqrt() } else { f64::NAN };
        Stats { min, max, mean: if n > 0 { mean } else { f64::NAN }, std, non_finite }
    }

    /// Rescales heights to [0, 1] by inverse lerp over the map's min and max (seed 003).
    /// A flat map becomes all zeros.
    pub fn normalize(&mut self) {
        let Some((lo, hi)) = self.min_max() else { return };
        let range = (hi - lo) as f64;
        for v in &mut self.data {
            *v = if range > 0.0 { ((*v - lo) as f64 / range) as f32 } else { 0.0 };
        }
    }

    /// Clamps every height to `[lo, hi]`.
    pub fn clamp(&mut self, lo: f32, hi: f32) -> Result<()> {
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return Err(Error::param("clamp range", format!("[{lo}, {hi}]"), "finite bounds with lo <= hi"));
        }
        self.data.iter_mut().for_each(|v| *v = v.clamp(lo, hi));
        Ok(())
    }

    /// Multiplies every height by `factor`, then adds `offset`.
    pub fn scale(&mut self, factor: f32, offset: f32) -> Result<()> {
        if !factor.is_finite() {
            return Err(Error::param("factor", factor, "a finite number"));
        }
        if !offset.is_finite() {
            return Err(Error::param("offset", offset, "a finite number"));
        }
        self.data.iter_mut().for_each(|v| *v = *v * factor + offset);
        Ok(())
    }

    /// Bilinear height at continuous grid coordinates (cell centres at integers), clamped to
    /// the edges.
    pub fn sample_bilinear(&self, x: f64, y: f64) -> f32 {
        let x = x.clamp(0.0, (self.width - 1) as f64);
        let y = y.clamp(0.0, (self.height - 1) as f64);
        // Truncation is the floor of these non-negative positions (NaN gives 0 either way),
        // without `floor`'s library call on x86-64 targets without SSE4.1.
        let x0 = x as usize;
        let y0 = y as usize;
        let x1 = (x0 + 1).min(self.width - 1);
        let y1 = (y0 + 1).min(self.height - 1);
        let tx = x - x0 as f64;
        let ty = y - y0 as f64;
        let h = |x, y| self.data[y * self.width + x] as f64;
        let top = h(x0, y0) * (1.0 - tx) + h(x1, y0) * tx;
        let bottom = h(x0, y1) * (1.0 - tx) + h(x1, y1) * tx;
        (top * (1.0 - ty) + bottom * ty) as f32
    }

    /// Bilinear resample to `width × height`; corners map to corners, and the cell size is
    /// scaled so the world extent stays the same.
    pub fn resample(&self, width: usize, height: usize) -> Result<Self> {
        check_size::<f32>(width, height)?;
        let sx = if width > 1 { (self.width - 1) as f64 / (width - 1) as f64 } else { 0.0 };
        let sy = if height > 1 { (self.height - 1) as f64 / (height - 1) as f64 } else { 0.0 };
        let cell = if width > 1 && self.width > 1 {
            self.cell_size * (self.width - 1) as f64 / (width - 1) as f64
        } else {
            self.cell_size
        };
        Grid::from_fn(width, height, cell, |x, y| self.sample_bilinear(x as f64 * sx, y as f64 * sy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sample_bilinear` truncates its clamped position instead of calling `floor`: the same
    /// bits as the formula with `floor`, inside, outside, on cell edges and at NaN.
    #[test]
    fn sample_bilinear_equals_the_formula_with_floor() {
        let map = Heightmap::from_fn(7, 5, 1.0, |x, y| ((x * 31 + y * 17) % 11) as f32 * 0.37 - 1.5).unwrap();
        let reference = |x: f64, y: f64| {
            let x = x.clamp(0.0, 6.0);
            let y = y.clamp(0.0, 4.0);
            let (x0, y0) = (x.floor() as usize, y.floor() as usize);
            let (x1, y1) = ((x0 + 1).min(6), (y0 + 1).min(4));
            let (tx, ty) = (x - x0 as f64, y - y0 as f64);
            let h = |x: usize, y: usize| map.as_slice()[y * 7 + x] as f64;
            let top = h(x0, y0) * (1.0 - tx) + h(x1, y0) * tx;
            let bottom = h(x0, y1) * (1.0 - tx) + h(x1, y1) * tx;
            (top * (1.0 - ty) + bottom * ty) as f32
        };
        let mut coords = vec![f64::NAN, -0.0, 0.0, -1e-300, 1e300, -3.0, 6.0, 4.0, 7.5];
        coords.extend((0..=80).map(|k| k as f64 * 0.1 - 0.5));
        coords.extend([1.0f64, 3.0, 5.0].iter().flat_map(|&v| [v.next_down(), v, v.next_up()]));
        for &x in &coords {
            for &y in &coords {
                assert_eq!(map.sample_bilinear(x, y).to_bits(), reference(x, y).to_bits(), "({x}, {y})");
            }
        }
    }

    /// `min_max` skips non-finite cells and gives the plain fold's answer on a grid large
    /// enough for its parallel pieces, on 1 and 2 threads; `par_map` equals `map`.
    #[test]
    fn min_max_in_pieces_equals_the_plain_fold() {
        let (w, h) = (1031, 517);
        let mut v: Vec<f32> =
            (0..w * h).map(|i| ((i as u64 * 2654435761) % 100_003) as f32 * 0.01 - 300.0).collect();
        v[3] = f32::NAN;
        v[w * h / 2] = f32::NEG_INFINITY;
        v[w * h - 1] = f32::INFINITY;
        v[377_777] = -412.5;
        v[12] = 1234.0;
        let g = Heightmap::from_vec(w, h, 1.0, v.clone()).unwrap();
        let finite = v.iter().filter(|x| x.is_finite());
        let want = (
            finite.clone().fold(f32::INFINITY, |a, &b| a.min(b)),
            finite.fold(f32::NEG_INFINITY, |a, &b| a.max(b)),
        );
        assert_eq!(want, (-412.5, 1234.0));
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            assert_eq!(pool.install(|| g.min_max()), Some(want));
            let doubled = pool.install(|| g.par_map(|&x| x as f64 * 2.0));
            let bits = |g: &Grid<f64>| g.as_slice().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&doubled), bits(&g.map(|&x| x as f64 * 2.0)));
        }
        let nothing = Heightmap::from_vec(600, 600, 1.0, vec![f32::NAN; 600 * 600]).unwrap();
        assert_eq!(nothing.min_max(), None);
    }

    #[test]
    fn zero_and_absurd_sizes_are_refused() {
        assert!(matches!(Heightmap::new(0, 5, 1.0), Err(Error::InvalidSize { .. })));
        assert!(matches!(Heightmap::new(5, MAX_SIDE + 1, 1.0), Err(Error::InvalidSize { .. })));
        let err = Heightmap::new(MAX_SIDE, MAX_SIDE, 1.0).unwrap_err().to_string();
        assert!(err.contains("1048576x1048576") && err.contains("GiB"), "{err}");
        assert!(Heightmap::new(3, 3, f64::NAN).is_err());
        assert!(Heightmap::new(3, 3, 0.0).is_err());
    }

    #[test]
    fn indexing_is_row_major() {
        let g = Grid::from_fn(3, 2, 1.0, |x, y| (y * 10 + x) as f32).unwrap();
        assert_eq!(g.as_slice(), &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0]);
        assert_eq!(g[(2, 1)], 12.0);
        assert_eq!(g.get(3, 0), None);
        assert_eq!(g.row(1), &[10.0, 11.0, 12.0]);
        assert_eq!(g.rows().count(), 2);
    }

    #[test]
    #[should_panic(expected = "cell (3, 0) is outside the 3x2 grid")]
    fn index_out_of_bounds_names_the_cell() {
        let g = Heightmap::new(3, 2, 1.0).unwrap();
        let _ = g[(3, 0)];
    }

    #[test]
    fn stats_match_reference_values() {
        let g = Grid::from_vec(2, 2, 1.0, vec![1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let s = g.stats();
        assert_eq!((s.min, s.max), (1.0, 4.0));
        assert_eq!(s.mean, 2.5);
        assert!((s.std - 1.25f64.sqrt()).abs() < 1e-12);
        assert_eq!(g.sum_f64(), 10.0);
    }

    /// Over many pieces, some holding non-finite cells and one holding nothing else, the
    /// merged mean and deviation equal a plain two-pass sum over the finite cells.
    #[test]
    fn stats_over_pieces_equal_a_two_pass_sum() {
        let (w, h) = (301, 97);
        let mut data: Vec<f32> = (0..w * h).map(|i| ((i * 7919) % 1013) as f32 * 0.37 - 50.0).collect();
        for i in (0..w * h).step_by(37) {
            data[i] = if i % 2 == 0 { f32::NAN } else { f32::INFINITY };
        }
        data[8192..12288].fill(f32::NAN); // the third piece of 4096 cells
        let g = Grid::from_vec(w, h, 1.0, data.clone()).unwrap();
        let finite: Vec<f64> = data.iter().filter(|v| v.is_finite()).map(|&v| v as f64).collect();
        let mean = finite.iter().sum::<f64>() / finite.len() as f64;
        let std = (finite.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / finite.len() as f64).sqrt();
        let s = g.stats();
        assert_eq!(s.non_finite, data.len() - finite.len());
        assert!((s.mean - mean).abs() < 1e-12 * mean.abs(), "{} vs {mean}", s.mean);
        assert!((s.std - std).abs() < 1e-12 * std, "{} vs {std}", s.std);
        let nan = Grid::from_vec(2, 1, 1.0, vec![f32::NAN; 2]).unwrap().stats();
        assert!(nan.mean.is_nan() && nan.std.is_nan() && nan.non_finite == 2);
    }

    #[test]
    fn normalize_is_inverse_lerp() {
        let mut g = Grid::from_vec(3, 1, 1.0, vec![-2.0f32, 0.0, 2.0]).unwrap();
        g.normalize();
        assert_eq!(g.as_slice(), &[0.0, 0.5, 1.0]);
        let mut flat = Heightmap::filled(2, 2, 1.0, 7.0).unwrap();
        flat.normalize();
        assert!(flat.as_slice().iter().all(|&v| v == 0.0));
    }

    #[test]
    fn clamp_scale_crop() {
        let mut g = Grid::from_fn(4, 4, 2.0, |x, y| (x + 4 * y) as f32).unwrap();
        let c = g.crop(1, 2, 2, 2).unwrap();
        assert_eq!(c.as_slice(), &[9.0, 10.0, 13.0, 14.0]);
        assert!(g.crop(3, 3, 2, 1).is_err());
        g.clamp(2.0, 5.0).unwrap();
        assert_eq!(g.min_max(), Some((2.0, 5.0)));
        g.scale(2.0, 1.0).unwrap();
        assert_eq!(g.min_max(), Some((5.0, 11.0)));
        assert!(g.scale(f32::NAN, 0.0).is_err());
    }

    #[test]
    fn resample_keeps_corners_and_linear_ramps() {
        let g = Grid::from_fn(3, 3, 1.0, |x, y| (x + y) as f32).unwrap();
        let r = g.resample(5, 5).unwrap();
        assert_eq!(r[(0, 0)], 0.0);
        assert_eq!(r[(4, 4)], 4.0);
        assert_eq!(r[(1, 0)], 0.5);
        assert_eq!(r.cell_size(), 0.5);
    }
}
