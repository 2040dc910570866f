//! Merkle step hashes for a whole graph, exactly as docs/identity.md defines them.

use std::cmp::Ordering;

use crate::graph::{ByteTable, Csr, InputError, Order};
use crate::toposort::toposort;
use crate::xxh64::{write_hex, xxh64};

/// Appends `s` (UTF-8) as a JSON string literal, escaping as `JSON.stringify` does.
pub fn push_json_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    push_json_body(out, s);
    out.push(b'"');
}

/// Appends `s` (UTF-8) escaped as inside a JSON string literal, without the quotes.
pub fn push_json_body(out: &mut Vec<u8>, s: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
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

/// Scratch buffers reused across nodes.
#[derive(Default)]
struct Scratch {
    buf: Vec<u8>,
    sorted: Vec<u32>,
}

/// Hashes node `u`, whose dependencies are already hashed in `out`, with `attrs` as its
/// canonical `hashAttrs` text; writes its 16 hex digits to `out[16u..16u + 16]`.
fn hash_node(g: &Csr, names: &ByteTable, u: usize, attrs: &[u8], out: &mut [u8], s: &mut Scratch) {
    let (buf, sorted) = (&mut s.buf, &mut s.sorted);
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
        buf.push(b'"');
        push_json_body(buf, names.get(d));
        buf.push(b'-');
        buf.extend_from_slice(&out[16 * d..16 * d + 16]);
        buf.push(b'"');
    }
    buf.extend_from_slice(b"],\"hashAttrs\":");
    buf.extend_from_slice(attrs);
    buf.extend_from_slice(b",\"name\":");
    push_json_string(buf, names.get(u));
    buf.push(b'}');
    write_hex(xxh64(buf, 0), &mut out[16 * u..16 * u + 16]);
}

/// Hashes every node of `order` (a dependencies-first order of `g`) into `out`
/// (16 ASCII hex digits per node, node `i` at `[16i, 16i + 16)`; `out` is overwritten). A node
/// whose 16 bytes in `known` are non-zero is taken as hashed (see [`check_known`]) and copied.
pub fn fingerprint_into(
    g: &Csr,
    names: &ByteTable,
    attrs: &ByteTable,
    order: &[u32],
    known: Option<&[u8]>,
    out: &mut [u8],
) {
    match known {
        Some(k) => out.copy_from_slice(k),
        None => out.fill(0),
    }
    let mut s = Scratch::default();
    for &u in order {
        let u = u as usize;
        if out[16 * u] != 0 {
            continue;
        }
        hash_node(g, names, u, attrs.get(u), out, &mut s);
    }
}

/// Checks hashes given in advance: `16 * n` bytes where each node's 16 are either all zero
/// (to be computed) or 16 lowercase hex digits (already known).
pub fn check_known(known: &[u8], n: usize) -> Result<(), InputError> {
    if known.len() != 16 * n {
        return Err(InputError(format!(
            "known must have 16 * n = {} bytes (n from offsets), got {}",
            16 * n,
            known.len()
        )));
    }
    for (i, h) in known.chunks_exact(16).enumerate() {
        let zero = h.iter().all(|&b| b == 0);
        let hex = h.iter().all(|&b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !zero && !hex {
            return Err(InputError(format!(
                "known[{}..{}] must be 16 lowercase hex digits or all zero",
                16 * i,
                16 * i + 16
            )));
        }
    }
    Ok(())
}

/// One lowering's steps (`apply` handles), numbered dependencies first: every dependency
/// index is below its dependent's. What docs/identity.md hashes for a lowered step is
/// derived here instead of being built as text by the caller.
#[derive(Debug, Clone, Copy)]
pub struct Lowered<'a> {
    /// Node `i` depends on `graph.deps_of(i)`, each `< i`, in the handle's first-seen order.
    pub graph: Csr<'a>,
    /// Step names.
    pub names: ByteTable<'a>,
    /// Node `i`'s version is `versions.get(version_of[i])`.
    pub version_of: &'a [u32],
    /// The distinct versions.
    pub versions: ByteTable<'a>,
    /// Config fingerprints (XXH64 of each step's canonical inputs text), 16 hex digits per node.
    pub fingerprints: &'a [u8],
    /// Canonical members placed after `"deps"` in `hashAttrs` (e.g. `,"expectedFingerprint":"…"`); usually empty.
    pub extras: ByteTable<'a>,
}

