//! Thin marshalling between N-API values and the pure functions. Every argument is checked
//! before use; failures throw a JS `Error` whose `code` is stable. Nothing here can panic on
//! user input.

use std::ffi::{CString, c_char, c_void};
use std::ptr::null_mut;

use crate::duplicates::duplicate_steps;
use crate::expand::expand;
use crate::fingerprint::{
    Lowered, check_known, fingerprint_into, lowered_identities, lowered_identities_in_place, xxh64_hex_many,
};
use crate::graph::{ByteTable, Csr, InputError, Order};
use crate::js_files::js_read_files;
use crate::sys::*;
use crate::toposort::toposort;
use crate::xxh64::{STATE_BYTES, Xxh64State, write_hex, xxh64};

/// Bumped whenever the JS-facing surface changes; index.js refuses a stale build.
const ABI_VERSION: u32 = 4;
const BAD_INPUT: &str = "CAIRN_NATIVE_BAD_INPUT";
const INTERNAL: &str = "CAIRN_NATIVE_INTERNAL";

pub(crate) struct Thrown {
    pub(crate) code: &'static str,
    pub(crate) message: String,
}

pub(crate) type R<T> = Result<T, Thrown>;

pub(crate) fn bad(message: impl Into<String>) -> Thrown {
    Thrown {
        code: BAD_INPUT,
        message: message.into(),
    }
}

impl From<InputError> for Thrown {
    fn from(e: InputError) -> Self {
        bad(e.0)
    }
}

pub(crate) fn ok(status: napi_status, what: &str) -> R<()> {
    if status == NAPI_OK {
        Ok(())
    } else {
        Err(Thrown {
            code: INTERNAL,
            message: format!("N-API {what} failed with status {status}"),
        })
    }
}

unsafe fn throw(env: napi_env, t: Thrown) {
    let mut pending = false;
    unsafe {
        napi_is_exception_pending(env, &mut pending);
        if pending {
            return;
        }
        let code = CString::new(t.code).unwrap_or_default();
        let msg = CString::new(t.message.replace('\0', "\\0")).unwrap_or_default();
        napi_throw_error(env, code.as_ptr(), msg.as_ptr());
    }
}

const MAX_ARGS: usize = 12;

pub(crate) unsafe fn args(env: napi_env, info: napi_callback_info) -> R<[napi_value; MAX_ARGS]> {
    let mut argv: [napi_value; MAX_ARGS] = [null_mut(); MAX_ARGS];
    let mut argc = MAX_ARGS;
    ok(
        unsafe { napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), null_mut(), null_mut()) },
        "get_cb_info",
    )?;
    Ok(argv)
}

pub(crate) unsafe fn type_of(env: napi_env, v: napi_value) -> R<napi_valuetype> {
    let mut t = 0;
    ok(unsafe { napi_typeof(env, v, &mut t) }, "typeof")?;
    Ok(t)
}

/// A typed array's memory, borrowed for the duration of one call.
#[derive(Clone, Copy)]
struct View {
    ptr: *mut u8,
    bytes: usize,
}

impl View {
    unsafe fn u32s<'a>(self) -> &'a [u32] {
        if self.bytes == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(self.ptr as *const u32, self.bytes / 4) }
        }
    }
    unsafe fn u8s<'a>(self) -> &'a [u8] {
        if self.bytes == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(self.ptr, self.bytes) }
        }
    }
    unsafe fn u8s_mut<'a>(self) -> &'a mut [u8] {
        if self.bytes == 0 {
            &mut []
        } else {
            unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) }
        }
    }
    fn overlaps(self, o: View) -> bool {
        let (a, b) = (self.ptr as usize, o.ptr as usize);
        self.bytes > 0 && o.bytes > 0 && a < b + o.bytes && b < a + self.bytes
    }
}

