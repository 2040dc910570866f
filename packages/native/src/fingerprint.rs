//! Merkle step hashes for a whole graph, exactly as docs/identity.md defines them.

use std::cmp::Ordering;

use crate::graph::{ByteTable, Csr, Order};
use crate::toposort::toposort;
use crate::xxh64::{write_hex, xxh64};

/// Appends `s` (UTF-8) as a JSON string literal, escaping as `JSON.stringify` does.
pub fn push_json_string(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut start = 0;
    for (i, &c) in s.iter().enumerate() {
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0a => b"\\n",
            0x0c => b"\\f",
            0x0d => b"\\r",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&s[start..i]);
        if esc.is_empty() {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[(c >> 4) as usize], HEX[(c & 0xf) as usize]]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
    }
    out.extend_from_slice(&s[start..]);
    out.push(b'"');
}

/// Compares `na + "-" + ha` with `nb + "-" + hb` bytewise (= by code point).
#[inline]
fn cmp_name_with_hash(na: &[u8], ha: &[u8], nb: &[u8], hb: &[u8]) -> Ordering {
    let m = na.len().min(nb.len());
    match na[..m].cmp(&nb[..m]) {
        Ordering::Equal => {}
        o => return o,
    }
    if na.len() == nb.len() {
        return ha.cmp(hb);
    }
    let ta = na[m..].iter().chain(b"-").chain(ha);
    let tb = nb[m..].iter().chain(b"-").chain(hb);
    ta.cmp(tb)
}

/// Hashes every node of `order` (a dependencies-first order of `g`) into `out`
/// (16 ASCII hex digits per node, node `i` at `[16i, 16i + 16)`).
pub fn fingerprint_into(g: &Csr, names: &ByteTable, attrs: &ByteTable, order: &[u32], out: &mut [u8]) {
    let mut buf: Vec<u8> = Vec::with_capacity(256);
    let mut sorted: Vec<u32> = Vec::new();
    for &u in order {
        let u = u as usize;
        sorted.clear();
        sorted.extend_from_slice(g.deps_of(u));
        if sorted.len() > 1 {
            sorted.sort_unstable_by(|&a, &b| {
                let (a, b) = (a as usize, b as usize);
                cmp_name_with_hash(
                    names.get(a),
                    &out[16 * a..16 * a + 16],
                    names.get(b),
                    &out[16 * b..16 * b + 16],
                )
            });
        }
        buf.clear();
        buf.extend_from_slice(b"{\"deps\":[");
        for (k, &d) in sorted.iter().enumerate() {
            let d = d as usize;
            if k > 0 {
                buf.push(b',');
            }
            // A name-with-hash needs escaping only where its name does.
            let start = buf.len();
            push_json_string(&mut buf, names.get(d));
            buf.pop();
            debug_assert!(buf.len() > start);
            buf.push(b'-');
            buf.extend_from_slice(&out[16 * d..16 * d + 16]);
            buf.push(b'"');
        }
        buf.extend_from_slice(b"],\"hashAttrs\":");
        buf.extend_from_slice(attrs.get(u));
        buf.extend_from_slice(b",\"name\":");
        push_json_string(&mut buf, names.get(u));
        buf.push(b'}');
        write_hex(xxh64(&buf, 0), &mut out[16 * u..16 * u + 16]);
    }
}

/// The result of [`fingerprint_all`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fingerprints {
    /// 16 ASCII hex digits per node.
    Hex(Vec<u8>),
    /// The same cycle report as [`toposort`].
    Cycle(Vec<u32>),
}

