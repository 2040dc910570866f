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
//!
//! napi-rs keeps per-thread state with destructors and a hash map seeded at random, which makes
//! std need five more: `getrandom` (2.25) is a system call too; `pthread_key_create`,
//! `pthread_key_delete` and `pthread_setspecific` moved into libc.so.6 at 2.34 and are bound
//! here to their first version, which every glibc has; `__cxa_thread_atexit_impl` (2.18, how
//! a thread's destructors are registered) gets a fallback for the one glibc without it.
//! The thread spawn.rs starts to wait for a program needs `pthread_create` and four
//! `pthread_attr_*` functions, and napi-rs's threadsafe functions (and js_spawn.rs) need `dlopen`,
//! `dladdr` and `dlsym`, which moved into libc.so.6 at 2.34 too (from libpthread and libdl): bound
//! to their first version the same way.
//! Each definition is only reached where glibc lacks the function: the loader resolves the
//! module's calls through the process first, where glibc (or libpthread) defines them.

use std::ffi::{c_char, c_int, c_long, c_uint, c_ulong, c_void};

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
    pub const GETRANDOM: i64 = 318;
}
#[cfg(target_arch = "aarch64")]
mod nr {
    pub const FSTAT: i64 = 80;
    pub const NEWFSTATAT: i64 = 79;
    pub const STATX: i64 = 291;
    pub const GETTID: i64 = 178;
    pub const GETRANDOM: i64 = 278;
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

/// `getrandom(2)`; before Linux 3.17 it fails with ENOSYS and std reads /dev/urandom instead.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn getrandom(buf: *mut c_void, len: usize, flags: c_uint) -> isize {
    unsafe { syscall(nr::GETRANDOM, buf, len, flags as c_long) as isize }
}

/// The first glibc version of each architecture, where the pthread key functions were born.
#[cfg(target_arch = "x86_64")]
macro_rules! base_version {
    () => {
        "GLIBC_2.2.5"
    };
}
#[cfg(target_arch = "aarch64")]
macro_rules! base_version {
    () => {
        "GLIBC_2.17"
    };
}

// `.symver` binds each `glibc_*` reference to that version of glibc's function (a plain
// reference would bind to the newest one, GLIBC_2.34).
std::arch::global_asm!(
    concat!(".symver glibc_pthread_key_create, pthread_key_create@", base_version!()),
    concat!(".symver glibc_pthread_key_delete, pthread_key_delete@", base_version!()),
    concat!(
        ".symver glibc_pthread_setspecific, pthread_setspecific@",
        base_version!()
    ),
    concat!(
        ".symver glibc_pthread_getspecific, pthread_getspecific@",
        base_version!()
    ),
    concat!(".symver glibc_pthread_create, pthread_create@", base_version!()),
    concat!(".symver glibc_pthread_attr_init, pthread_attr_init@", base_version!()),
    concat!(
        ".symver glibc_pthread_attr_destroy, pthread_attr_destroy@",
        base_version!()
    ),
    concat!(
        ".symver glibc_pthread_attr_setdetachstate, pthread_attr_setdetachstate@",
        base_version!()
    ),
    concat!(
        ".symver glibc_pthread_attr_setstacksize, pthread_attr_setstacksize@",
        base_version!()
    ),
    concat!(".symver glibc_dlopen, dlopen@", base_version!()),
    concat!(".symver glibc_dladdr, dladdr@", base_version!()),
    concat!(".symver glibc_dlsym, dlsym@", base_version!()),
);

type Dtor = unsafe extern "C" fn(*mut c_void);

