//! Validated views of the CSR inputs shared by toposort, expand and fingerprintAll.

use std::fmt;

/// Malformed input: the message names the offending argument. Surfaces in JS as
/// `CAIRN_NATIVE_BAD_INPUT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError(pub String);

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The outcome of an ordering: the order, or a cycle as a path of node indices where
/// `cycle[k+1]` is a dependency of `cycle[k]` and the last depends on the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    Done(Vec<u32>),
    Cycle(Vec<u32>),
}

/// Checks that `offsets` has `n + 1` entries starting at 0, never decreasing, ending at `data_len`.
fn check_offsets(offsets: &[u32], data_len: usize, name: &str, data_name: &str) -> Result<(), InputError> {
    let Some(&first) = offsets.first() else {
        return Err(InputError(format!(
            "{name} must have n + 1 >= 1 entries, got an empty array"
        )));
    };
    if first != 0 {
        return Err(InputError(format!("{name}[0] must be 0, got {first}")));
    }
    for (i, w) in offsets.windows(2).enumerate() {
        if w[1] < w[0] {
            return Err(InputError(format!(
                "{name} must be monotone: {name}[{}] = {} < {name}[{i}] = {}",
                i + 1,
                w[1],
                w[0]
            )));
        }
    }
    let last = *offsets.last().unwrap() as usize;
    if last != data_len {
        return Err(InputError(format!(
            "{name}[{}] = {last} must equal {data_name}.length = {data_len}",
            offsets.len() - 1
        )));
    }
    Ok(())
}

/// A graph in CSR form: node `i` depends on `deps[offsets[i]..offsets[i+1]]`.
#[derive(Debug, Clone, Copy)]
pub struct Csr<'a> {
    offsets: &'a [u32],
    deps: &'a [u32],
}

impl<'a> Csr<'a> {
    /// Validates lengths, monotone offsets and dependency indices.
    pub fn new(offsets: &'a [u32], deps: &'a [u32]) -> Result<Self, InputError> {
        check_offsets(offsets, deps.len(), "offsets", "deps")?;
        let n = offsets.len() - 1;
        if let Some(k) = deps.iter().position(|&d| d as usize >= n) {
            return Err(InputError(format!(
                "deps[{k}] = {} is out of range for {n} nodes",
                deps[k]
            )));
        }
        Ok(Csr { offsets, deps })
    }

    /// Number of nodes.
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True for the graph with no nodes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Node `i`'s dependencies in listed order.
    #[inline]
    pub fn deps_of(&self, i: usize) -> &'a [u32] {
        &self.deps[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// The position range of node `i`'s dependencies within [`Csr::all_deps`].
    #[inline]
    pub fn span(&self, i: usize) -> (u32, u32) {
        (self.offsets[i], self.offsets[i + 1])
    }

    /// Every dependency entry, node by node.
    #[inline]
    pub fn all_deps(&self) -> &'a [u32] {
        self.deps
    }

    /// Number of edges.
    #[inline]
    pub fn edges(&self) -> usize {
        self.deps.len()
    }

    /// The reverse graph: `(offsets, dependents)`, node `d`'s dependents listed in increasing
    /// index order (a node that lists `d` twice appears twice).
    pub fn reverse(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.len();
        let mut start = vec![0u32; n + 1];
        for &d in self.deps {
            start[d as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut cursor = start[..n].to_vec();
        let mut rev = vec![0u32; self.deps.len()];
        for i in 0..n {
            for &d in self.deps_of(i) {
                let c = &mut cursor[d as usize];
                rev[*c as usize] = i as u32;
                *c += 1;
            }
        }
        (start, rev)
    }
}

/// Variable-length byte strings, one per node, packed CSR-style.
#[derive(Debug, Clone, Copy)]
pub struct ByteTable<'a> {
    offsets: &'a [u32],
    bytes: &'a [u8],
}

impl<'a> ByteTable<'a> {
    /// Validates a table for `n` nodes; `name` is the argument name used in messages.
    pub fn new(
        offsets: &'a [u32],
        bytes: &'a [u8],
        n: usize,
        name: &str,
        bytes_name: &str,
    ) -> Result<Self, InputError> {
        if offsets.len() != n + 1 {
            return Err(InputError(format!(
                "{name} must have n + 1 = {} entries (n from offsets), got {}",
                n + 1,
                offsets.len()
            )));
        }
        Self::any(offsets, bytes, name, bytes_name)
    }

    /// Validates a table whose entry count is whatever its offsets say.
    pub fn any(offsets: &'a [u32], bytes: &'a [u8], name: &str, bytes_name: &str) -> Result<Self, InputError> {
        check_offsets(offsets, bytes.len(), name, bytes_name)?;
        Ok(ByteTable { offsets, bytes })
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// True for a table with no entries.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Entry `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &'a [u8] {
        &self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_argument() {
        assert!(Csr::new(&[], &[]).unwrap_err().0.contains("offsets"));
        assert!(Csr::new(&[1], &[]).unwrap_err().0.contains("offsets[0]"));
        assert!(Csr::new(&[0, 2, 1], &[0]).unwrap_err().0.contains("monotone"));
        assert!(Csr::new(&[0, 1], &[]).unwrap_err().0.contains("deps.length"));
        assert!(Csr::new(&[0, 1], &[1]).unwrap_err().0.contains("deps[0] = 1"));
        let g = Csr::new(&[0], &[]).unwrap();
        assert_eq!(g.len(), 0);
        assert!(
            ByteTable::new(&[0, 1], b"a", 2, "nameOffsets", "names")
                .unwrap_err()
                .0
                .contains("nameOffsets")
        );
        assert!(
            ByteTable::new(&[0, 1, 3], b"ab", 2, "nameOffsets", "names")
                .unwrap_err()
                .0
                .contains("names.length")
        );
    }

    #[test]
    fn reverse_lists_dependents_in_increasing_order_with_duplicates() {
        // 0 <- 2, 0 <- 1 (twice), 1 <- 2
        let offsets = [0, 0, 2, 4];
        let deps = [0, 0, 1, 0];
        let g = Csr::new(&offsets, &deps).unwrap();
        let (start, rev) = g.reverse();
        assert_eq!(start, vec![0, 3, 4, 4]);
        assert_eq!(rev, vec![1, 1, 2, 2]);
    }
}