unsafe fn typed(env: napi_env, v: napi_value, want: napi_typedarray_type, name: &str) -> R<View> {
    let kind_name = if want == NAPI_UINT32_ARRAY {
        "Uint32Array"
    } else {
        "Uint8Array"
    };
    let mut is = false;
    ok(unsafe { napi_is_typedarray(env, v, &mut is) }, "is_typedarray")?;
    if !is {
        return Err(bad(format!("{name} must be a {kind_name}")));
    }
    let (mut kind, mut len, mut data, mut offset) = (0, 0usize, null_mut::<c_void>(), 0usize);
    let mut buffer: napi_value = null_mut();
    ok(
        unsafe { napi_get_typedarray_info(env, v, &mut kind, &mut len, &mut data, &mut buffer, &mut offset) },
        "get_typedarray_info",
    )?;
    if kind != want {
        return Err(bad(format!("{name} must be a {kind_name}, got another typed array")));
    }
    let elem = if want == NAPI_UINT32_ARRAY { 4 } else { 1 };
    if len > 0 && (data.is_null() || !(data as usize).is_multiple_of(elem)) {
        return Err(bad(format!("{name} has no usable memory (detached or misaligned)")));
    }
    Ok(View {
        ptr: data as *mut u8,
        bytes: len * elem,
    })
}

/// Bytes to hash: a Uint8Array (borrowed) or a string (UTF-8, copied into `scratch`).
pub(crate) unsafe fn bytes_arg<'a>(env: napi_env, v: napi_value, name: &str, scratch: &'a mut Vec<u8>) -> R<&'a [u8]> {
    if unsafe { type_of(env, v)? } != NAPI_STRING {
        return Ok(unsafe { typed(env, v, NAPI_UINT8_ARRAY, name)?.u8s() });
    }
    // A truncated copy ends at least 4 bytes short: V8 never writes part of a character.
    scratch.resize(256, 0);
    let mut len = 0usize;
    ok(
        unsafe { napi_get_value_string_utf8(env, v, scratch.as_mut_ptr() as *mut c_char, 256, &mut len) },
        "get_value_string_utf8",
    )?;
    if len + 4 >= 256 {
        ok(
            unsafe { napi_get_value_string_utf8(env, v, null_mut(), 0, &mut len) },
            "get_value_string_utf8",
        )?;
        scratch.resize(len + 1, 0);
        ok(
            unsafe { napi_get_value_string_utf8(env, v, scratch.as_mut_ptr() as *mut c_char, len + 1, &mut len) },
            "get_value_string_utf8",
        )?;
    }
    Ok(&scratch[..len])
}

unsafe fn seed_arg(env: napi_env, v: napi_value) -> R<u64> {
    match unsafe { type_of(env, v)? } {
        NAPI_UNDEFINED => Ok(0),
        NAPI_BIGINT => {
            let (mut seed, mut lossless) = (0u64, false);
            ok(
                unsafe { napi_get_value_bigint_uint64(env, v, &mut seed, &mut lossless) },
                "get_value_bigint_uint64",
            )?;
            Ok(seed) // reduced mod 2^64, as BigInt.asUintN(64, seed)
        }
        _ => Err(bad("seed must be a bigint or undefined")),
    }
}

unsafe fn bigint(env: napi_env, v: u64) -> R<napi_value> {
    let mut out = null_mut();
    ok(
        unsafe { napi_create_bigint_uint64(env, v, &mut out) },
        "create_bigint_uint64",
    )?;
    Ok(out)
}

unsafe fn undefined(env: napi_env) -> R<napi_value> {
    let mut out = null_mut();
    ok(unsafe { napi_get_undefined(env, &mut out) }, "get_undefined")?;
    Ok(out)
}

/// A fresh typed array of `len` elements whose bytes `fill` writes.
pub(crate) unsafe fn new_typed(
    env: napi_env,
    kind: napi_typedarray_type,
    len: usize,
    fill: impl FnOnce(&mut [u8]),
) -> R<napi_value> {
    let bytes = if kind == NAPI_UINT32_ARRAY { len * 4 } else { len };
    let (mut data, mut ab, mut out) = (null_mut::<c_void>(), null_mut(), null_mut());
    ok(
        unsafe { napi_create_arraybuffer(env, bytes, &mut data, &mut ab) },
        "create_arraybuffer",
    )?;
    if bytes > 0 {
        fill(unsafe { std::slice::from_raw_parts_mut(data as *mut u8, bytes) });
    }
    ok(
        unsafe { napi_create_typedarray(env, kind, len, ab, 0, &mut out) },
        "create_typedarray",
    )?;
    Ok(out)
}

pub(crate) unsafe fn u32_array(env: napi_env, v: &[u32]) -> R<napi_value> {
    unsafe {
        new_typed(env, NAPI_UINT32_ARRAY, v.len(), |b| {
            for (dst, x) in b.chunks_exact_mut(4).zip(v) {
                dst.copy_from_slice(&x.to_ne_bytes());
            }
        })
    }
}

