//! `readFiles(base, names, suffix?)`: the one asynchronous export. The names are copied, [`read_files`] runs on
//! a thread of libuv's pool (N-API async work), and the promise resolves on the main thread with
//! `{ bytes, ends, errors }` (see files.rs). A caller that splits a batch into chunks gets them
//! read on as many threads at once.

use std::ffi::{c_char, c_void};
use std::ptr::null_mut;

use crate::files::{FileBatch, read_files};
use crate::js::{R, args, bytes_arg, new_typed, ok, type_of, u32_array};
use crate::sys::*;

struct ReadWork {
    base: Vec<u8>,
    names: Vec<u8>,
    suffix: Vec<u8>,
    batch: FileBatch,
    deferred: napi_deferred,
    work: napi_async_work,
}

unsafe extern "C" fn execute(_env: napi_env, data: *mut c_void) {
    let w = unsafe { &mut *(data as *mut ReadWork) };
    w.batch = read_files(&w.base, &w.names, &w.suffix);
}

unsafe fn latin1(env: napi_env, s: &str) -> R<napi_value> {
    let mut out = null_mut();
    ok(
        unsafe { napi_create_string_latin1(env, s.as_ptr() as *const c_char, s.len(), &mut out) },
        "create_string_latin1",
    )?;
    Ok(out)
}

unsafe extern "C" fn free_bytes(_env: napi_env, _data: *mut c_void, hint: *mut c_void) {
    drop(unsafe { Box::from_raw(hint as *mut Vec<u8>) });
}

/// A Uint8Array over `bytes`, handed to JS without a copy (a copy where the runtime forbids
/// external buffers): a warm run's batch is megabytes, and fresh pages cost a fault each on a VM.
unsafe fn bytes_array(env: napi_env, bytes: Vec<u8>) -> R<napi_value> {
    if bytes.is_empty() {
        return unsafe { new_typed(env, NAPI_UINT8_ARRAY, 0, |_| {}) };
    }
    let len = bytes.len();
    let owned = Box::into_raw(Box::new(bytes));
    let (mut ab, mut out) = (null_mut(), null_mut());
    unsafe {
        let data = (*owned).as_mut_ptr() as *mut c_void;
        if napi_create_external_arraybuffer(env, data, len, free_bytes, owned as *mut c_void, &mut ab) != NAPI_OK {
            let bytes = Box::from_raw(owned);
            return new_typed(env, NAPI_UINT8_ARRAY, len, |b| b.copy_from_slice(&bytes));
        }
        ok(
            napi_create_typedarray(env, NAPI_UINT8_ARRAY, len, ab, 0, &mut out),
            "create_typedarray",
        )?;
    }
    Ok(out)
}

unsafe fn resolution(env: napi_env, batch: &mut FileBatch) -> R<napi_value> {
    unsafe {
        let mut obj = null_mut();
        ok(napi_create_object(env, &mut obj), "create_object")?;
        let bytes = bytes_array(env, std::mem::take(&mut batch.bytes))?;
        let ends = u32_array(env, &batch.ends)?;
        let errors = u32_array(env, &batch.errors)?;
        for (key, value) in [(c"bytes", bytes), (c"ends", ends), (c"errors", errors)] {
            ok(
                napi_set_named_property(env, obj, key.as_ptr(), value),
                "set_named_property",
            )?;
        }
        Ok(obj)
    }
}

unsafe fn rejection(env: napi_env, code: &str, message: &str) -> napi_value {
    let mut err = null_mut();
    unsafe {
        if let (Ok(c), Ok(m)) = (latin1(env, code), latin1(env, message)) {
            napi_create_error(env, c, m, &mut err);
        }
    }
    err
}

unsafe extern "C" fn complete(env: napi_env, status: napi_status, data: *mut c_void) {
    let mut w = unsafe { Box::from_raw(data as *mut ReadWork) };
    unsafe {
        napi_delete_async_work(env, w.work);
        if status != NAPI_OK {
            let e = rejection(
                env,
                "CAIRN_NATIVE_INTERNAL",
                &format!("readFiles: async work ended with status {status}"),
            );
            napi_reject_deferred(env, w.deferred, e);
            return;
        }
        match resolution(env, &mut w.batch) {
            Ok(v) => napi_resolve_deferred(env, w.deferred, v),
            Err(t) => napi_reject_deferred(env, w.deferred, rejection(env, t.code, &t.message)),
        };
    }
}

pub(crate) unsafe fn js_read_files(env: napi_env, info: napi_callback_info) -> R<napi_value> {
    unsafe {
        let a = args(env, info)?;
        let mut scratch = Vec::new();
        let base = bytes_arg(env, a[0], "base", &mut scratch)?.to_vec();
        let names = bytes_arg(env, a[1], "names", &mut scratch)?.to_vec();
        let suffix = if type_of(env, a[2])? == NAPI_UNDEFINED {
            Vec::new()
        } else {
            bytes_arg(env, a[2], "suffix", &mut scratch)?.to_vec()
        };
        let (mut deferred, mut promise) = (null_mut(), null_mut());
        ok(napi_create_promise(env, &mut deferred, &mut promise), "create_promise")?;
        let data = Box::into_raw(Box::new(ReadWork {
            base,
            names,
            suffix,
            batch: FileBatch::default(),
            deferred,
            work: null_mut(),
        }));
        let name = latin1(env, "cairn:readFiles")?;
        let queued = ok(
            napi_create_async_work(
                env,
                null_mut(),
                name,
                execute,
                complete,
                data as *mut c_void,
                &mut (*data).work,
            ),
            "create_async_work",
        )
        .and_then(|()| ok(napi_queue_async_work(env, (*data).work), "queue_async_work"));
        if let Err(t) = queued {
            let w = Box::from_raw(data);
            if !w.work.is_null() {
                napi_delete_async_work(env, w.work);
            }
            napi_reject_deferred(env, deferred, rejection(env, t.code, &t.message));
        }
        Ok(promise)
    }
}