impl<'a> Lowered<'a> {
    /// Checks what the tables cannot check themselves: dependencies first, versions in range.
    pub fn check(self) -> Result<Self, InputError> {
        let n = self.graph.len();
        if self.version_of.len() != n {
            return Err(InputError(format!(
                "versionOf must have n = {n} entries (n from offsets), got {}",
                self.version_of.len()
            )));
        }
        if self.fingerprints.len() != 16 * n {
            return Err(InputError(format!(
                "fingerprints must have 16 * n = {} bytes (n from offsets), got {}",
                16 * n,
                self.fingerprints.len()
            )));
        }
        let m = self.versions.len();
        if let Some(i) = self.version_of.iter().position(|&v| v as usize >= m) {
            return Err(InputError(format!(
                "versionOf[{i}] = {} is out of range for {m} versions",
                self.version_of[i]
            )));
        }
        for i in 0..n {
            if let Some(&d) = self.graph.deps_of(i).iter().find(|&&d| d as usize >= i) {
                return Err(InputError(format!(
                    "node {i} depends on node {d}: lowered steps must be numbered dependencies first"
                )));
            }
        }
        Ok(self)
    }

    fn ident(&self, i: usize, out: &mut Vec<u8>) {
        out.push(b'"');
        push_json_body(out, self.names.get(i));
        out.push(b'@');
        push_json_body(out, self.versions.get(self.version_of[i] as usize));
        out.push(b'"');
    }
}

/// Writes XXH64 of every entry of `table` as 16 hex digits into `out` (entry `i` at `[16i, 16i + 16)`).
pub fn xxh64_hex_many(table: &ByteTable, out: &mut [u8]) {
    for i in 0..table.len() {
        write_hex(xxh64(table.get(i), 0), &mut out[16 * i..16 * i + 16]);
    }
}

/// Every lowered step's step hash, as 16 hex digits per node. `hashAttrs` is
/// `{"deps":["name@version",…]<extra>,"fingerprint":"…","version":"…"}` with the
/// dependencies in listed order, exactly what `StepSpec.hashAttrs` holds.
///
/// `known` (checked by [`check_known`]) gives some hashes in advance: those nodes are copied,
/// not computed (a lowering session passes the steps of its earlier calls this way).
pub fn lowered_identities(l: &Lowered, known: Option<&[u8]>, hashes: &mut [u8]) {
    match known {
        Some(k) => hashes.copy_from_slice(k),
        None => hashes.fill(0),
    }
    lowered_identities_in_place(l, hashes);
}

/// [`lowered_identities`] with the known hashes already in `hashes` (checked by
/// [`check_known`]): the all-zero entries are computed in place, the others are kept.
pub fn lowered_identities_in_place(l: &Lowered, hashes: &mut [u8]) {
    // Sized once for a typical node: a call per pulled handle hashes one or two, and growing
    // these from empty cost more allocations than the hashing (bench row "stream-100k-generator").
    let mut s = Scratch {
        buf: Vec::with_capacity(1024),
        sorted: Vec::with_capacity(16),
    };
    let mut attrs: Vec<u8> = Vec::with_capacity(1024);
    for i in 0..l.graph.len() {
        if hashes[16 * i] != 0 {
            continue;
        }
        let fp = &l.fingerprints[16 * i..16 * i + 16];
        attrs.clear();
        attrs.extend_from_slice(b"{\"deps\":[");
        for (k, &d) in l.graph.deps_of(i).iter().enumerate() {
            if k > 0 {
                attrs.push(b',');
            }
            l.ident(d as usize, &mut attrs);
        }
        attrs.push(b']');
        attrs.extend_from_slice(l.extras.get(i));
        attrs.extend_from_slice(b",\"fingerprint\":\"");
        attrs.extend_from_slice(fp);
        attrs.extend_from_slice(b"\",\"version\":");
        push_json_string(&mut attrs, l.versions.get(l.version_of[i] as usize));
        attrs.push(b'}');
        hash_node(&l.graph, &l.names, i, &attrs, hashes, &mut s);
    }
}

/// Reads the tables of one packed call of [`lowered_identities_packed`] in order.
struct Packed<'a> {
    words: &'a [u32],
    at: usize,
}

impl<'a> Packed<'a> {
    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u32], InputError> {
        let end = self.at.checked_add(len).filter(|&e| e <= self.words.len());
        let Some(end) = end else {
            return Err(InputError(format!(
                "words ends at {} but {what} needs {len} more from word {}",
                self.words.len(),
                self.at
            )));
        };
        let s = &self.words[self.at..end];
        self.at = end;
        Ok(s)
    }
}