/// `{ ok: true, [key]: value }` or `{ ok: false, cycle }`.
unsafe fn result(env: napi_env, okay: bool, key: &str, value: napi_value) -> R<napi_value> {
    let (mut obj, mut flag) = (null_mut(), null_mut());
    unsafe {
        ok(napi_create_object(env, &mut obj), "create_object")?;
        ok(napi_get_boolean(env, okay, &mut flag), "get_boolean")?;
        ok(
            napi_set_named_property(env, obj, c"ok".as_ptr(), flag),
            "set_named_property",
        )?;
        let key = CString::new(key).unwrap_or_default();
        ok(
            napi_set_named_property(env, obj, key.as_ptr(), value),
            "set_named_property",
        )?;
    }
    Ok(obj)
}

unsafe fn order_result(env: napi_env, order: Order) -> R<napi_value> {
    unsafe {
        match order {
            Order::Done(o) => result(env, true, "order", u32_array(env, &o)?),
            Order::Cycle(c) => result(env, false, "cycle", u32_array(env, &c)?),
        }
    }
}

unsafe fn graph_args<'a>(env: napi_env, a: &[napi_value]) -> R<(View, View, Csr<'a>)> {
    unsafe {
        let offsets = typed(env, a[0], NAPI_UINT32_ARRAY, "offsets")?;
        let deps = typed(env, a[1], NAPI_UINT32_ARRAY, "deps")?;
        let g = Csr::new(offsets.u32s(), deps.u32s())?;
        Ok((offsets, deps, g))
    }
}

// ---- exported functions -------------------------------------------------------------

unsafe fn js_xxh64(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let mut scratch = Vec::new();
        let data = bytes_arg(env, a[0], "data", &mut scratch)?;
        let seed = seed_arg(env, a[1])?;
        bigint(env, xxh64(data, seed))
    }
}

unsafe fn js_xxh64_hex(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let mut scratch = Vec::new();
        let data = bytes_arg(env, a[0], "data", &mut scratch)?;
        let seed = seed_arg(env, a[1])?;
        let mut hex = [0u8; 16];
        write_hex(xxh64(data, seed), &mut hex);
        let mut out = null_mut();
        ok(
            napi_create_string_latin1(env, hex.as_ptr() as *const c_char, 16, &mut out),
            "create_string_latin1",
        )?;
        Ok(out)
    }
}

unsafe fn state_arg(env: napi_env, v: napi_value) -> R<View> {
    let s = unsafe { typed(env, v, NAPI_UINT8_ARRAY, "state")? };
    if s.bytes != STATE_BYTES {
        return Err(bad(format!(
            "state must have {STATE_BYTES} bytes (xxh64StateBytes), got {}",
            s.bytes
        )));
    }
    Ok(s)
}

unsafe fn store_state(s: &Xxh64State, view: View) {
    let mut buf = [0u8; STATE_BYTES];
    s.to_bytes(&mut buf);
    unsafe { view.u8s_mut().copy_from_slice(&buf) };
}

unsafe fn load_state(view: View) -> R<Xxh64State> {
    Xxh64State::from_bytes(unsafe { view.u8s() })
        .ok_or_else(|| bad("state does not hold an XXH64 state (use xxh64Init)"))
}

unsafe fn js_xxh64_init(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let state = state_arg(env, a[0])?;
        let seed = seed_arg(env, a[1])?;
        store_state(&Xxh64State::new(seed), state);
        undefined(env)
    }
}

unsafe fn js_xxh64_update(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let state = state_arg(env, a[0])?;
        let mut s = load_state(state)?;
        let mut scratch = Vec::new();
        s.update(bytes_arg(env, a[1], "data", &mut scratch)?);
        store_state(&s, state);
        undefined(env)
    }
}

unsafe fn js_xxh64_digest(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let s = load_state(state_arg(env, a[0])?)?;
        bigint(env, s.digest())
    }
}

unsafe fn js_toposort(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let (_, _, g) = graph_args(env, &a)?;
        order_result(env, toposort(&g))
    }
}

