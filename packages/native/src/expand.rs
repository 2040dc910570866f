//! Post-order expansion from roots, skipping already-seen nodes and not descending into built ones.

use crate::graph::{Csr, InputError, Order};

/// Checks the per-call arguments of [`expand`] against a graph of `n` nodes.
pub fn check(n: usize, roots: &[u32], built: &[u8], seen: &[u8]) -> Result<(), InputError> {
    if let Some(k) = roots.iter().position(|&r| r as usize >= n) {
        return Err(InputError(format!(
            "roots[{k}] = {} is out of range for {n} nodes",
            roots[k]
        )));
    }
    if built.len() != n {
        return Err(InputError(format!(
            "built must have n = {n} entries, got {}",
            built.len()
        )));
    }
    if seen.len() != n {
        return Err(InputError(format!(
            "seen must have n = {n} entries, got {}",
            seen.len()
        )));
    }
    Ok(())
}

/// The iterative form of:
/// `for r of roots: visit(r)`; `visit(u)`: if `seen[u]` return; if `u` is on the stack, the
/// cycle is the stack from `u` to the top; push `u`; unless `built[u]`, visit each dependency
/// in listed order; pop `u`; `seen[u] = 1`; emit `u`.
/// `seen` keeps the marks of nodes emitted before a cycle was found.
pub fn expand(g: &Csr, roots: &[u32], built: &[u8], seen: &mut [u8]) -> Result<Order, InputError> {
    let n = g.len();
    check(n, roots, built, seen)?;
    let mut on_stack = vec![false; n];
    // (node, next dependency position, end of its dependencies)
    let mut stack: Vec<(u32, u32, u32)> = Vec::new();
    let mut out: Vec<u32> = Vec::new();
    let frame = |u: u32| -> (u32, u32, u32) {
        if built[u as usize] != 0 {
            (u, 0, 0)
        } else {
            let (a, b) = g.span(u as usize);
            (u, a, b)
        }
    };
    let all = g.all_deps();
    for &r in roots {
        if seen[r as usize] != 0 {
            continue;
        }
        on_stack[r as usize] = true;
        stack.push(frame(r));
        while let Some(top) = stack.last_mut() {
            if top.1 < top.2 {
                let d = all[top.1 as usize];
                top.1 += 1;
                if seen[d as usize] != 0 {
                    continue;
                }
                if on_stack[d as usize] {
                    let at = stack.iter().rposition(|f| f.0 == d).unwrap();
                    return Ok(Order::Cycle(stack[at..].iter().map(|f| f.0).collect()));
                }
                on_stack[d as usize] = true;
                stack.push(frame(d));
            } else {
                let u = top.0;
                stack.pop();
                on_stack[u as usize] = false;
                seen[u as usize] = 1;
                out.push(u);
            }
        }
    }
    Ok(Order::Done(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testjson::{csr_of, read_golden};

    fn mark(n: usize, idx: &[u32]) -> Vec<u8> {
        let mut v = vec![0u8; n];
        for &i in idx {
            v[i as usize] = 1;
        }
        v
    }

    #[test]
    fn golden_graphs() {
        let g = read_golden("graphs.json");
        let cases = g.at("expand").as_array();
        assert!(!cases.is_empty());
        for c in cases {
            let name = c.at("name").as_str();
            let (offsets, deps) = csr_of(c.at("deps"));
            let csr = Csr::new(&offsets, &deps).unwrap();
            let n = csr.len();
            let built = mark(n, &c.at("built").as_u32s());
            let mut seen = mark(n, &c.at("seen").as_u32s());
            for call in c.at("calls").as_array() {
                let got = expand(&csr, &call.at("roots").as_u32s(), &built, &mut seen).unwrap();
                let want = match call.get("order") {
                    Some(o) => Order::Done(o.as_u32s()),
                    None => Order::Cycle(call.at("cycle").as_u32s()),
                };
                assert_eq!(got, want, "{name}");
            }
            assert_eq!(seen, mark(n, &c.at("seenAfter").as_u32s()), "{name} seen");
        }
    }

    #[test]
    fn edge_cases() {
        let offsets = [0, 0, 1, 3];
        let deps = [0, 1, 0];
        let g = Csr::new(&offsets, &deps).unwrap();
        let mut seen = vec![0u8; 3];
        assert_eq!(
            expand(&g, &[2], &[0, 0, 0], &mut seen).unwrap(),
            Order::Done(vec![0, 1, 2])
        );
        assert_eq!(expand(&g, &[2, 1], &[0, 0, 0], &mut seen).unwrap(), Order::Done(vec![]));
        let mut seen = vec![0u8; 3];
        assert_eq!(
            expand(&g, &[2], &[0, 1, 0], &mut seen).unwrap(),
            Order::Done(vec![1, 0, 2])
        );
        assert!(
            expand(&g, &[3], &[0; 3], &mut [0; 3])
                .unwrap_err()
                .0
                .contains("roots[0]")
        );
        assert!(expand(&g, &[0], &[0; 2], &mut [0; 3]).unwrap_err().0.contains("built"));
        assert!(expand(&g, &[0], &[0; 3], &mut [0; 4]).unwrap_err().0.contains("seen"));
        // self-loop, and a cycle reached through a prefix that stays on the stack
        let (o, d) = ([0u32, 1], [0u32]);
        assert_eq!(
            expand(&Csr::new(&o, &d).unwrap(), &[0], &[0], &mut [0]).unwrap(),
            Order::Cycle(vec![0])
        );
        let (o, d) = ([0u32, 1, 2, 3], [1u32, 2, 1]);
        let mut seen = vec![0u8; 3];
        assert_eq!(
            expand(&Csr::new(&o, &d).unwrap(), &[0], &[0; 3], &mut seen).unwrap(),
            Order::Cycle(vec![1, 2])
        );
        assert_eq!(seen, vec![0, 0, 0]);
        let g = Csr::new(&[0], &[]).unwrap();
        assert_eq!(expand(&g, &[], &[], &mut []).unwrap(), Order::Done(vec![]));
    }

    #[test]
    fn deep_chain_is_iterative() {
        let n = 1_000_000u32;
        let offsets: Vec<u32> = (0..=n).map(|i| i.saturating_sub(1)).collect();
        let deps: Vec<u32> = (0..n - 1).collect();
        let g = Csr::new(&offsets, &deps).unwrap();
        let mut seen = vec![0u8; n as usize];
        match expand(&g, &[n - 1], &vec![0; n as usize], &mut seen).unwrap() {
            Order::Done(o) => assert_eq!(o.len(), n as usize),
            Order::Cycle(_) => panic!("no cycle expected"),
        }
    }
}