/// Splits `len` bytes off the front of `bytes` (which holds at least that many).
fn split_bytes<'a>(bytes: &mut &'a [u8], len: usize) -> &'a [u8] {
    let (head, tail) = bytes.split_at(len);
    *bytes = tail;
    head
}

/// [`lowered_identities_in_place`] for tables packed into two arrays, so that a caller with a
/// few nodes (a lowering session's call per pulled handle) makes one call with two arguments
/// instead of two calls with a dozen (bench row "stream-100k-generator"). `words` is
/// `[n, e, v, p]`, then `offsets` (n + 1), `deps` (e), `nameOffsets` (n + 1), `versionOf` (n),
/// `versionOffsets` (v + 1), `extraOffsets` (n + 1) and `payloadOffsets` (p + 1); `bytes` is
/// the names, the versions, the extras, the payloads, the fingerprints (16n) and the hashes
/// (16n): known ones in, every one out. The last `p` nodes' fingerprints are computed from
/// their payloads (as [`xxh64_hex_many`]) and written; the others are given. Anything after
/// is ignored.
pub fn lowered_identities_packed(words: &[u32], bytes: &mut [u8]) -> Result<(), InputError> {
    let mut w = Packed { words, at: 0 };
    let head = w.take(4, "the header [n, e, v, p]")?;
    let (n, e, v, p) = (head[0] as usize, head[1] as usize, head[2] as usize, head[3] as usize);
    if p > n {
        return Err(InputError(format!("{p} payloads for {n} nodes: at most one a node")));
    }
    let offsets = w.take(n + 1, "offsets")?;
    let deps = w.take(e, "deps")?;
    let name_offsets = w.take(n + 1, "nameOffsets")?;
    let version_of = w.take(n, "versionOf")?;
    let version_offsets = w.take(v + 1, "versionOffsets")?;
    let extra_offsets = w.take(n + 1, "extraOffsets")?;
    let payload_offsets = w.take(p + 1, "payloadOffsets")?;
    // Each length is below 2^36: their sum cannot overflow.
    let last = |o: &[u32]| o[o.len() - 1] as usize;
    let lens = [
        last(name_offsets),
        last(version_offsets),
        last(extra_offsets),
        last(payload_offsets),
    ];
    let need = lens.iter().sum::<usize>() + 32 * n;
    if need > bytes.len() {
        return Err(InputError(format!(
            "bytes has {} bytes but its tables and the hashes need {need}",
            bytes.len()
        )));
    }
    let (tables, rest) = bytes.split_at_mut(need - 32 * n);
    let mut t: &[u8] = tables;
    let [names, versions, extras, payloads] = lens.map(|len| split_bytes(&mut t, len));
    let (fingerprints, rest) = rest.split_at_mut(16 * n);
    let payloads = ByteTable::any(payload_offsets, payloads, "payloadOffsets", "payloads")?;
    xxh64_hex_many(&payloads, &mut fingerprints[16 * (n - p)..]);
    let hashes = &mut rest[..16 * n];
    let fingerprints = &*fingerprints;
    let l = Lowered {
        graph: Csr::new(offsets, deps)?,
        names: ByteTable::new(name_offsets, names, n, "nameOffsets", "names")?,
        version_of,
        versions: ByteTable::any(version_offsets, versions, "versionOffsets", "versions")?,
        fingerprints,
        extras: ByteTable::new(extra_offsets, extras, n, "extraOffsets", "extras")?,
    }
    .check()?;
    check_known(hashes, n)?;
    lowered_identities_in_place(&l, hashes);
    Ok(())
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
    fingerprint_all_known(g, names, attrs, None)
}