unsafe extern "C" {
    fn glibc_pthread_key_create(key: *mut c_uint, dtor: Option<Dtor>) -> c_int;
    fn glibc_pthread_key_delete(key: c_uint) -> c_int;
    fn glibc_pthread_setspecific(key: c_uint, value: *const c_void) -> c_int;
    fn glibc_pthread_getspecific(key: c_uint) -> *mut c_void;
    fn glibc_pthread_create(thread: *mut c_ulong, attr: *const c_void, start: Start, arg: *mut c_void) -> c_int;
    fn glibc_pthread_attr_init(attr: *mut c_void) -> c_int;
    fn glibc_pthread_attr_destroy(attr: *mut c_void) -> c_int;
    fn glibc_pthread_attr_setdetachstate(attr: *mut c_void, state: c_int) -> c_int;
    fn glibc_pthread_attr_setstacksize(attr: *mut c_void, size: usize) -> c_int;
    fn glibc_dlopen(file: *const c_char, mode: c_int) -> *mut c_void;
    fn glibc_dladdr(addr: *const c_void, info: *mut c_void) -> c_int;
    fn glibc_dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

type Start = extern "C" fn(*mut c_void) -> *mut c_void;

// The thread that waits for a program started by spawn.rs (pthreads directly: std's threads
// would also need `dlsym`, at GLIBC_2.34).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_create(
    thread: *mut c_ulong,
    attr: *const c_void,
    start: Start,
    arg: *mut c_void,
) -> c_int {
    unsafe { glibc_pthread_create(thread, attr, start, arg) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_attr_init(attr: *mut c_void) -> c_int {
    unsafe { glibc_pthread_attr_init(attr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_attr_destroy(attr: *mut c_void) -> c_int {
    unsafe { glibc_pthread_attr_destroy(attr) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_attr_setdetachstate(attr: *mut c_void, state: c_int) -> c_int {
    unsafe { glibc_pthread_attr_setdetachstate(attr, state) }
}

// napi-rs pins the module in memory while a threadsafe function lives (dladdr, dlopen); js_spawn.rs
// looks up `posix_spawn_file_actions_addchdir_np` (dlsym).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlopen(file: *const c_char, mode: c_int) -> *mut c_void {
    unsafe { glibc_dlopen(file, mode) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn dladdr(addr: *const c_void, info: *mut c_void) -> c_int {
    unsafe { glibc_dladdr(addr, info) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void {
    unsafe { glibc_dlsym(handle, name) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_attr_setstacksize(attr: *mut c_void, size: usize) -> c_int {
    unsafe { glibc_pthread_attr_setstacksize(attr, size) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_key_create(key: *mut c_uint, dtor: Option<Dtor>) -> c_int {
    unsafe { glibc_pthread_key_create(key, dtor) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_key_delete(key: c_uint) -> c_int {
    unsafe { glibc_pthread_key_delete(key) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn pthread_setspecific(key: c_uint, value: *const c_void) -> c_int {
    unsafe { glibc_pthread_setspecific(key, value) }
}

/// One thread's registered destructors, run in reverse order when the thread exits.
type Dtors = Vec<(Dtor, *mut c_void)>;

/// The key whose destructor runs a thread's [`Dtors`], or `None` when glibc had no key left.
static DTORS_KEY: std::sync::OnceLock<Option<c_uint>> = std::sync::OnceLock::new();

unsafe extern "C" fn run_dtors(list: *mut c_void) {
    // glibc cleared the key before this call: a destructor that registers another starts a
    // new list, which glibc runs in its next round (it makes up to four).
    let list = unsafe { Box::from_raw(list as *mut Dtors) };
    for (dtor, obj) in list.into_iter().rev() {
        unsafe { dtor(obj) };
    }
}

/// Registers `dtor(obj)` to run when the calling thread exits. Reached only on glibc 2.17
/// (2.18 added its own); unlike glibc's, the main thread's list does not run at `exit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cxa_thread_atexit_impl(dtor: Dtor, obj: *mut c_void, _dso: *mut c_void) -> c_int {
    let key = DTORS_KEY.get_or_init(|| {
        let mut key = 0;
        (unsafe { glibc_pthread_key_create(&mut key, Some(run_dtors)) } == 0).then_some(key)
    });
    let Some(key) = *key else { return -1 };
    let mut list = unsafe { glibc_pthread_getspecific(key) } as *mut Dtors;
    if list.is_null() {
        list = Box::into_raw(Box::new(Dtors::new()));
        if unsafe { glibc_pthread_setspecific(key, list as *const c_void) } != 0 {
            drop(unsafe { Box::from_raw(list) });
            return -1;
        }
    }
    unsafe { (*list).push((dtor, obj)) };
    0
}
