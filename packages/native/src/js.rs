//! The JS exports: `#[napi]` functions that only marshal arguments (js_args.rs) and call the
//! pure kernels. A bad argument throws a JS `Error` whose `code` is `CAIRN_NATIVE_BAD_INPUT`
//! and whose message names it; nothing here can panic on user input.

use napi::bindgen_prelude::{BigInt, Env, Object, Result, Unknown};
use napi_derive::napi;

use crate::duplicates::duplicate_steps;
use crate::expand::expand;
use crate::fingerprint::{
    Lowered, check_known, fingerprint_into, lowered_identities, lowered_identities_in_place, lowered_identities_packed,
    xxh64_hex_many,
};
use crate::graph::{ByteTable, Csr, Order};
use crate::js_args::{Arg, Code, OrBad, R, View, bad, new_typed, u32_array};
use crate::toposort::toposort;
use crate::xxh64::{STATE_BYTES, Xxh64State, write_hex, xxh64};

/// Bumped whenever the JS-facing surface changes; index.js refuses a stale build.
const ABI_VERSION: u32 = 8;

/// The two constants of the surface, `abiVersion` and `xxh64StateBytes` (napi-rs exports a
/// `#[napi] const` under its Rust name only).
#[napi(module_exports)]
pub fn constants(mut exports: Object) -> Result<()> {
    exports.set("abiVersion", ABI_VERSION)?;
    exports.set("xxh64StateBytes", STATE_BYTES as u32)?;
    Ok(())
}

fn internal(e: napi::Error) -> napi::Error<Code> {
    napi::Error::new(Code::Internal, e.reason)
}

/// `{ ok: true, [key]: value }` or `{ ok: false, cycle }`.
fn result<'env>(env: &'env Env, okay: bool, key: &str, value: Unknown<'env>) -> R<Object<'env>> {
    let mut obj = Object::new(env).map_err(internal)?;
    obj.set("ok", okay).map_err(internal)?;
    obj.set(key, value).map_err(internal)?;
    Ok(obj)
}

fn order_result<'env>(env: &'env Env, order: Order) -> R<Object<'env>> {
    match order {
        Order::Done(o) => result(env, true, "order", u32_array(env, &o)?),
        Order::Cycle(c) => result(env, false, "cycle", u32_array(env, &c)?),
    }
}

fn graph<'a>(offsets: Arg, deps: Arg) -> R<(View, View, Csr<'a>)> {
    let (o, d) = (offsets.u32s("offsets")?, deps.u32s("deps")?);
    let g = Csr::new(unsafe { o.u32s() }, unsafe { d.u32s() }).or_bad()?;
    Ok((o, d, g))
}

/// A table of byte strings, one per node: `offsets` (n + 1 entries) into `bytes`.
fn table<'a>(offsets: Arg, bytes: Arg, n: usize, off_name: &str, bytes_name: &str) -> R<ByteTable<'a>> {
    let (o, b) = (offsets.u32s(off_name)?, bytes.u8s(bytes_name)?);
    ByteTable::new(unsafe { o.u32s() }, unsafe { b.u8s() }, n, off_name, bytes_name).or_bad()
}

/// The optional `known` flags (one byte per node), or `None` when undefined.
fn known<'a>(k: Arg, n: usize) -> R<Option<&'a [u8]>> {
    if k.is_undefined()? {
        return Ok(None);
    }
    let k = unsafe { k.u8s("known")?.u8s() };
    check_known(k, n).or_bad()?;
    Ok(Some(k))
}

/// XXH64 of `data` (a string is hashed as UTF-8). The seed is taken mod 2^64. @default seed 0n
#[napi(
    js_name = "xxh64",
    ts_args_type = "data: Uint8Array | string, seed?: bigint",
    ts_return_type = "bigint"
)]
pub fn js_xxh64(env: &Env, data: Unknown, seed: Unknown) -> Result<BigInt, Code> {
    let mut scratch = Vec::new();
    let data = Arg::new(env, data).bytes("data", &mut scratch)?;
    Ok(BigInt::from(xxh64(data, Arg::new(env, seed).seed()?)))
}

/// XXH64 as 16 lowercase hex digits. @default seed 0n
#[napi(
    js_name = "xxh64Hex",
    ts_args_type = "data: Uint8Array | string, seed?: bigint",
    ts_return_type = "string"
)]
pub fn js_xxh64_hex(env: &Env, data: Unknown, seed: Unknown) -> Result<String, Code> {
    let mut scratch = Vec::new();
    let data = Arg::new(env, data).bytes("data", &mut scratch)?;
    let mut hex = [0u8; 16];
    write_hex(xxh64(data, Arg::new(env, seed).seed()?), &mut hex);
    Ok(hex.iter().map(|&b| b as char).collect())
}