/// [`fingerprint_all`], with some hashes known in advance (checked by [`check_known`]).
pub fn fingerprint_all_known(g: &Csr, names: &ByteTable, attrs: &ByteTable, known: Option<&[u8]>) -> Fingerprints {
    match toposort(g) {
        Order::Cycle(c) => Fingerprints::Cycle(c),
        Order::Done(order) => {
            let mut out = vec![0u8; 16 * g.len()];
            fingerprint_into(g, names, attrs, &order, known, &mut out);
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
    fn golden_lowered_identities() {
        let g = read_golden("lowered.json");
        let cases = g.at("cases").as_array();
        assert!(cases.len() >= 8);
        for c in cases {
            let nodes = c.at("nodes").as_array();
            let mut t = (
                vec![0u32],
                vec![],
                vec![0u32],
                vec![],
                vec![],
                vec![0u32],
                vec![],
                vec![0u32],
                vec![],
                vec![0u32],
                vec![],
            );
            let mut distinct: Vec<String> = Vec::new();
            for n in nodes {
                t.1.extend(n.at("deps").as_u32s());
                t.0.push(t.1.len() as u32);
                t.3.extend_from_slice(n.at("name").as_str().as_bytes());
                t.2.push(t.3.len() as u32);
                let v = n.at("version").as_str();
                let vi = distinct.iter().position(|x| x == v).unwrap_or_else(|| {
                    distinct.push(v.to_owned());
                    t.6.extend_from_slice(v.as_bytes());
                    t.5.push(t.6.len() as u32);
                    distinct.len() - 1
                });
                t.4.push(vi as u32);
                t.8.extend_from_slice(n.at("payload").as_str().as_bytes());
                t.7.push(t.8.len() as u32);
                if let Some(e) = n.get("expected") {
                    t.10.extend_from_slice(b",\"expectedFingerprint\":");
                    push_json_string(&mut t.10, e.as_str().as_bytes());
                }
                t.9.push(t.10.len() as u32);
            }
            let n = nodes.len();
            let mut fps = vec![0u8; 16 * n];
            xxh64_hex_many(&ByteTable::new(&t.7, &t.8, n, "p", "p").unwrap(), &mut fps);
            let l = Lowered {
                graph: Csr::new(&t.0, &t.1).unwrap(),
                names: ByteTable::new(&t.2, &t.3, n, "n", "n").unwrap(),
                version_of: &t.4,
                versions: ByteTable::any(&t.5, &t.6, "v", "v").unwrap(),
                fingerprints: &fps,
                extras: ByteTable::new(&t.9, &t.10, n, "e", "e").unwrap(),
            }
            .check()
            .unwrap();
            let mut hashes = vec![0u8; 16 * n];
            lowered_identities(&l, None, &mut hashes);
            let want = |k: &str| -> Vec<u8> { c.at(k).as_array().iter().flat_map(|x| x.as_str().bytes()).collect() };
            assert_eq!(fps, want("fingerprints"), "{}", c.at("name").as_str());
            assert_eq!(hashes, want("hashes"), "{}", c.at("name").as_str());
            // Given the first half's hashes (as a lowering session does), the rest come out the same.
            let mut known = vec![0u8; 16 * n];
            known[..16 * (n / 2)].copy_from_slice(&hashes[..16 * (n / 2)]);
            let mut again = vec![0u8; 16 * n];
            lowered_identities(&l, Some(&known), &mut again);
            assert_eq!(again, hashes, "{} (half known)", c.at("name").as_str());
            // The same with the known half already in the output (as the binding's `out` = `known` does).
            lowered_identities_in_place(&l, &mut known);
            assert_eq!(known, hashes, "{} (half known, in place)", c.at("name").as_str());
            // Packed into two arrays (as a lowering session's call per pulled handle passes them),
            // the half known, with junk after both: the same hashes.
            // The second half's fingerprints come from their payloads in the same call.
            let p = n - n / 2;
            let first_payload = t.7[n / 2];
            let payload_offsets: Vec<u32> = t.7[n / 2..].iter().map(|o| o - first_payload).collect();
            let mut words = vec![n as u32, t.1.len() as u32, (t.5.len() - 1) as u32, p as u32];
            for part in [&t.0, &t.1, &t.2, &t.4, &t.5, &t.9, &payload_offsets] {
                words.extend_from_slice(part);
            }
            words.extend_from_slice(&[9, 9]);
            let mut bytes = [
                &t.3[..],
                &t.6,
                &t.10,
                &t.8[first_payload as usize..],
                &fps[..16 * (n / 2)],
            ]
            .concat();
            bytes.resize(bytes.len() + 16 * p, b'?');
            let at = bytes.len();
            bytes.extend_from_slice(&hashes[..16 * (n / 2)]);
            bytes.resize(at + 16 * n + 5, 0);
            bytes[at + 16 * n..].fill(b'x');
            lowered_identities_packed(&words, &mut bytes).unwrap();
            assert_eq!(
                &bytes[at - 16 * n..at],
                &fps[..],
                "{} (packed fingerprints)",
                c.at("name").as_str()
            );
            assert_eq!(
                &bytes[at..at + 16 * n],
                &hashes[..],
                "{} (packed)",
                c.at("name").as_str()
            );
            // Short of a word or of the hashes' bytes: an error naming what is missing, never a panic.
            let short = lowered_identities_packed(&words[..words.len() - 3 - p], &mut bytes).unwrap_err();
            assert!(short.0.contains("payloadOffsets"), "{}", short.0);
            if n > 0 {
                let cut = at + 16 * n - 1;
                assert!(
                    lowered_identities_packed(&words, &mut bytes[..cut])
                        .unwrap_err()
                        .0
                        .contains("need")
                );
            }
            // The default (content) location of each step: name/version-hash (docs/identity.md).
            let paths = c.at("paths").as_array();
            assert_eq!(paths.len(), n, "{}", c.at("name").as_str());
            for (i, (node, path)) in nodes.iter().zip(paths).enumerate() {
                let hash = std::str::from_utf8(&hashes[16 * i..16 * i + 16]).unwrap();
                let expected = format!("{}/{}-{}", node.at("name").as_str(), node.at("version").as_str(), hash);
                assert_eq!(path.as_str(), expected, "{} #{}", c.at("name").as_str(), i);
            }
        }
    }

    #[test]
    fn lowered_input_checks_name_the_argument() {
        let l = |offsets: &'static [u32], deps: &'static [u32], version_of: &'static [u32]| {
            let graph = Csr::new(offsets, deps).unwrap();
            let names = ByteTable::new(&[0, 1, 2], b"ab", 2, "n", "n").unwrap();
            let empty = ByteTable::new(&[0, 0, 0], b"", 2, "p", "p").unwrap();
            let versions = ByteTable::any(&[0, 2], b"v1", "v", "v").unwrap();
            let fingerprints = &[b'0'; 32];
            Lowered {
                graph,
                names,
                version_of,
                versions,
                fingerprints,
                extras: empty,
            }
            .check()
            .map(|_| ())
        };
        assert!(l(&[0, 0, 1], &[0], &[0, 0]).is_ok());
        assert!(
            l(&[0, 1, 1], &[1], &[0, 0])
                .unwrap_err()
                .0
                .contains("dependencies first")
        );
        assert!(l(&[0, 0, 1], &[0], &[0]).unwrap_err().0.contains("versionOf must have"));
        assert!(l(&[0, 0, 1], &[0], &[0, 1]).unwrap_err().0.contains("versionOf[1] = 1"));
        assert!(
            l(&[0, 0, 1, 1], &[0], &[0, 0, 0])
                .unwrap_err()
                .0
                .contains("fingerprints must have 16 * n = 48")
        );
        assert!(
            l(&[0, 0, 1, 1], &[0], &[0, 0, 0])
                .unwrap_err()
                .0
                .contains("fingerprints must have 16 * n = 48")
        );
    }

    #[test]
    fn known_hashes_are_kept_and_used_by_dependents() {
        let t = tables(&[("x", "1", &[]), ("y", "2", &[0])]);
        let g = Csr::new(&t.offsets, &t.deps).unwrap();
        let names = ByteTable::new(&t.name_off, &t.names, 2, "n", "n").unwrap();
        let attrs = ByteTable::new(&t.attr_off, &t.attrs, 2, "a", "a").unwrap();
        let Fingerprints::Hex(full) = fingerprint_all(&g, &names, &attrs) else {
            panic!()
        };
        // x's hash given: y comes out the same.
        let mut known = vec![0u8; 32];
        known[..16].copy_from_slice(&full[..16]);
        assert!(check_known(&known, 2).is_ok());
        assert_eq!(
            fingerprint_all_known(&g, &names, &attrs, Some(&known)),
            Fingerprints::Hex(full.clone())
        );
        // A different known hash for x changes y (and is kept as given).
        known[..16].copy_from_slice(b"0123456789abcdef");
        let Fingerprints::Hex(other) = fingerprint_all_known(&g, &names, &attrs, Some(&known)) else {
            panic!()
        };
        assert_eq!(&other[..16], b"0123456789abcdef");
        assert_ne!(&other[16..], &full[16..]);
        assert!(check_known(&known[..16], 2).unwrap_err().0.contains("16 * n = 32"));
        known[3] = b'X';
        assert!(check_known(&known, 2).unwrap_err().0.contains("known[0..16]"));
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
