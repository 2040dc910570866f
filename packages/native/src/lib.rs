//! Cairn's native acceleration: XXH64, toposort, expansion and Merkle fingerprints as pure
//! functions, and a batch reader of small files that runs on libuv's thread pool, exposed to
//! Node by thin `#[napi]` functions (napi-rs) in js.rs and js_files.rs.

pub mod duplicates;
pub mod expand;
pub mod files;
pub mod fingerprint;
pub mod graph;
// Not in test builds: the test harness is an executable linked for this machine only.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
mod glibc_floor;
mod js;
mod js_args;
mod js_files;
pub mod toposort;
pub mod xxh64;

#[cfg(test)]
mod testjson;
