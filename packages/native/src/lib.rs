//! Cairn's native acceleration: XXH64, toposort, expansion and Merkle fingerprints as pure
//! functions, and a batch reader of small files that runs on libuv's thread pool, exposed to
//! Node by thin `#[napi]` functions (napi-rs) in js.rs and js_files.rs; on Linux, a spawn that
//! does not fork Node (spawn.rs, js_spawn.rs).

pub mod duplicates;
pub mod expand;
pub mod files;
pub mod fingerprint;
pub mod graph;
// Not in test builds: the test harness is an executable linked for this machine only.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
mod glibc_floor;
// napi-derive registers nothing in test builds (no Node to register with), so the shims
// look unused there.
#[cfg_attr(test, allow(dead_code))]
mod js;
#[cfg_attr(test, allow(dead_code))]
mod js_args;
#[cfg_attr(test, allow(dead_code))]
mod js_files;
#[cfg(target_os = "linux")]
#[cfg_attr(test, allow(dead_code))]
mod js_spawn;
#[cfg(target_os = "linux")]
pub mod spawn;
pub mod toposort;
pub mod xxh64;

#[cfg(test)]
mod testjson;
