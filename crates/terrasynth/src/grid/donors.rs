//! Donor lists: for every cell, the cells that drain into it, packed in one array (CSR).

/// The donors of each cell of a receiver array, packed: cell `c`'s donors are
/// `donors[first[c]..first[c + 1]]`, in increasing cell order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Donors {
    first: Vec<usize>,
    donors: Vec<u32>,
}

impl Donors {
    /// From `receiver[c]` for every cell `c`; a cell whose `drains(c, receiver[c])` is false
    /// (an outlet, a pit, no receiver) is nobody's donor.
    pub(crate) fn new(receiver: &[u32], drains: impl Fn(usize, u32) -> bool) -> Self {
        let n = receiver.len();
        let mut first = vec![0usize; n + 1];
        for (c, &r) in receiver.iter().enumerate() {
            if drains(c, r) {
                first[r as usize + 1] += 1;
            }
        }
        for k in 1..=n {
            first[k] += first[k - 1];
        }
        let mut fill = first.clone();
        let mut donors = vec![0u32; first[n]];
        for (c, &r) in receiver.iter().enumerate() {
            if drains(c, r) {
                donors[fill[r as usize]] = c as u32;
                fill[r as usize] += 1;
            }
        }
        Self { first, donors }
    }

    /// The donors of cell `c`.
    #[inline]
    pub(crate) fn of(&self, c: usize) -> &[u32] {
        &self.donors[self.first[c]..self.first[c + 1]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn donors_are_the_cells_that_drain_into_each_cell_in_order() {
        // 0 → 2, 1 → 2, 2 → 3, 3 outlet (itself), 4 → 2, 5 none.
        let receiver = [2, 2, 3, 3, 2, u32::MAX];
        let d = Donors::new(&receiver, |c, r| r != u32::MAX && r as usize != c);
        assert_eq!(d.of(2), &[0, 1, 4]);
        assert_eq!(d.of(3), &[2]);
        assert!(d.of(0).is_empty() && d.of(5).is_empty());
    }
}
