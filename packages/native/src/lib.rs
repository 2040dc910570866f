//! Cairn's native acceleration: XXH64, toposort, expansion and Merkle fingerprints as pure
//! functions, exposed to Node through a thin hand-written N-API shim (no dependencies).

pub mod duplicates;
pub mod expand;
pub mod fingerprint;
pub mod graph;
// Not in test builds: the test harness is an executable linked for this machine only.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
mod glibc_floor;
mod js;
mod sys;
pub mod toposort;
pub mod xxh64;

#[cfg(test)]
mod testjson;
