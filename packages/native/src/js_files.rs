//! `readFiles(base, names, suffix?)`: the one asynchronous export. The names are copied,
//! [`read_files`] runs on a thread of libuv's pool (a napi-rs `AsyncTask`), and the promise
//! resolves on the main thread with `{ bytes, ends, errors }` (see files.rs). A caller that
//! splits a batch into chunks gets them read on as many threads at once.

use napi::bindgen_prelude::{AsyncTask, Env, Uint8Array, Uint32Array, Unknown};
use napi::{Task, bindgen_prelude::Result};
use napi_derive::napi;

use crate::files::{FileBatch, Then, read_files};
use crate::js_args::{Arg, Code};

/// What `readFiles` read (see there).
#[napi(object, js_name = "NativeFileBatch")]
pub struct ReadFilesResult {
    /// Every file read, one after another.
    #[napi(readonly)]
    pub bytes: Uint8Array,
    /// Where each file ends in `bytes`.
    #[napi(readonly)]
    pub ends: Uint32Array,
    /// 0 for a file read, else why not (see `readFiles`).
    #[napi(readonly)]
    pub errors: Uint32Array,
    /// True when `noLinks` was asked: no file was read through a named directory that is a symbolic link.
    #[napi(readonly)]
    pub links_checked: bool,
}

pub struct ReadFiles {
    base: Vec<u8>,
    names: Vec<u8>,
    suffix: Vec<u8>,
    no_links: bool,
    /// `thenToken` and `thenSuffix`, when given.
    then: Option<(Vec<u8>, Vec<u8>)>,
}

impl Task for ReadFiles {
    type Output = FileBatch;
    type JsValue = ReadFilesResult;

    fn compute(&mut self) -> Result<FileBatch> {
        let then = self.then.as_ref().map(|(token, suffix)| Then { token, suffix });
        Ok(read_files(&self.base, &self.names, &self.suffix, self.no_links, then))
    }

    /// The bytes go to JS without a copy (a copy where the runtime forbids external buffers):
    /// a warm run's batch is megabytes, and fresh pages cost a fault each on a VM.
    fn resolve(&mut self, _env: Env, batch: FileBatch) -> Result<ReadFilesResult> {
        Ok(ReadFilesResult {
            bytes: Uint8Array::new(batch.bytes),
            ends: Uint32Array::new(batch.ends),
            errors: Uint32Array::new(batch.errors),
            links_checked: batch.links_checked,
        })
    }
}

/// Reads the file `name + suffix` for every name in `names` (separated by NUL bytes; `''` names
/// none), relative to the directory `base` (`''`: names are paths as they are), on a thread of
/// libuv's pool; several calls at once are read on several threads. File `i` is
/// `bytes[ends[i-1], ends[i])` (`ends[-1]` = 0) when `errors[i]` is 0; else it has no bytes and
/// `errors[i]` is an errno plus `1 << 16` when `open` failed (a missing file, or an empty name:
/// `65536 + ENOENT`) or `2 << 16` when `read` did, or `0xffffffff`: not read, the batch would
/// pass 4 GiB. `noLinks`: a name that is a symbolic link is not read but fails as
/// `65536 + ELOOP` (so may a file reached through another link below `base`, on Linux), and
/// `linksChecked` says so: the caller reads those itself (files.rs). Bad arguments throw at once
/// (as every function here does); the promise rejects only on an N-API failure.
/// `thenToken` and `thenSuffix` (both or neither): every name has two entries, its file and
/// then `name + thenSuffix`, read (links followed) only when the first was read and holds
/// exactly `thenToken`, else `errors` is `0xfffffffe`: a status and its record in one call.
/// @default suffix '', noLinks false
#[napi(
    js_name = "readFiles",
    ts_args_type = "base: string | Uint8Array, names: string | Uint8Array, suffix?: string | Uint8Array, noLinks?: boolean, thenToken?: string | Uint8Array, thenSuffix?: string | Uint8Array",
    ts_return_type = "Promise<NativeFileBatch>"
)]
pub fn js_read_files(
    env: &Env,
    base: Unknown,
    names: Unknown,
    suffix: Unknown,
    no_links: Option<bool>,
    then_token: Unknown,
    then_suffix: Unknown,
) -> Result<AsyncTask<ReadFiles>, Code> {
    let mut scratch = Vec::new();
    let base = Arg::new(env, base).bytes("base", &mut scratch)?.to_vec();
    let names = Arg::new(env, names).bytes("names", &mut scratch)?.to_vec();
    let suffix = Arg::new(env, suffix);
    let suffix = if suffix.is_undefined()? {
        Vec::new()
    } else {
        suffix.bytes("suffix", &mut scratch)?.to_vec()
    };
    let then_token = Arg::new(env, then_token);
    let then = if then_token.is_undefined()? {
        None
    } else {
        let token = then_token.bytes("thenToken", &mut scratch)?.to_vec();
        Some((
            token,
            Arg::new(env, then_suffix).bytes("thenSuffix", &mut scratch)?.to_vec(),
        ))
    };
    Ok(AsyncTask::new(ReadFiles {
        base,
        names,
        suffix,
        no_links: no_links.unwrap_or(false),
        then,
    }))
}