fn state(s: Arg) -> R<View> {
    let s = s.u8s("state")?;
    if s.bytes != STATE_BYTES {
        return Err(bad(format!(
            "state must have {STATE_BYTES} bytes (xxh64StateBytes), got {}",
            s.bytes
        )));
    }
    Ok(s)
}

fn store_state(s: &Xxh64State, view: View) {
    let mut buf = [0u8; STATE_BYTES];
    s.to_bytes(&mut buf);
    unsafe { view.u8s_mut() }.copy_from_slice(&buf);
}

fn load_state(view: View) -> R<Xxh64State> {
    Xxh64State::from_bytes(unsafe { view.u8s() })
        .ok_or_else(|| bad("state does not hold an XXH64 state (use xxh64Init)"))
}

/// Resets `state` (a `Uint8Array(xxh64StateBytes)` owned by JS) to an empty hasher. @default seed 0n
#[napi(
    js_name = "xxh64Init",
    ts_args_type = "state: Uint8Array, seed?: bigint",
    ts_return_type = "void"
)]
pub fn js_xxh64_init(env: &Env, state_: Unknown, seed: Unknown) -> Result<(), Code> {
    let s = state(Arg::new(env, state_))?;
    store_state(&Xxh64State::new(Arg::new(env, seed).seed()?), s);
    Ok(())
}

/// Feeds `data` into `state`.
#[napi(
    js_name = "xxh64Update",
    ts_args_type = "state: Uint8Array, data: Uint8Array | string",
    ts_return_type = "void"
)]
pub fn js_xxh64_update(env: &Env, state_: Unknown, data: Unknown) -> Result<(), Code> {
    let view = state(Arg::new(env, state_))?;
    let mut s = load_state(view)?;
    let mut scratch = Vec::new();
    s.update(Arg::new(env, data).bytes("data", &mut scratch)?);
    store_state(&s, view);
    Ok(())
}

/// The digest of everything fed into `state`; the state is unchanged.
#[napi(
    js_name = "xxh64Digest",
    ts_args_type = "state: Uint8Array",
    ts_return_type = "bigint"
)]
pub fn js_xxh64_digest(env: &Env, state_: Unknown) -> Result<BigInt, Code> {
    Ok(BigInt::from(load_state(state(Arg::new(env, state_))?)?.digest()))
}

/// Kahn's algorithm, dependencies first (see `CoreBackend.toposort` in @cairn/core).
#[napi(
    js_name = "toposort",
    ts_args_type = "offsets: Uint32Array, deps: Uint32Array",
    ts_return_type = "NativeOrder"
)]
pub fn js_toposort<'env>(env: &'env Env, offsets: Unknown, deps: Unknown) -> Result<Object<'env>, Code> {
    let (_, _, g) = graph(Arg::new(env, offsets), Arg::new(env, deps))?;
    order_result(env, toposort(&g))
}

/// Post-order expansion from `roots`; mutates `seen` (see `CoreBackend.expand` in @cairn/core).
#[napi(
    js_name = "expand",
    ts_args_type = "offsets: Uint32Array, deps: Uint32Array, roots: Uint32Array, built: Uint8Array, seen: Uint8Array",
    ts_return_type = "NativeOrder"
)]
pub fn js_expand<'env>(
    env: &'env Env,
    offsets: Unknown,
    deps: Unknown,
    roots: Unknown,
    built: Unknown,
    seen: Unknown,
) -> Result<Object<'env>, Code> {
    let (offsets, deps, g) = graph(Arg::new(env, offsets), Arg::new(env, deps))?;
    let roots = Arg::new(env, roots).u32s("roots")?;
    let built = Arg::new(env, built).u8s("built")?;
    let seen = Arg::new(env, seen).u8s("seen")?;
    for (other, name) in [(offsets, "offsets"), (deps, "deps"), (roots, "roots"), (built, "built")] {
        if seen.overlaps(other) {
            return Err(bad(format!("seen must not share memory with {name}")));
        }
    }
    let order = unsafe { expand(&g, roots.u32s(), built.u8s(), seen.u8s_mut()) }.or_bad()?;
    order_result(env, order)
}

