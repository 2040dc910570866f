//! Kahn's algorithm with a deterministic order and a deterministic cycle report.

use crate::graph::{Csr, Order};

/// Dependencies first. The queue starts with the dependency-free nodes in index order and is
/// FIFO; an emitted node releases its dependents in increasing index order. In-degree counts
/// duplicate dependencies, and the reverse graph lists them twice, so duplicates balance out.
pub fn toposort(g: &Csr) -> Order {
    let n = g.len();
    let mut indeg: Vec<u32> = (0..n).map(|i| g.deps_of(i).len() as u32).collect();
    let (rstart, rev) = g.reverse();
    let mut order: Vec<u32> = Vec::with_capacity(n);
    order.extend((0..n as u32).filter(|&i| indeg[i as usize] == 0));
    let mut head = 0;
    while head < order.len() {
        let u = order[head] as usize;
        head += 1;
        for &v in &rev[rstart[u] as usize..rstart[u + 1] as usize] {
            let d = &mut indeg[v as usize];
            *d -= 1;
            if *d == 0 {
                order.push(v);
            }
        }
    }
    if order.len() == n {
        Order::Done(order)
    } else {
        Order::Cycle(find_cycle(g, &order))
    }
}

/// Called when `emitted` misses some nodes. Walks from the smallest-index node not emitted,
/// always to its first listed dependency not emitted (one exists: its in-degree never reached
/// zero), until a node repeats; the cycle is the walk from that node's first occurrence.
pub fn find_cycle(g: &Csr, emitted: &[u32]) -> Vec<u32> {
    let n = g.len();
    let mut done = vec![false; n];
    for &u in emitted {
        done[u as usize] = true;
    }
    let mut pos = vec![u32::MAX; n];
    let mut walk: Vec<u32> = Vec::new();
    let mut u = done
        .iter()
        .position(|&d| !d)
        .expect("find_cycle called without a cycle");
    loop {
        if pos[u] != u32::MAX {
            return walk.split_off(pos[u] as usize);
        }
        pos[u] = walk.len() as u32;
        walk.push(u as u32);
        u = *g
            .deps_of(u)
            .iter()
            .find(|&&d| !done[d as usize])
            .expect("a blocked node has a blocked dependency") as usize;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testjson::{csr_of, read_golden};

    fn sort(lists: &[&[u32]]) -> Order {
        let mut offsets = vec![0u32];
        let mut deps = Vec::new();
        for l in lists {
            deps.extend_from_slice(l);
            offsets.push(deps.len() as u32);
        }
        toposort(&Csr::new(&offsets, &deps).unwrap())
    }

    #[test]
    fn golden_graphs() {
        let g = read_golden("graphs.json");
        let cases = g.at("toposort").as_array();
        assert!(!cases.is_empty());
        for c in cases {
            let (offsets, deps) = csr_of(c.at("deps"));
            let got = toposort(&Csr::new(&offsets, &deps).unwrap());
            let want = match c.get("order") {
                Some(o) => Order::Done(o.as_u32s()),
                None => Order::Cycle(c.at("cycle").as_u32s()),
            };
            assert_eq!(got, want, "{}", c.at("name").as_str());
        }
    }

    #[test]
    fn edge_cases() {
        assert_eq!(sort(&[]), Order::Done(vec![]));
        assert_eq!(sort(&[&[0]]), Order::Cycle(vec![0]));
        assert_eq!(sort(&[&[], &[0, 0], &[1, 0, 1]]), Order::Done(vec![0, 1, 2]));
        // FIFO: 2 and 1 both become ready after 0; dependents are released in index order.
        assert_eq!(sort(&[&[3], &[0], &[0], &[]]), Order::Done(vec![3, 0, 1, 2]));
        // 0 -> 1 -> 2 -> 1: the walk starts at 0 but the cycle is [1, 2].
        assert_eq!(sort(&[&[1], &[2], &[1]]), Order::Cycle(vec![1, 2]));
        assert_eq!(sort(&[&[], &[2, 0], &[1]]), Order::Cycle(vec![1, 2]));
    }

    #[test]
    fn long_chain_is_iterative() {
        let n = 1_000_000u32;
        let offsets: Vec<u32> = (0..=n).map(|i| i.saturating_sub(1)).collect();
        let deps: Vec<u32> = (0..n - 1).collect();
        match toposort(&Csr::new(&offsets, &deps).unwrap()) {
            Order::Done(o) => assert!(o.iter().enumerate().all(|(i, &v)| v as usize == i)),
            Order::Cycle(_) => panic!("no cycle expected"),
        }
    }
}
