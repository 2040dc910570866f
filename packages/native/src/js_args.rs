//! Reading and making the JS values the exports take and return. napi-rs registers the
//! functions and throws their errors; these helpers check each argument themselves so that a
//! bad one throws `CAIRN_NATIVE_BAD_INPUT` naming it (napi-rs's own conversions would throw
//! `InvalidArg` with a Rust type name). Nothing here can panic on user input.

use std::ffi::c_void;
use std::ptr::null_mut;

use napi::bindgen_prelude::{Env, Unknown};
use napi::sys;
use napi::sys::{TypedarrayType, ValueType};

use crate::graph::InputError;

/// The stable `code` of every error the exports throw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// An argument is not what the function takes; the message names it.
    BadInput,
    /// N-API itself failed (out of memory, a terminating worker): a bug or the runtime, not the caller.
    Internal,
}

impl AsRef<str> for Code {
    fn as_ref(&self) -> &str {
        match self {
            Code::BadInput => "CAIRN_NATIVE_BAD_INPUT",
            Code::Internal => "CAIRN_NATIVE_INTERNAL",
        }
    }
}

/// What every export returns: its value, or an error thrown with a [`Code`].
pub type R<T> = Result<T, napi::Error<Code>>;

pub fn bad(message: impl Into<String>) -> napi::Error<Code> {
    napi::Error::new(Code::BadInput, message.into())
}

/// Turns an `InputError` of a kernel into the thrown error (`?` in the exports).
pub trait OrBad<T> {
    fn or_bad(self) -> R<T>;
}

impl<T> OrBad<T> for Result<T, InputError> {
    fn or_bad(self) -> R<T> {
        self.map_err(|e| bad(e.0))
    }
}

pub fn ok(status: sys::napi_status, what: &str) -> R<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(
            Code::Internal,
            format!("N-API {what} failed with status {status}"),
        ))
    }
}

/// A JS value the exports read or return, with the environment it lives in.
#[derive(Clone, Copy)]
pub struct Arg {
    env: sys::napi_env,
    value: sys::napi_value,
}

impl Arg {
    pub fn new(env: &Env, v: Unknown<'_>) -> Self {
        use napi::JsValue;
        Arg {
            env: env.raw(),
            value: v.raw(),
        }
    }

    fn type_of(self) -> R<i32> {
        let mut t = 0;
        ok(unsafe { sys::napi_typeof(self.env, self.value, &mut t) }, "typeof")?;
        Ok(t)
    }

    pub fn is_undefined(self) -> R<bool> {
        Ok(self.type_of()? == ValueType::napi_undefined)
    }

    fn typed(self, want: i32, name: &str) -> R<View> {
        let kind_name = if want == TypedarrayType::uint32_array {
            "Uint32Array"
        } else {
            "Uint8Array"
        };
        let mut is = false;
        ok(
            unsafe { sys::napi_is_typedarray(self.env, self.value, &mut is) },
            "is_typedarray",
        )?;
        if !is {
            return Err(bad(format!("{name} must be a {kind_name}")));
        }
        let (mut kind, mut len, mut data, mut offset) = (0, 0usize, null_mut::<c_void>(), 0usize);
        let mut buffer = null_mut();
        ok(
            unsafe {
                sys::napi_get_typedarray_info(
                    self.env,
                    self.value,
                    &mut kind,
                    &mut len,
                    &mut data,
                    &mut buffer,
                    &mut offset,
                )
            },
            "get_typedarray_info",
        )?;
        if kind != want {
            return Err(bad(format!("{name} must be a {kind_name}, got another typed array")));
        }
        let elem = if want == TypedarrayType::uint32_array { 4 } else { 1 };
        if len > 0 && (data.is_null() || !(data as usize).is_multiple_of(elem)) {
            return Err(bad(format!("{name} has no usable memory (detached or misaligned)")));
        }
        Ok(View {
            ptr: data as *mut u8,
            bytes: len * elem,
        })
    }

    /// A Uint32Array argument.
    pub fn u32s(self, name: &str) -> R<View> {
        self.typed(TypedarrayType::uint32_array, name)
    }

    /// A Uint8Array argument.
    pub fn u8s(self, name: &str) -> R<View> {
        self.typed(TypedarrayType::uint8_array, name)
    }