/// Every node's Merkle step hash per docs/identity.md. `known` (optional, `16 * n` bytes) gives
/// hashes in advance: a node whose 16 bytes are hex digits is taken as hashed (its dependencies
/// and attrs are not read); all-zero bytes mean "compute".
#[napi(
    js_name = "fingerprintAll",
    ts_args_type = "offsets: Uint32Array, deps: Uint32Array, nameOffsets: Uint32Array, names: Uint8Array, attrOffsets: Uint32Array, attrs: Uint8Array, known?: Uint8Array",
    ts_return_type = "NativeFingerprints"
)]
#[allow(clippy::too_many_arguments)]
pub fn js_fingerprint_all<'env>(
    env: &'env Env,
    offsets: Unknown,
    deps: Unknown,
    name_offsets: Unknown,
    names: Unknown,
    attr_offsets: Unknown,
    attrs: Unknown,
    known_: Unknown,
) -> Result<Object<'env>, Code> {
    let (_, _, g) = graph(Arg::new(env, offsets), Arg::new(env, deps))?;
    let n = g.len();
    let a = |v| Arg::new(env, v);
    let names = table(a(name_offsets), a(names), n, "nameOffsets", "names")?;
    let attrs = table(a(attr_offsets), a(attrs), n, "attrOffsets", "attrs")?;
    let known = known(a(known_), n)?;
    match toposort(&g) {
        Order::Cycle(c) => result(env, false, "cycle", u32_array(env, &c)?),
        Order::Done(order) => {
            let hex = new_typed(env, false, 16 * n, |out| {
                fingerprint_into(&g, &names, &attrs, &order, known, out)
            })?;
            result(env, true, "hex", hex)
        }
    }
}

/// One lowering's step hashes (docs/identity.md, "Lowered steps"), 16 hex digits per node.
/// Nodes are numbered dependencies first (each dependency index below its dependent's);
/// node `i`'s version is entry `versionOf[i]` of the `versions` table, its config fingerprint
/// `fingerprints[16i, 16i + 16)`; `extras[i]` is canonical text placed after the `deps`
/// member of its `hashAttrs` (usually empty). `known` (`16 * n` bytes) gives some hashes in
/// advance, as `fingerprintAll`'s does: those nodes are copied, not computed.
#[napi(
    js_name = "loweredIdentities",
    ts_args_type = "offsets: Uint32Array, deps: Uint32Array, nameOffsets: Uint32Array, names: Uint8Array, versionOf: Uint32Array, versionOffsets: Uint32Array, versions: Uint8Array, fingerprints: Uint8Array, extraOffsets: Uint32Array, extras: Uint8Array, known?: Uint8Array, out?: Uint8Array",
    ts_return_type = "Uint8Array"
)]
#[allow(clippy::too_many_arguments)]
pub fn js_lowered_identities<'env>(
    env: &'env Env,
    offsets: Unknown<'env>,
    deps: Unknown<'env>,
    name_offsets: Unknown<'env>,
    names: Unknown<'env>,
    version_of: Unknown<'env>,
    version_offsets: Unknown<'env>,
    versions: Unknown<'env>,
    fingerprints: Unknown<'env>,
    extra_offsets: Unknown<'env>,
    extras: Unknown<'env>,
    known_: Unknown<'env>,
    out_: Unknown<'env>,
) -> Result<Unknown<'env>, Code> {
    let a = |v| Arg::new(env, v);
    let (o_view, d_view, graph) = graph(a(offsets), a(deps))?;
    let n = graph.len();
    let (n_off, n_bytes) = (a(name_offsets).u32s("nameOffsets")?, a(names).u8s("names")?);
    let names = unsafe { ByteTable::new(n_off.u32s(), n_bytes.u8s(), n, "nameOffsets", "names") }.or_bad()?;
    let vo_view = a(version_of).u32s("versionOf")?;
    let version_of = unsafe { vo_view.u32s() };
    let v_off = a(version_offsets).u32s("versionOffsets")?;
    let v_bytes = a(versions).u8s("versions")?;
    let versions = unsafe { ByteTable::any(v_off.u32s(), v_bytes.u8s(), "versionOffsets", "versions") }.or_bad()?;
    let f_view = a(fingerprints).u8s("fingerprints")?;
    let fingerprints = unsafe { f_view.u8s() };
    let (e_off, e_bytes) = (a(extra_offsets).u32s("extraOffsets")?, a(extras).u8s("extras")?);
    let extras = unsafe { ByteTable::new(e_off.u32s(), e_bytes.u8s(), n, "extraOffsets", "extras") }.or_bad()?;
    let l = Lowered {
        graph,
        names,
        version_of,
        versions,
        fingerprints,
        extras,
    }
    .check()
    .or_bad()?;
    let out_arg = a(out_);
    if out_arg.is_undefined()? {
        let known = known(a(known_), n)?;
        return new_typed(env, false, 16 * n, |out| lowered_identities(&l, known, out));
    }
    // Into the caller's array: a lowering session's call per pulled handle then makes no
    // ArrayBuffer (bench row "apply handles of one graph: generator vs array").
    let out = out_arg.u8s("out")?;
    if out.bytes != 16 * n {
        return Err(bad(format!(
            "out must have 16 * n = {} bytes (n from offsets), got {}",
            16 * n,
            out.bytes
        )));
    }
    for other in [
        o_view, d_view, n_off, n_bytes, vo_view, v_off, v_bytes, f_view, e_off, e_bytes,
    ] {
        if out.overlaps(other) {
            return Err(bad("out must not share memory with the tables (only with known)"));
        }
    }
    let k_arg = a(known_);
    if k_arg.is_undefined()? {
        lowered_identities(&l, None, unsafe { out.u8s_mut() });
    } else {
        let k = k_arg.u8s("known")?;
        check_known(unsafe { k.u8s() }, n).or_bad()?;
        if k.overlaps(out) {
            if !k.same(out) {
                return Err(bad("out must be known itself or not share memory with it"));
            }
            lowered_identities_in_place(&l, unsafe { out.u8s_mut() });
        } else {
            lowered_identities(&l, Some(unsafe { k.u8s() }), unsafe { out.u8s_mut() });
        }
    }
    Ok(out_)
}

