//! Neighbourhoods and boundaries: which cells are neighbours, and what lies beyond the edge.
//!
//! Two neighbour orders exist, both kept because results depend on them (ties in
//! steepest-descent choices and the order of floating-point sums), so changing either would
//! change every output that uses it:
//! - [`D8`]: the 8 neighbours clockwise from east (E, SE, S, SW, W, NW, N, NE). Hydrology
//!   (Priority-Flood, D8 and D∞ routing, lakes, rivers) uses it; a D8 direction code is an
//!   index into it.
//! - [`Neighbourhood::offsets`]: row-major (north row first, west to east). The cellular
//!   erosions and the terrain metrics use it.

use crate::{Error, Result};

/// The 8 neighbours in the fixed hydrology order (E, SE, S, SW, W, NW, N, NE), as `(dx, dy)`
/// with `y` growing southwards. A D8 direction `k` means the neighbour `D8[k]`; ties between
/// equally steep neighbours go to the lowest `k`.
pub const D8: [(i32, i32); 8] = [(1, 0), (1, 1), (0, 1), (-1, 1), (-1, 0), (-1, -1), (0, -1), (1, -1)];

/// The length, in cells, of the link between cells `a` and `b` (row-major indices on a grid
/// `width` cells wide) that are [`D8`] neighbours: √2 diagonally, else 1 (a cell and itself
/// give 1). Flow-path lengths (Hack's law, the floodplains) add these up.
#[inline]
pub fn d8_link_length(a: usize, b: usize, width: usize) -> f64 {
    if a % width != b % width && a / width != b / width { std::f64::consts::SQRT_2 } else { 1.0 }
}

/// Which cells count as neighbours of a cell (Olsen 2004, Fig. 13; seed 001 §3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Neighbourhood {
    /// The 8 surrounding cells (Musgrave et al.'s reference thermal erosion).
    #[default]
    Moore,
    /// The 4 axis neighbours (left, right, up, down).
    VonNeumann,
    /// The 4 diagonal neighbours: Olsen's "rotated" Von Neumann neighbourhood (our reading of
    /// his Fig. 13, see research notes §1), used by his optimised thermal erosion.
    RotatedVonNeumann,
}

impl Neighbourhood {
    /// Recipe names, in the order of [`Neighbourhood::ALL`].
    pub const NAMES: &'static [&'static str] = &["moore", "von-neumann", "rotated-von-neumann"];
    /// Every variant, in the order of [`Neighbourhood::NAMES`].
    pub const ALL: &'static [Self] = &[Self::Moore, Self::VonNeumann, Self::RotatedVonNeumann];

    /// Parses a recipe name (one of [`Neighbourhood::NAMES`]).
    pub fn from_name(name: &str) -> Result<Self> {
        from_name(Self::NAMES, Self::ALL, "neighbourhood", name)
    }

    /// This variant's recipe name.
    pub fn name(self) -> &'static str {
        name_of(Self::NAMES, Self::ALL, self)
    }

    /// The `(dx, dy)` offsets of the neighbours, row-major (see the module doc). Every set is symmetric (contains `-o` for
    /// each `o`), which the gather formulations rely on.
    pub fn offsets(self) -> &'static [(i32, i32)] {
        match self {
            Self::Moore => &[(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)],
            Self::VonNeumann => &[(0, -1), (-1, 0), (1, 0), (0, 1)],
            Self::RotatedVonNeumann => &[(-1, -1), (1, -1), (-1, 1), (1, 1)],
        }
    }
}

/// What lies beyond the map edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Boundary {
    /// Nothing: edge cells simply have fewer neighbours and no material leaves the map.
    #[default]
    Closed,
    /// Toroidal wrap (modulo), as in all of Olsen's 2004 experiments. Use on tileable maps.
    Wrap,
}

impl Boundary {
    /// Recipe names, in the order of [`Boundary::ALL`].
    pub const NAMES: &'static [&'static str] = &["closed", "wrap"];
    /// Every variant, in the order of [`Boundary::NAMES`].
    pub const ALL: &'static [Self] = &[Self::Closed, Self::Wrap];

    /// Parses a recipe name (one of [`Boundary::NAMES`]).
    pub fn from_name(name: &str) -> Result<Self> {
        from_name(Self::NAMES, Self::ALL, "boundary", name)
    }

    /// This variant's recipe name.
    pub fn name(self) -> &'static str {
        name_of(Self::NAMES, Self::ALL, self)
    }
}

/// The variant of `all` whose name in `names` is `name`; the error names the parameter `key`
/// and lists `names`. (The enums of this layer cannot use `step`'s `choice_enum!`, which sits
/// above `grid`; one name list per enum serves both directions.)
fn from_name<T: Copy>(names: &[&str], all: &[T], key: &str, name: &str) -> Result<T> {
    match names.iter().position(|n| *n == name) {
        Some(i) => Ok(all[i]),
        None => Err(Error::param(key, name, format!("one of {}", names.join(", ")))),
    }
}