unsafe fn js_expand(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let (offsets, deps, g) = graph_args(env, &a)?;
        let roots = typed(env, a[2], NAPI_UINT32_ARRAY, "roots")?;
        let built = typed(env, a[3], NAPI_UINT8_ARRAY, "built")?;
        let seen = typed(env, a[4], NAPI_UINT8_ARRAY, "seen")?;
        for (other, name) in [(offsets, "offsets"), (deps, "deps"), (roots, "roots"), (built, "built")] {
            if seen.overlaps(other) {
                return Err(bad(format!("seen must not share memory with {name}")));
            }
        }
        let order = expand(&g, roots.u32s(), built.u8s(), seen.u8s_mut())?;
        order_result(env, order)
    }
}

unsafe fn js_fingerprint_all(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let (_, _, g) = graph_args(env, &a)?;
        let n = g.len();
        let name_off = typed(env, a[2], NAPI_UINT32_ARRAY, "nameOffsets")?;
        let names = typed(env, a[3], NAPI_UINT8_ARRAY, "names")?;
        let attr_off = typed(env, a[4], NAPI_UINT32_ARRAY, "attrOffsets")?;
        let attrs = typed(env, a[5], NAPI_UINT8_ARRAY, "attrs")?;
        let names = ByteTable::new(name_off.u32s(), names.u8s(), n, "nameOffsets", "names")?;
        let attrs = ByteTable::new(attr_off.u32s(), attrs.u8s(), n, "attrOffsets", "attrs")?;
        let known = if type_of(env, a[6])? == NAPI_UNDEFINED {
            None
        } else {
            let k = typed(env, a[6], NAPI_UINT8_ARRAY, "known")?.u8s();
            check_known(k, n)?;
            Some(k)
        };
        match toposort(&g) {
            Order::Cycle(c) => result(env, false, "cycle", u32_array(env, &c)?),
            Order::Done(order) => {
                let hex = new_typed(env, NAPI_UINT8_ARRAY, 16 * n, |out| {
                    fingerprint_into(&g, &names, &attrs, &order, known, out)
                })?;
                result(env, true, "hex", hex)
            }
        }
    }
}

unsafe fn js_lowered_identities(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let (offsets, deps, graph) = graph_args(env, &a)?;
        let n = graph.len();
        let u32s = |i: usize, name: &str| typed(env, a[i], NAPI_UINT32_ARRAY, name);
        let u8s = |i: usize, name: &str| typed(env, a[i], NAPI_UINT8_ARRAY, name);
        let (n_off, n_bytes) = (u32s(2, "nameOffsets")?, u8s(3, "names")?);
        let version_of = u32s(4, "versionOf")?;
        let (v_off, v_bytes) = (u32s(5, "versionOffsets")?, u8s(6, "versions")?);
        let fingerprints = u8s(7, "fingerprints")?;
        let (e_off, e_bytes) = (u32s(8, "extraOffsets")?, u8s(9, "extras")?);
        let inputs = [
            offsets,
            deps,
            n_off,
            n_bytes,
            version_of,
            v_off,
            v_bytes,
            fingerprints,
            e_off,
            e_bytes,
        ];
        let names = ByteTable::new(n_off.u32s(), n_bytes.u8s(), n, "nameOffsets", "names")?;
        let versions = ByteTable::any(v_off.u32s(), v_bytes.u8s(), "versionOffsets", "versions")?;
        let extras = ByteTable::new(e_off.u32s(), e_bytes.u8s(), n, "extraOffsets", "extras")?;
        let l = Lowered {
            graph,
            names,
            version_of: version_of.u32s(),
            versions,
            fingerprints: fingerprints.u8s(),
            extras,
        }
        .check()?;
        let known = if type_of(env, a[10])? == NAPI_UNDEFINED {
            None
        } else {
            let k = typed(env, a[10], NAPI_UINT8_ARRAY, "known")?;
            check_known(k.u8s(), n)?;
            Some(k)
        };
        if type_of(env, a[11])? == NAPI_UNDEFINED {
            return new_typed(env, NAPI_UINT8_ARRAY, 16 * n, |out| {
                lowered_identities(&l, known.map(|k| k.u8s()), out)
            });
        }
        // Into the caller's array: a lowering session's call per pulled handle then makes no
        // ArrayBuffer (bench row "apply handles of one graph: generator vs array").
        let out = typed(env, a[11], NAPI_UINT8_ARRAY, "out")?;
        if out.bytes != 16 * n {
            return Err(bad(format!(
                "out must have 16 * n = {} bytes (n from offsets), got {}",
                16 * n,
                out.bytes
            )));
        }
        for other in inputs {
            if out.overlaps(other) {
                return Err(bad("out must not share memory with the tables (only with known)"));
            }
        }
        match known {
            Some(k) if k.ptr == out.ptr => lowered_identities_in_place(&l, out.u8s_mut()),
            Some(k) if out.overlaps(k) => return Err(bad("out must be known itself or not share memory with it")),
            Some(k) => lowered_identities(&l, Some(k.u8s()), out.u8s_mut()),
            None => lowered_identities(&l, None, out.u8s_mut()),
        }
        Ok(a[11])
    }
}

