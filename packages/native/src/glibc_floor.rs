//! Keeps the Linux (glibc) build loadable on old distributions: glibc 2.17 and later, the floor
//! of Rust's `*-unknown-linux-gnu` targets (RHEL/CentOS 7, Ubuntu 14.04, Debian 8).
//!
//! Linked on a new glibc, Rust's standard library would bind `stat64` and `fstat64` to their
//! GLIBC_2.33 versions, and `statx` (2.28) and `gettid` (2.30) too: std only calls those two
//! when they exist, but the linker still records their versions as required, so the dynamic
//! loader refuses the module on any older glibc. Defining the four here makes the linker bind
//! std's calls to these definitions (direct system calls, the same ones glibc makes) instead of
//! recording a glibc version. `test/glibc.test.ts` reads the built module's version needs with
//! `objdump -T` and fails if anything newer than 2.17 appears.
//!
//! On kernels older than 4.11, `statx` fails with ENOSYS, which std treats as "use stat64".

use std::ffi::{c_char, c_int, c_long, c_uint, c_void};

unsafe extern "C" {
    /// glibc's `syscall(2)` wrapper (GLIBC_2.2.5): returns -1 and sets `errno` on failure.
    fn syscall(number: c_long, ...) -> c_long;
}

#[cfg(target_arch = "x86_64")]
mod nr {
    pub const FSTAT: i64 = 5;
    pub const NEWFSTATAT: i64 = 262;
    pub const STATX: i64 = 332;
    pub const GETTID: i64 = 186;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const FSTAT: i64 = 80;
    pub const NEWFSTATAT: i64 = 79;
    pub const STATX: i64 = 291;
    pub const GETTID: i64 = 178;
}

const AT_FDCWD: c_long = -100;

// On both architectures glibc's `struct stat64` is the kernel's `struct stat`, so the buffer
// passes through unchanged.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn stat64(path: *const c_char, buf: *mut c_void) -> c_int {
    unsafe { syscall(nr::NEWFSTATAT, AT_FDCWD, path, buf, 0 as c_long) as c_int }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn fstat64(fd: c_int, buf: *mut c_void) -> c_int {
    unsafe { syscall(nr::FSTAT, fd as c_long, buf) as c_int }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn statx(
    dirfd: c_int,
    path: *const c_char,
    flags: c_int,
    mask: c_uint,
    buf: *mut c_void,
) -> c_int {
    unsafe { syscall(nr::STATX, dirfd as c_long, path, flags as c_long, mask as c_long, buf) as c_int }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn gettid() -> c_int {
    unsafe { syscall(nr::GETTID) as c_int }
}
