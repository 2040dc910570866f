//! The N-API C functions this module uses, declared by hand. They resolve from the `node`
//! binary when the addon is loaded; `LD_BIND_NOW=1` makes a misspelled name fail at load.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

#[repr(C)]
pub struct napi_env__ {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct napi_value__ {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct napi_callback_info__ {
    _opaque: [u8; 0],
}

pub type napi_env = *mut napi_env__;
pub type napi_value = *mut napi_value__;
pub type napi_callback_info = *mut napi_callback_info__;
pub type napi_callback = unsafe extern "C" fn(env: napi_env, info: napi_callback_info) -> napi_value;

#[repr(C)]
pub struct napi_async_work__ {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct napi_deferred__ {
    _opaque: [u8; 0],
}
pub type napi_async_work = *mut napi_async_work__;
pub type napi_deferred = *mut napi_deferred__;
/// Frees what JS no longer holds (an external buffer's memory).
pub type napi_finalize = unsafe extern "C" fn(env: napi_env, data: *mut c_void, hint: *mut c_void);
/// Runs on a thread of libuv's pool: it must not touch `env`.
pub type napi_async_execute_callback = unsafe extern "C" fn(env: napi_env, data: *mut c_void);
/// Runs on the main thread once `execute` returned (or the work was cancelled).
pub type napi_async_complete_callback = unsafe extern "C" fn(env: napi_env, status: napi_status, data: *mut c_void);

/// `napi_status`; 0 is `napi_ok`.
pub type napi_status = i32;
pub const NAPI_OK: napi_status = 0;

/// `napi_typedarray_type`.
pub type napi_typedarray_type = i32;
pub const NAPI_UINT8_ARRAY: napi_typedarray_type = 1;
pub const NAPI_UINT32_ARRAY: napi_typedarray_type = 6;

/// `napi_valuetype`.
pub type napi_valuetype = i32;
pub const NAPI_UNDEFINED: napi_valuetype = 0;
pub const NAPI_NUMBER: napi_valuetype = 3;
pub const NAPI_STRING: napi_valuetype = 4;
pub const NAPI_BIGINT: napi_valuetype = 9;

unsafe extern "C" {
    pub fn napi_create_function(
        env: napi_env,
        utf8name: *const c_char,
        length: usize,
        cb: napi_callback,
        data: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_set_named_property(
        env: napi_env,
        object: napi_value,
        utf8name: *const c_char,
        value: napi_value,
    ) -> napi_status;
    pub fn napi_get_cb_info(
        env: napi_env,
        cbinfo: napi_callback_info,
        argc: *mut usize,
        argv: *mut napi_value,
        this_arg: *mut napi_value,
        data: *mut *mut c_void,
    ) -> napi_status;
    pub fn napi_typeof(env: napi_env, value: napi_value, result: *mut napi_valuetype) -> napi_status;
    pub fn napi_is_typedarray(env: napi_env, value: napi_value, result: *mut bool) -> napi_status;
    pub fn napi_get_typedarray_info(
        env: napi_env,
        typedarray: napi_value,
        kind: *mut napi_typedarray_type,
        length: *mut usize,
        data: *mut *mut c_void,
        arraybuffer: *mut napi_value,
        byte_offset: *mut usize,
    ) -> napi_status;
    pub fn napi_create_arraybuffer(
        env: napi_env,
        byte_length: usize,
        data: *mut *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_typedarray(
        env: napi_env,
        kind: napi_typedarray_type,
        length: usize,
        arraybuffer: napi_value,
        byte_offset: usize,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_object(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_get_boolean(env: napi_env, value: bool, result: *mut napi_value) -> napi_status;
    pub fn napi_get_undefined(env: napi_env, result: *mut napi_value) -> napi_status;
    pub fn napi_get_value_double(env: napi_env, value: napi_value, result: *mut f64) -> napi_status;
    pub fn napi_create_uint32(env: napi_env, value: u32, result: *mut napi_value) -> napi_status;
    pub fn napi_create_string_latin1(
        env: napi_env,
        s: *const c_char,
        length: usize,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_get_value_string_utf8(
        env: napi_env,
        value: napi_value,
        buf: *mut c_char,
        bufsize: usize,
        result: *mut usize,
    ) -> napi_status;
    pub fn napi_get_value_bigint_uint64(
        env: napi_env,
        value: napi_value,
        result: *mut u64,
        lossless: *mut bool,
    ) -> napi_status;
    pub fn napi_create_bigint_uint64(env: napi_env, value: u64, result: *mut napi_value) -> napi_status;
    pub fn napi_throw_error(env: napi_env, code: *const c_char, msg: *const c_char) -> napi_status;
    pub fn napi_is_exception_pending(env: napi_env, result: *mut bool) -> napi_status;
    pub fn napi_create_error(env: napi_env, code: napi_value, msg: napi_value, result: *mut napi_value) -> napi_status;
    pub fn napi_create_external_arraybuffer(
        env: napi_env,
        data: *mut c_void,
        byte_length: usize,
        finalize_cb: napi_finalize,
        finalize_hint: *mut c_void,
        result: *mut napi_value,
    ) -> napi_status;
    pub fn napi_create_promise(env: napi_env, deferred: *mut napi_deferred, promise: *mut napi_value) -> napi_status;
    pub fn napi_resolve_deferred(env: napi_env, deferred: napi_deferred, resolution: napi_value) -> napi_status;
    pub fn napi_reject_deferred(env: napi_env, deferred: napi_deferred, rejection: napi_value) -> napi_status;
    pub fn napi_create_async_work(
        env: napi_env,
        async_resource: napi_value,
        async_resource_name: napi_value,
        execute: napi_async_execute_callback,
        complete: napi_async_complete_callback,
        data: *mut c_void,
        result: *mut napi_async_work,
    ) -> napi_status;
    pub fn napi_queue_async_work(env: napi_env, work: napi_async_work) -> napi_status;
    pub fn napi_delete_async_work(env: napi_env, work: napi_async_work) -> napi_status;
}