unsafe fn js_duplicate_steps(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let off = typed(env, a[0], NAPI_UINT32_ARRAY, "nameOffsets")?;
        let bytes = typed(env, a[1], NAPI_UINT8_ARRAY, "names")?;
        let version_of = typed(env, a[2], NAPI_UINT32_ARRAY, "versionOf")?.u32s();
        let names = ByteTable::any(off.u32s(), bytes.u8s(), "nameOffsets", "names")?;
        u32_array(env, &duplicate_steps(&names, version_of)?)
    }
}

unsafe fn js_xxh64_hex_many(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let off = typed(env, a[0], NAPI_UINT32_ARRAY, "offsets")?;
        let bytes = typed(env, a[1], NAPI_UINT8_ARRAY, "bytes")?;
        let out = typed(env, a[2], NAPI_UINT8_ARRAY, "out")?;
        let at = at_arg(env, a[3])?;
        let table = ByteTable::any(off.u32s(), bytes.u8s(), "offsets", "bytes")?;
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
        xxh64_hex_many(&table, &mut out.u8s_mut()[at..at + need]);
        undefined(env)
    }
}

/// A non-negative integer index argument.
unsafe fn at_arg(env: napi_env, v: napi_value) -> R<usize> {
    if unsafe { type_of(env, v)? } != NAPI_NUMBER {
        return Err(bad("at must be a non-negative integer"));
    }
    let mut x = 0f64;
    ok(unsafe { napi_get_value_double(env, v, &mut x) }, "get_value_double")?;
    if !(x >= 0.0 && x.fract() == 0.0 && x <= u32::MAX as f64) {
        return Err(bad(format!("at must be a non-negative integer, got {x}")));
    }
    Ok(x as usize)
}

// ---- registration -------------------------------------------------------------------

macro_rules! callbacks {
    ($($js:literal => $f:ident),* $(,)?) => {
        [$(($js, {
            unsafe extern "C" fn cb(env: napi_env, info: napi_callback_info) -> napi_value {
                match unsafe { $f(env, info) } {
                    Ok(v) => v,
                    Err(t) => {
                        unsafe { throw(env, t) };
                        null_mut()
                    }
                }
            }
            cb as napi_callback
        })),*]
    };
}

unsafe fn register(env: napi_env, exports: napi_value) -> R<()> {
    let fns = callbacks![
        c"xxh64" => js_xxh64,
        c"xxh64Hex" => js_xxh64_hex,
        c"xxh64Init" => js_xxh64_init,
        c"xxh64Update" => js_xxh64_update,
        c"xxh64Digest" => js_xxh64_digest,
        c"toposort" => js_toposort,
        c"expand" => js_expand,
        c"fingerprintAll" => js_fingerprint_all,
        c"loweredIdentities" => js_lowered_identities,
        c"xxh64HexMany" => js_xxh64_hex_many,
        c"duplicateSteps" => js_duplicate_steps,
        c"readFiles" => js_read_files,
    ];
    unsafe {
        for (name, cb) in fns {
            let mut f = null_mut();
            ok(
                napi_create_function(env, name.as_ptr(), usize::MAX, cb, null_mut(), &mut f),
                "create_function",
            )?;
            ok(
                napi_set_named_property(env, exports, name.as_ptr(), f),
                "set_named_property",
            )?;
        }
        for (name, value) in [(c"abiVersion", ABI_VERSION), (c"xxh64StateBytes", STATE_BYTES as u32)] {
            let mut v = null_mut();
            ok(napi_create_uint32(env, value, &mut v), "create_uint32")?;
            ok(
                napi_set_named_property(env, exports, name.as_ptr(), v),
                "set_named_property",
            )?;
        }
    }
    Ok(())
}

/// Node's entry point for N-API addons.
///
/// # Safety
/// Called by Node with a valid `env` and `exports` object.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
    if let Err(t) = unsafe { register(env, exports) } {
        unsafe { throw(env, t) };
        return null_mut();
    }
    exports
}
