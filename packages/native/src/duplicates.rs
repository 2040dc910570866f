//! Finding steps of one lowering that share a name and version.

use crate::graph::{ByteTable, InputError};
use crate::xxh64::xxh64;

/// Pairs `(i, j)`, flattened: node `i` has the same name bytes and version id as node `j`,
/// and `j` is the first node (lowest index) that does. Ordered by `i`. Empty when every
/// `(name, version)` is unique.
pub fn duplicate_steps(names: &ByteTable, version_of: &[u32]) -> Result<Vec<u32>, InputError> {
    let n = names.len();
    if version_of.len() != n {
        return Err(InputError(format!(
            "versionOf must have n = {n} entries (n from nameOffsets), got {}",
            version_of.len()
        )));
    }
    // Sort (key, index) so equal steps sit next to each other, lowest index first.
    let mut keyed: Vec<(u64, u32)> = (0..n)
        .map(|i| (xxh64(names.get(i), version_of[i] as u64), i as u32))
        .collect();
    keyed.sort_unstable();
    let same = |a: u32, b: u32| {
        version_of[a as usize] == version_of[b as usize] && names.get(a as usize) == names.get(b as usize)
    };
    let mut pairs: Vec<(u32, u32)> = Vec::new();
    let mut run = 0;
    while run < keyed.len() {
        let mut end = run + 1;
        while end < keyed.len() && keyed[end].0 == keyed[run].0 {
            end += 1;
        }
        // A run of equal keys: usually one node; with a hash collision, compare for real.
        for k in run + 1..end {
            let i = keyed[k].1;
            if let Some(&(_, j)) = keyed[run..k].iter().find(|&&(_, j)| same(i, j)) {
                pairs.push((i, j));
            }
        }
        run = end;
    }
    pairs.sort_unstable();
    Ok(pairs.into_iter().flat_map(|(i, j)| [i, j]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(names: &[&str]) -> (Vec<u32>, Vec<u8>) {
        let mut off = vec![0u32];
        let mut bytes = vec![];
        for s in names {
            bytes.extend_from_slice(s.as_bytes());
            off.push(bytes.len() as u32);
        }
        (off, bytes)
    }

    fn dups(names: &[&str], versions: &[u32]) -> Vec<u32> {
        let (off, bytes) = table(names);
        duplicate_steps(&ByteTable::new(&off, &bytes, names.len(), "n", "n").unwrap(), versions).unwrap()
    }

    #[test]
    fn finds_each_repeat_with_its_first_occurrence() {
        assert_eq!(dups(&[], &[]), Vec::<u32>::new());
        assert_eq!(dups(&["a", "b", "c"], &[0, 0, 0]), Vec::<u32>::new());
        assert_eq!(dups(&["a", "a"], &[0, 1]), Vec::<u32>::new());
        assert_eq!(
            dups(&["a", "b", "a", "a", "b"], &[0, 0, 0, 0, 0]),
            vec![2, 0, 3, 0, 4, 1]
        );
        // "ab" + "" vs "a" + "b": names are compared whole.
        assert_eq!(dups(&["ab", "a"], &[0, 0]), Vec::<u32>::new());
    }

    #[test]
    fn many_unique_names_and_lengths_checked() {
        let names: Vec<String> = (0..10_000).map(|i| format!("n{i}")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        assert!(dups(&refs, &vec![0; 10_000]).is_empty());
        let (off, bytes) = table(&["a"]);
        let t = ByteTable::new(&off, &bytes, 1, "n", "n").unwrap();
        assert!(
            duplicate_steps(&t, &[])
                .unwrap_err()
                .0
                .contains("versionOf must have n = 1")
        );
    }
}