/// Every node's step hash. Tables must already be validated against `g`.
pub fn fingerprint_all(g: &Csr, names: &ByteTable, attrs: &ByteTable) -> Fingerprints {
    match toposort(g) {
        Order::Cycle(c) => Fingerprints::Cycle(c),
        Order::Done(order) => {
            let mut out = vec![0u8; 16 * g.len()];
            fingerprint_into(g, names, attrs, &order, &mut out);
            Fingerprints::Hex(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testjson::read_golden;

    struct Tables {
        offsets: Vec<u32>,
        deps: Vec<u32>,
        name_off: Vec<u32>,
        names: Vec<u8>,
        attr_off: Vec<u32>,
        attrs: Vec<u8>,
    }

    fn tables(nodes: &[(&str, &str, &[u32])]) -> Tables {
        let mut t = Tables {
            offsets: vec![0],
            deps: vec![],
            name_off: vec![0],
            names: vec![],
            attr_off: vec![0],
            attrs: vec![],
        };
        for (name, attrs, deps) in nodes {
            t.deps.extend_from_slice(deps);
            t.offsets.push(t.deps.len() as u32);
            t.names.extend_from_slice(name.as_bytes());
            t.name_off.push(t.names.len() as u32);
            t.attrs.extend_from_slice(attrs.as_bytes());
            t.attr_off.push(t.attrs.len() as u32);
        }
        t
    }

    fn run(t: &Tables) -> Fingerprints {
        let g = Csr::new(&t.offsets, &t.deps).unwrap();
        let names = ByteTable::new(&t.name_off, &t.names, g.len(), "nameOffsets", "names").unwrap();
        let attrs = ByteTable::new(&t.attr_off, &t.attrs, g.len(), "attrOffsets", "attrs").unwrap();
        fingerprint_all(&g, &names, &attrs)
    }

    #[test]
    fn golden_fingerprints() {
        let g = read_golden("fingerprints.json");
        let cases = g.at("cases").as_array();
        assert!(cases.len() >= 8);
        for c in cases {
            let nodes: Vec<(String, String, Vec<u32>)> = c
                .at("nodes")
                .as_array()
                .iter()
                .map(|n| {
                    (
                        n.at("name").as_str().to_owned(),
                        n.at("attrs").as_str().to_owned(),
                        n.at("deps").as_u32s(),
                    )
                })
                .collect();
            let refs: Vec<(&str, &str, &[u32])> = nodes
                .iter()
                .map(|(a, b, c)| (a.as_str(), b.as_str(), c.as_slice()))
                .collect();
            let want = match c.get("hashes") {
                Some(h) => Fingerprints::Hex(h.as_array().iter().flat_map(|x| x.as_str().bytes()).collect()),
                None => Fingerprints::Cycle(c.at("cycle").as_u32s()),
            };
            assert_eq!(run(&tables(&refs)), want, "{}", c.at("name").as_str());
        }
    }

    #[test]
    fn json_string_matches_json_stringify() {
        let mut out = Vec::new();
        push_json_string(&mut out, "a\"b\\c\u{8}\t\n\u{c}\r\u{1}\u{1f}\u{7f}é😀".as_bytes());
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"b\\\\c\\b\\t\\n\\f\\r\\u0001\\u001f\u{7f}é😀\""
        );
    }

    #[test]
    fn single_node_matches_identity_bytes() {
        let identity = br#"{"deps":[],"hashAttrs":{"lr":0.1},"name":"train"}"#;
        let mut want = [0u8; 16];
        write_hex(xxh64(identity, 0), &mut want);
        assert_eq!(
            run(&tables(&[("train", r#"{"lr":0.1}"#, &[])])),
            Fingerprints::Hex(want.to_vec())
        );
    }

    #[test]
    fn dependency_order_and_cycles() {
        let a = run(&tables(&[("x", "1", &[]), ("y", "2", &[]), ("z", "3", &[0, 1, 0])]));
        let b = run(&tables(&[("x", "1", &[]), ("y", "2", &[]), ("z", "3", &[1, 0, 0])]));
        assert_eq!(a, b);
        assert_eq!(run(&tables(&[("s", "{}", &[0])])), Fingerprints::Cycle(vec![0]));
        assert_eq!(run(&tables(&[])), Fingerprints::Hex(vec![]));
    }

    #[test]
    fn name_with_hash_order_is_bytewise_on_the_whole_string() {
        let h = b"0123456789abcdef";
        // "a-…" vs "a-b-…": '0' (0x30) < 'b' (0x62)
        assert_eq!(cmp_name_with_hash(b"a", h, b"a-b", h), Ordering::Less);
        // "a-…" vs "a0-…": '-' (0x2d) < '0'
        assert_eq!(cmp_name_with_hash(b"a", h, b"a0", h), Ordering::Less);
        // "a!-…" vs "a-…": '!' (0x21) < '-'
        assert_eq!(cmp_name_with_hash(b"a!", h, b"a", h), Ordering::Less);
        assert_eq!(cmp_name_with_hash(b"a", b"1", b"a", b"0"), Ordering::Greater);
        // U+FF5E (EF BD 9E) sorts before U+1F600 (F0 9F 98 80) by code point.
        assert_eq!(
            cmp_name_with_hash("～".as_bytes(), h, "😀".as_bytes(), h),
            Ordering::Less
        );
    }
}
