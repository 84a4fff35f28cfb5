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
    /// Recipe names, in the order of [`Neighbourhood::from_name`].
    pub const NAMES: &'static [&'static str] = &["moore", "von-neumann", "rotated-von-neumann"];

    /// Parses a recipe name (`moore`, `von-neumann`, `rotated-von-neumann`).
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "moore" => Ok(Self::Moore),
            "von-neumann" => Ok(Self::VonNeumann),
            "rotated-von-neumann" => Ok(Self::RotatedVonNeumann),
            _ => Err(Error::param("neighbourhood", name, "one of moore, von-neumann, rotated-von-neumann")),
        }
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
    /// Recipe names.
    pub const NAMES: &'static [&'static str] = &["closed", "wrap"];

    /// Parses a recipe name (`closed`, `wrap`).
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "closed" => Ok(Self::Closed),
            "wrap" => Ok(Self::Wrap),
            _ => Err(Error::param("boundary", name, "one of closed, wrap")),
        }
    }
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
    linear: Vec<isize>,
}

impl Stencil {
    pub fn new(topo: Topology, neighbourhood: Neighbourhood) -> Self {
        let offsets = neighbourhood.offsets();
        let linear =
            offsets.iter().map(|&(dx, dy)| dy as isize * topo.width as isize + dx as isize).collect();
        Self { topo, offsets, linear }
    }

    /// Calls `f(j)` for each neighbour index `j` of cell `(x, y)`, in offset order.
    #[inline(always)]
    pub fn for_each(&self, x: usize, y: usize, mut f: impl FnMut(usize)) {
        let t = &self.topo;
        if x > 0 && y > 0 && x + 1 < t.width && y + 1 < t.height {
            let i = (y * t.width + x) as isize;
            for &o in &self.linear {
                f((i + o) as usize);
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
