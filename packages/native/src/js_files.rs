//! `readFiles(base, names, suffix?)`: the one asynchronous export. The names are copied,
//! [`read_files`] runs on a thread of libuv's pool (a napi-rs `AsyncTask`), and the promise
//! resolves on the main thread with `{ bytes, ends, errors }` (see files.rs). A caller that
//! splits a batch into chunks gets them read on as many threads at once.

use napi::bindgen_prelude::{AsyncTask, Env, Uint8Array, Uint32Array, Unknown};
use napi::{Task, bindgen_prelude::Result};
use napi_derive::napi;

use crate::files::{FileBatch, read_files};
use crate::js_args::{Arg, Code};

/// What `readFiles` resolves with: file `i` is `bytes[ends[i-1]..ends[i]]` when `errors[i]` is 0.
#[napi(object)]
pub struct ReadFilesResult {
    pub bytes: Uint8Array,
    pub ends: Uint32Array,
    pub errors: Uint32Array,
}

pub struct ReadFiles {
    base: Vec<u8>,
    names: Vec<u8>,
    suffix: Vec<u8>,
}

impl Task for ReadFiles {
    type Output = FileBatch;
    type JsValue = ReadFilesResult;

    fn compute(&mut self) -> Result<FileBatch> {
        Ok(read_files(&self.base, &self.names, &self.suffix))
    }

    /// The bytes go to JS without a copy (a copy where the runtime forbids external buffers):
    /// a warm run's batch is megabytes, and fresh pages cost a fault each on a VM.
    fn resolve(&mut self, _env: Env, batch: FileBatch) -> Result<ReadFilesResult> {
        Ok(ReadFilesResult {
            bytes: Uint8Array::new(batch.bytes),
            ends: Uint32Array::new(batch.ends),
            errors: Uint32Array::new(batch.errors),
        })
    }
}

#[napi(js_name = "readFiles")]
pub fn js_read_files(env: &Env, base: Unknown, names: Unknown, suffix: Unknown) -> Result<AsyncTask<ReadFiles>, Code> {
    let mut scratch = Vec::new();
    let base = Arg::new(env, base).bytes("base", &mut scratch)?.to_vec();
    let names = Arg::new(env, names).bytes("names", &mut scratch)?.to_vec();
    let suffix = Arg::new(env, suffix);
    let suffix = if suffix.is_undefined()? {
        Vec::new()
    } else {
        suffix.bytes("suffix", &mut scratch)?.to_vec()
    };
    Ok(AsyncTask::new(ReadFiles { base, names, suffix }))
}