/// `loweredIdentities` with its tables packed into two arrays, and the last `p` nodes'
/// fingerprints hashed from their payloads in the same call (see the kernel
/// `lowered_identities_packed`): `words` = `[n, e, v, p]`, `offsets`, `deps`, `nameOffsets`,
/// `versionOf`, `versionOffsets`, `extraOffsets`, `payloadOffsets`; `bytes` = names, versions,
/// extras, payloads, fingerprints (16n), then the hashes (16n), known ones given and every one
/// written back.
#[napi(
    js_name = "loweredIdentitiesPacked",
    ts_args_type = "words: Uint32Array, bytes: Uint8Array",
    ts_return_type = "void"
)]
pub fn js_lowered_identities_packed(env: &Env, words: Unknown, bytes: Unknown) -> Result<(), Code> {
    let w = Arg::new(env, words).u32s("words")?;
    let b = Arg::new(env, bytes).u8s("bytes")?;
    if b.overlaps(w) {
        return Err(bad("bytes must not share memory with words"));
    }
    lowered_identities_packed(unsafe { w.u32s() }, unsafe { b.u8s_mut() }).or_bad()
}

/// Steps of one lowering sharing a name (bytes of the `names` table) and a version id:
/// flattened pairs `(i, j)`, ordered by `i`, where `j` is the lowest-index node equal to `i`.
#[napi(
    js_name = "duplicateSteps",
    ts_args_type = "nameOffsets: Uint32Array, names: Uint8Array, versionOf: Uint32Array",
    ts_return_type = "Uint32Array"
)]
pub fn js_duplicate_steps<'env>(
    env: &'env Env,
    name_offsets: Unknown,
    names: Unknown,
    version_of: Unknown,
) -> Result<Unknown<'env>, Code> {
    let off = Arg::new(env, name_offsets).u32s("nameOffsets")?;
    let bytes = Arg::new(env, names).u8s("names")?;
    let version_of = unsafe { Arg::new(env, version_of).u32s("versionOf")?.u32s() };
    let names = unsafe { ByteTable::any(off.u32s(), bytes.u8s(), "nameOffsets", "names") }.or_bad()?;
    u32_array(env, &duplicate_steps(&names, version_of).or_bad()?)
}

/// Writes XXH64 of every entry of the table `(offsets, bytes)` as 16 hex digits into `out`, entry `i` at byte `at + 16i`.
#[napi(
    js_name = "xxh64HexMany",
    ts_args_type = "offsets: Uint32Array, bytes: Uint8Array, out: Uint8Array, at: number",
    ts_return_type = "void"
)]
pub fn js_xxh64_hex_many(env: &Env, offsets: Unknown, bytes: Unknown, out: Unknown, at: Unknown) -> Result<(), Code> {
    let off = Arg::new(env, offsets).u32s("offsets")?;
    let bytes = Arg::new(env, bytes).u8s("bytes")?;
    let out = Arg::new(env, out).u8s("out")?;
    let at = Arg::new(env, at).index("at")?;
    let table = unsafe { ByteTable::any(off.u32s(), bytes.u8s(), "offsets", "bytes") }.or_bad()?;
    let need = 16 * table.len();
    if at > out.bytes || out.bytes - at < need {
        return Err(bad(format!(
            "out has {} bytes; {} entries need {need} from byte {at}",
            out.bytes,
            table.len()
        )));
    }
    for (other, name) in [(off, "offsets"), (bytes, "bytes")] {
        if out.overlaps(other) {
            return Err(bad(format!("out must not share memory with {name}")));
        }
    }
    xxh64_hex_many(&table, &mut unsafe { out.u8s_mut() }[at..at + need]);
    Ok(())
}