/// The name in `names` of `value`, found in `all`.
fn name_of<T: Copy + PartialEq>(names: &[&'static str], all: &[T], value: T) -> &'static str {
    names[all.iter().position(|v| *v == value).expect("every variant is listed in ALL")]
}

/// Grid shape plus boundary rule: resolves a neighbour's linear index.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Topology {
    pub width: usize,
    pub height: usize,
    pub boundary: Boundary,
}

impl Topology {
    /// The linear index of `(x + dx, y + dy)`, or `None` beyond a closed edge.
    #[inline]
    pub fn neighbour(&self, x: usize, y: usize, dx: i32, dy: i32) -> Option<usize> {
        let nx = x as i64 + dx as i64;
        let ny = y as i64 + dy as i64;
        let (w, h) = (self.width as i64, self.height as i64);
        match self.boundary {
            Boundary::Closed => {
                if nx < 0 || ny < 0 || nx >= w || ny >= h {
                    None
                } else {
                    Some(ny as usize * self.width + nx as usize)
                }
            }
            Boundary::Wrap => Some(ny.rem_euclid(h) as usize * self.width + nx.rem_euclid(w) as usize),
        }
    }
}

/// Neighbour offsets resolved once for a grid: interior cells use precomputed linear offsets,
/// border cells go through [`Topology::neighbour`]. Both visit neighbours in the same order, so
/// results are identical whichever path a cell takes.
#[derive(Clone, Debug)]
pub(crate) struct Stencil {
    pub topo: Topology,
    offsets: &'static [(i32, i32)],
    /// The interior offsets in a fixed-size array (the first `offsets.len()` are used), so the
    /// interior loop has a constant trip count (4 or 8) the compiler unrolls.
    linear: [isize; 8],
}

impl Stencil {
    pub fn new(topo: Topology, neighbourhood: Neighbourhood) -> Self {
        let offsets = neighbourhood.offsets();
        let mut linear = [0isize; 8];
        for (l, &(dx, dy)) in linear.iter_mut().zip(offsets) {
            *l = dy as isize * topo.width as isize + dx as isize;
        }
        Self { topo, offsets, linear }
    }

    /// The neighbours' linear index offsets for interior cells (`j = i + o`), in offset order
    /// (the order [`Stencil::for_each`] visits them). A cell `(x, y)` is interior when
    /// `0 < x < width − 1` and `0 < y < height − 1`.
    pub fn interior_offsets(&self) -> &[isize] {
        &self.linear[..self.offsets.len()]
    }

    /// Calls `f(j)` for each neighbour index `j` of cell `(x, y)`, in offset order.
    #[inline(always)]
    pub fn for_each(&self, x: usize, y: usize, mut f: impl FnMut(usize)) {
        let t = &self.topo;
        if x > 0 && y > 0 && x + 1 < t.width && y + 1 < t.height {
            let i = (y * t.width + x) as isize;
            if self.offsets.len() == 4 {
                for &o in &self.linear[..4] {
                    f((i + o) as usize);
                }
            } else {
                for &o in &self.linear {
                    f((i + o) as usize);
                }
            }
        } else {
            for &(dx, dy) in self.offsets {
                if let Some(j) = t.neighbour(x, y, dx, dy) {
                    f(j);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {

    /// Side links are 1 cell long, diagonal ones √2, on every D8 direction of an inner cell.
    #[test]
    fn d8_link_lengths_are_one_and_root_two() {
        let w = 7usize;
        let c = 3 * w + 3;
        for &(dx, dy) in D8.iter() {
            let n = (c as i64 + dy as i64 * w as i64 + dx as i64) as usize;
            let want = if dx != 0 && dy != 0 { std::f64::consts::SQRT_2 } else { 1.0 };
            assert_eq!(d8_link_length(c, n, w), want, "({dx}, {dy})");
            assert_eq!(d8_link_length(n, c, w), want, "({dx}, {dy}) back");
        }
    }
    use super::*;

    #[test]
    fn names_and_variants_round_trip() {
        assert_eq!(Neighbourhood::NAMES.len(), Neighbourhood::ALL.len());
        for &n in Neighbourhood::ALL {
            assert_eq!(Neighbourhood::from_name(n.name()).unwrap(), n);
        }
        assert_eq!(Boundary::NAMES.len(), Boundary::ALL.len());
        for &b in Boundary::ALL {
            assert_eq!(Boundary::from_name(b.name()).unwrap(), b);
        }
        assert_eq!(Neighbourhood::RotatedVonNeumann.name(), "rotated-von-neumann");
        let e = Boundary::from_name("mirror").unwrap_err().to_string();
        assert_eq!(e, "invalid parameter `boundary` = mirror: allowed one of closed, wrap");
    }
}