    /// Bytes to hash: a Uint8Array (borrowed) or a string (UTF-8, copied into `scratch`).
    pub fn bytes<'a>(self, name: &str, scratch: &'a mut Vec<u8>) -> R<&'a [u8]> {
        if self.type_of()? != ValueType::napi_string {
            return Ok(unsafe { self.u8s(name)?.u8s() });
        }
        let utf8 = |buf: *mut u8, size: usize, len: &mut usize| {
            ok(
                unsafe { sys::napi_get_value_string_utf8(self.env, self.value, buf.cast(), size, len) },
                "get_value_string_utf8",
            )
        };
        // A truncated copy ends at least 4 bytes short: V8 never writes part of a character.
        scratch.resize(256, 0);
        let mut len = 0usize;
        utf8(scratch.as_mut_ptr(), 256, &mut len)?;
        if len + 4 >= 256 {
            utf8(null_mut(), 0, &mut len)?;
            scratch.resize(len + 1, 0);
            utf8(scratch.as_mut_ptr(), len + 1, &mut len)?;
        }
        Ok(&scratch[..len])
    }

    /// A seed: a bigint reduced mod 2^64 (as `BigInt.asUintN(64, seed)`), or 0 when undefined.
    pub fn seed(self) -> R<u64> {
        match self.type_of()? {
            ValueType::napi_undefined => Ok(0),
            ValueType::napi_bigint => {
                let (mut seed, mut lossless) = (0u64, false);
                ok(
                    unsafe { sys::napi_get_value_bigint_uint64(self.env, self.value, &mut seed, &mut lossless) },
                    "get_value_bigint_uint64",
                )?;
                Ok(seed)
            }
            _ => Err(bad("seed must be a bigint or undefined")),
        }
    }

    /// A non-negative integer index.
    pub fn index(self, name: &str) -> R<usize> {
        if self.type_of()? != ValueType::napi_number {
            return Err(bad(format!("{name} must be a non-negative integer")));
        }
        let mut x = 0f64;
        ok(
            unsafe { sys::napi_get_value_double(self.env, self.value, &mut x) },
            "get_value_double",
        )?;
        if !(x >= 0.0 && x.fract() == 0.0 && x <= u32::MAX as f64) {
            return Err(bad(format!("{name} must be a non-negative integer, got {x}")));
        }
        Ok(x as usize)
    }
}

/// A typed array's memory, borrowed for the duration of one call.
#[derive(Clone, Copy)]
pub struct View {
    ptr: *mut u8,
    /// Its length in bytes.
    pub bytes: usize,
}

impl View {
    /// # Safety
    /// Only during the call that read the argument, and only while no `u8s_mut` of it is alive.
    pub unsafe fn u32s<'a>(self) -> &'a [u32] {
        if self.bytes == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(self.ptr as *const u32, self.bytes / 4) }
        }
    }
    /// # Safety
    /// As [`View::u32s`].
    pub unsafe fn u8s<'a>(self) -> &'a [u8] {
        if self.bytes == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(self.ptr, self.bytes) }
        }
    }
    /// # Safety
    /// As [`View::u32s`], and the caller has checked with [`View::overlaps`] that no other
    /// view of the call shares its memory.
    pub unsafe fn u8s_mut<'a>(self) -> &'a mut [u8] {
        if self.bytes == 0 {
            &mut []
        } else {
            unsafe { std::slice::from_raw_parts_mut(self.ptr, self.bytes) }
        }
    }
    /// The same memory exactly (the same start and length).
    pub fn same(self, o: View) -> bool {
        self.ptr == o.ptr && self.bytes == o.bytes
    }
    pub fn overlaps(self, o: View) -> bool {
        let (a, b) = (self.ptr as usize, o.ptr as usize);
        self.bytes > 0 && o.bytes > 0 && a < b + o.bytes && b < a + self.bytes
    }
}

/// A fresh Uint8Array (`uint32: false`) or Uint32Array of `len` elements whose bytes `fill`
/// writes, in memory V8 owns: cheaper than an external buffer for the results of one call.
pub fn new_typed<'env>(env: &'env Env, uint32: bool, len: usize, fill: impl FnOnce(&mut [u8])) -> R<Unknown<'env>> {
    let (kind, bytes) = if uint32 {
        (TypedarrayType::uint32_array, len * 4)
    } else {
        (TypedarrayType::uint8_array, len)
    };
    let (mut data, mut ab, mut out) = (null_mut::<c_void>(), null_mut(), null_mut());
    ok(
        unsafe { sys::napi_create_arraybuffer(env.raw(), bytes, &mut data, &mut ab) },
        "create_arraybuffer",
    )?;
    if bytes > 0 {
        fill(unsafe { std::slice::from_raw_parts_mut(data as *mut u8, bytes) });
    }
    ok(
        unsafe { sys::napi_create_typedarray(env.raw(), kind, len, ab, 0, &mut out) },
        "create_typedarray",
    )?;
    Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), out) })
}

pub fn u32_array<'env>(env: &'env Env, v: &[u32]) -> R<Unknown<'env>> {
    new_typed(env, true, v.len(), |b| {
        for (dst, x) in b.chunks_exact_mut(4).zip(v) {
            dst.copy_from_slice(&x.to_ne_bytes());
        }
    })
}
