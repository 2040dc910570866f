//! `spawnGroup(argv, cwd, env, stdout, stderr, onExit)`: starts a program in its own session and
//! process group without forking Node (spawn.rs), and calls `onExit(code, signal)` on the main
//! thread when it ends. A thread per program waits for it (`waitpid` on its pid alone: libuv's
//! SIGCHLD handler reaps only its own children, so neither takes the other's), and hands the exit
//! over through a threadsafe function, which keeps the event loop alive until it has been called.
//! Linux only.

use std::ffi::CString;
use std::sync::OnceLock;

use napi::Status;
use napi::bindgen_prelude::{Env, FnArgs, Function, Result, Unknown};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;

use crate::js_args::{Arg, Code, bad};
use crate::spawn::{Chdir, Exit, Launch, detached, spawn, wait};

/// `posix_spawn_file_actions_addchdir_np` of the process's libc, if it has one (glibc ≥ 2.29):
/// looked up, so that the module still loads where it is missing (glibc_floor.rs).
fn chdir() -> Option<Chdir> {
    static FOUND: OnceLock<Option<usize>> = OnceLock::new();
    let f = *FOUND.get_or_init(|| {
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"posix_spawn_file_actions_addchdir_np".as_ptr()) };
        (!f.is_null()).then_some(f as usize)
    });
    f.map(|f| unsafe { std::mem::transmute::<usize, Chdir>(f) })
}

/// True when `spawnGroup` can start programs here (this libc can set a child's working
/// directory in `posix_spawn`: glibc ≥ 2.29, musl ≥ 1.1.24).
#[napi(js_name = "spawnGroupAvailable")]
pub fn js_spawn_group_available() -> bool {
    chdir().is_some()
}

/// NUL-separated strings as C strings (`''` is none).
fn list(bytes: &[u8]) -> Vec<CString> {
    if bytes.is_empty() {
        return Vec::new();
    }
    // No piece holds a NUL: each is one piece of a split on NUL.
    bytes
        .split(|&b| b == 0)
        .map(|s| CString::new(s).unwrap_or_default())
        .collect()
}

/// Starts `argv[0]` (a path when it holds a `/`, else looked up on the `PATH` of `env`) as the
/// leader of a new session and process group, in `cwd`, with exactly `env`, stdin from
/// /dev/null and stdout and stderr on the descriptors given (duplicated: the caller may close
/// its own at once), as Node's `spawn` with `detached: true` does, but without forking this
/// process. `argv` and `env` are NUL-separated (`KEY=value` each; no piece may hold a NUL).
/// Returns the pid, or a negative errno when the program could not be started (`-ENOENT`: not
/// found or no `cwd`, `-EACCES`: not executable, `-ENOSYS`: not available here, see
/// `spawnGroupAvailable`). `onExit(code, signal)` is called once, on this thread, when it has
/// ended: its exit code and signal 0, or code -1 and the number of the signal that killed it
/// (-1 and 0: its exit was lost). The event loop stays alive until then.
#[napi(
    js_name = "spawnGroup",
    ts_args_type = "argv: string, cwd: string, env: string, stdout: number, stderr: number, onExit: (code: number, signal: number) => void",
    ts_return_type = "number"
)]
pub fn js_spawn_group(
    env: &Env,
    argv: Unknown,
    cwd: Unknown,
    environment: Unknown,
    stdout: i32,
    stderr: i32,
    on_exit: Function<FnArgs<(i32, i32)>, ()>,
) -> Result<i32, Code> {
    let Some(chdir) = chdir() else {
        return Ok(-libc::ENOSYS);
    };
    let mut scratch = Vec::new();
    let argv = list(Arg::new(env, argv).bytes("argv", &mut scratch)?);
    let cwd = CString::new(Arg::new(env, cwd).bytes("cwd", &mut scratch)?).map_err(|_| bad("cwd holds a NUL byte"))?;
    let vars = list(Arg::new(env, environment).bytes("env", &mut scratch)?);
    let Some(program) = argv.first().map(|p| p.as_bytes().to_vec()) else {
        return Err(bad("argv is empty"));
    };
    let tsfn = on_exit
        .build_threadsafe_function::<FnArgs<(i32, i32)>>()
        .callee_handled::<false>()
        .build()
        .map_err(|e| napi::Error::new(Code::Internal, e.reason))?;
    let launch = Launch {
        program: &program,
        argv,
        env: vars,
        cwd,
        stdout,
        stderr,
    };
    let pid = match spawn(&launch, chdir) {
        Ok(pid) => pid,
        Err(errno) => return Ok(-errno),
    };
    let waiter = detached(Box::new(move || {
        let exit = match wait(pid) {
            Exit::Code(c) => (c, 0),
            Exit::Signal(s) => (-1, s),
            Exit::Unknown => (-1, 0),
        };
        let _: Status = tsfn.call(exit.into(), ThreadsafeFunctionCallMode::NonBlocking);
    }));
    if let Err(errno) = waiter {
        // Nobody would reap it: it goes, as if it had not started (EAGAIN: no thread left).
        unsafe { libc::kill(pid, libc::SIGKILL) };
        wait(pid);
        return Ok(-errno);
    }
    Ok(pid)
}
