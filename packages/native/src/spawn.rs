//! Starting a program without copying the caller: `posix_spawn` (glibc ≥ 2.24 and musl start the
//! child with `clone(CLONE_VM | CLONE_VFORK)`: it runs in the caller's memory until it `exec`s),
//! where Node's libuv 1.46 `fork`s, and the caller then pays a copy-on-write fault for every page
//! it touches (tools/bench/README.md, "Command steps: overhead against a bare spawn").
//!
//! What the child gets is what Node's `spawn(program, args, { cwd, env, stdio: ['ignore', out,
//! err], detached: true })` gives it: its own session and process group, `cwd`, exactly `env`,
//! stdin from /dev/null, stdout and stderr on the given descriptors, every signal at its default
//! disposition and none blocked. The program is looked up as `execvp` does, on the `PATH` of `env`
//! (libuv's rule), and the error is the one `execvp` would give: `EACCES` when a candidate was
//! found but could not be run and none could, else `ENOENT`.
//!
//! Linux only: the working directory needs `posix_spawn_file_actions_addchdir_np` (glibc 2.29,
//! musl 1.1.24), which the caller looks up at run time ([`Chdir`]) to keep the module loadable
//! on glibc 2.17 (glibc_floor.rs).

use std::ffi::{CString, c_char, c_int};
use std::ptr::null_mut;

/// `posix_spawn_file_actions_addchdir_np`, found at run time (absent: no native spawn).
pub type Chdir = unsafe extern "C" fn(*mut libc::posix_spawn_file_actions_t, *const c_char) -> c_int;

/// A program to start (see the module's doc).
pub struct Launch<'a> {
    /// The program: a path when it holds a `/` (relative to `cwd`), else a name looked up on `PATH`.
    pub program: &'a [u8],
    /// Its argv, `argv[0]` included.
    pub argv: Vec<CString>,
    /// Its whole environment, `KEY=value` each.
    pub env: Vec<CString>,
    pub cwd: CString,
    /// Descriptors that become its stdout and stderr (`-1`: /dev/null).
    pub stdout: c_int,
    pub stderr: c_int,
}

/// How a program ended: its exit code, or the signal that killed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    Signal(i32),
    /// `waitpid` failed (someone else reaped the child): nothing is known.
    Unknown,
}

/// The places to try for `program`, in order (`execvp`'s rule; `PATH` from `env`, glibc's default without one).
pub fn candidates(program: &[u8], env: &[CString]) -> Vec<Vec<u8>> {
    if program.contains(&b'/') {
        return vec![program.to_vec()];
    }
    let path = env
        .iter()
        .find_map(|e| e.as_bytes().strip_prefix(b"PATH="))
        .unwrap_or(b"/bin:/usr/bin");
    path.split(|&b| b == b':')
        .map(|dir| {
            // An empty entry is the working directory.
            let mut p = if dir.is_empty() { b".".to_vec() } else { dir.to_vec() };
            p.push(b'/');
            p.extend_from_slice(program);
            p
        })
        .collect()
}

struct Attrs {
    attr: libc::posix_spawnattr_t,
    actions: libc::posix_spawn_file_actions_t,
}

impl Drop for Attrs {
    fn drop(&mut self) {
        unsafe {
            libc::posix_spawnattr_destroy(&mut self.attr);
            libc::posix_spawn_file_actions_destroy(&mut self.actions);
        }
    }
}

fn check(rc: c_int) -> Result<(), c_int> {
    if rc == 0 { Ok(()) } else { Err(rc) }
}

fn attrs(launch: &Launch, chdir: Chdir) -> Result<Box<Attrs>, c_int> {
    // Boxed: glibc's structures must not move once initialised.
    let mut a: Box<Attrs> = Box::new(unsafe { std::mem::zeroed() });
    unsafe {
        check(libc::posix_spawnattr_init(&mut a.attr))?;
        check(libc::posix_spawn_file_actions_init(&mut a.actions))?;
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::sigemptyset(&mut none);
        // Node ignores SIGPIPE, and an ignored signal stays ignored across exec.
        check(libc::posix_spawnattr_setsigdefault(&mut a.attr, &all))?;
        check(libc::posix_spawnattr_setsigmask(&mut a.attr, &none))?;
        let flags = libc::POSIX_SPAWN_SETSID as c_int | libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK;
        check(libc::posix_spawnattr_setflags(&mut a.attr, flags as _))?;
        check(chdir(&mut a.actions, launch.cwd.as_ptr()))?;
        check(libc::posix_spawn_file_actions_addopen(
            &mut a.actions,
            0,
            c"/dev/null".as_ptr(),
            libc::O_RDONLY,
            0,
        ))?;
        for (fd, target) in [(launch.stdout, 1), (launch.stderr, 2)] {
            if fd < 0 {
                check(libc::posix_spawn_file_actions_addopen(
                    &mut a.actions,
                    target,
                    c"/dev/null".as_ptr(),
                    libc::O_RDWR,
                    0,
                ))?;
            } else {
                check(libc::posix_spawn_file_actions_adddup2(&mut a.actions, fd, target))?;
            }
        }
    }
    Ok(a)
}

fn pointers(list: &[CString]) -> Vec<*mut c_char> {
    list.iter()
        .map(|s| s.as_ptr() as *mut c_char)
        .chain([null_mut()])
        .collect()
}

/// Starts `launch`; its pid, or the errno of why not.
pub fn spawn(launch: &Launch, chdir: Chdir) -> Result<libc::pid_t, c_int> {
    let a = attrs(launch, chdir)?;
    let argv = pointers(&launch.argv);
    let envp = pointers(&launch.env);
    let mut denied = false;
    for path in candidates(launch.program, &launch.env) {
        let Ok(path) = CString::new(path) else {
            return Err(libc::ENOENT);
        };
        // A relative candidate is found from `cwd`, as the child sees it after its chdir.
        if !path.as_bytes().starts_with(b"/") && !exists_in(&launch.cwd, &path) {
            continue;
        }
        if path.as_bytes().starts_with(b"/") && !exists(&path) {
            continue;
        }
        let mut pid = 0;
        let rc = unsafe {
            libc::posix_spawn(
                &mut pid,
                path.as_ptr(),
                &a.actions,
                &a.attr,
                argv.as_ptr(),
                envp.as_ptr(),
            )
        };
        match rc {
            0 => return Ok(pid),
            // execvp goes on to the next candidate after these.
            libc::EACCES => denied = true,
            libc::ENOENT | libc::ENOTDIR | libc::ESTALE | libc::ENODEV | libc::ETIMEDOUT => {}
            e => return Err(e),
        }
    }
    // A missing working directory is ENOENT too, as Node reports it (its chdir fails first).
    Err(if denied { libc::EACCES } else { libc::ENOENT })
}

fn exists(path: &CString) -> bool {
    unsafe { libc::access(path.as_ptr(), libc::F_OK) == 0 }
}

fn exists_in(dir: &CString, path: &CString) -> bool {
    let mut full = dir.as_bytes().to_vec();
    full.push(b'/');
    full.extend_from_slice(path.as_bytes());
    CString::new(full).is_ok_and(|p| exists(&p))
}

/// Runs `f` on a new detached thread with a small stack (it only waits). pthreads directly: std's
/// threads would bring `dlsym` and `pthread_create` at GLIBC_2.34 (glibc_floor.rs binds these).
/// `f` must not touch thread-locals that have destructors (std's channels do): registering one
/// from such a thread, inside Node, crashed in glibc's `__cxa_thread_atexit_impl`.
pub fn detached(f: Box<dyn FnOnce() + Send>) -> Result<(), c_int> {
    extern "C" fn start(arg: *mut libc::c_void) -> *mut libc::c_void {
        let f = unsafe { Box::from_raw(arg as *mut Box<dyn FnOnce() + Send>) };
        f();
        null_mut()
    }
    let arg = Box::into_raw(Box::new(f));
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        check(libc::pthread_attr_init(&mut attr))?;
        let mut rc = libc::pthread_attr_setdetachstate(&mut attr, libc::PTHREAD_CREATE_DETACHED);
        if rc == 0 {
            rc = libc::pthread_attr_setstacksize(&mut attr, 256 * 1024);
        }
        if rc == 0 {
            let mut thread: libc::pthread_t = 0;
            rc = libc::pthread_create(&mut thread, &attr, start, arg as *mut libc::c_void);
        }
        libc::pthread_attr_destroy(&mut attr);
        if rc != 0 {
            drop(Box::from_raw(arg));
        }
        check(rc)
    }
}

/// Waits for child `pid` to end (blocking the calling thread) and reaps it.
pub fn wait(pid: libc::pid_t) -> Exit {
    let mut status = 0;
    loop {
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        if rc == pid {
            break;
        }
        if rc == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return Exit::Unknown;
    }
    if libc::WIFSIGNALED(status) {
        Exit::Signal(libc::WTERMSIG(status))
    } else {
        Exit::Code(libc::WEXITSTATUS(status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::AsRawFd;

    fn chdir() -> Chdir {
        let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"posix_spawn_file_actions_addchdir_np".as_ptr()) };
        assert!(!f.is_null(), "this libc has posix_spawn_file_actions_addchdir_np");
        unsafe { std::mem::transmute::<*mut libc::c_void, Chdir>(f) }
    }

    fn cs(list: &[&str]) -> Vec<CString> {
        list.iter().map(|s| CString::new(*s).unwrap()).collect()
    }

    fn launch<'a>(program: &'a str, argv: &[&str], env: &[&str], cwd: &str, out: c_int) -> Launch<'a> {
        Launch {
            program: program.as_bytes(),
            argv: cs(argv),
            env: cs(env),
            cwd: CString::new(cwd).unwrap(),
            stdout: out,
            stderr: -1,
        }
    }

    fn run(l: &Launch) -> Result<Exit, c_int> {
        spawn(l, chdir()).map(wait)
    }

    fn text_of(mut file: std::fs::File) -> String {
        use std::io::{Seek, SeekFrom};
        // The child wrote through a duplicate of this descriptor, which shares its offset.
        file.seek(SeekFrom::Start(0)).unwrap();
        let mut text = String::new();
        file.read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn candidates_follow_execvp() {
        let env = cs(&["A=1", "PATH=/x::/y"]);
        assert_eq!(
            candidates(b"ls", &env),
            vec![b"/x/ls".to_vec(), b"./ls".to_vec(), b"/y/ls".to_vec()]
        );
        assert_eq!(candidates(b"./ls", &env), vec![b"./ls".to_vec()]);
        assert_eq!(
            candidates(b"ls", &[]),
            vec![b"/bin/ls".to_vec(), b"/usr/bin/ls".to_vec()]
        );
    }

    #[test]
    fn runs_with_cwd_env_args_and_stdout() {
        let file = tempfile();
        let l = launch(
            "sh",
            &[
                "sh",
                "-c",
                "printf '%s|%s|%s' \"$(pwd)\" \"$FOO\" \"$1\"",
                "sh",
                "arg one",
            ],
            &["PATH=/usr/bin:/bin", "FOO=bar"],
            "/tmp",
            file.as_raw_fd(),
        );
        assert_eq!(run(&l), Ok(Exit::Code(0)));
        assert_eq!(text_of(file), "/tmp|bar|arg one");
    }

    #[test]
    fn exit_codes_and_signals() {
        let l = launch("sh", &["sh", "-c", "exit 3"], &["PATH=/bin:/usr/bin"], "/", -1);
        assert_eq!(run(&l), Ok(Exit::Code(3)));
        let l = launch("sh", &["sh", "-c", "kill -9 $$"], &["PATH=/bin:/usr/bin"], "/", -1);
        assert_eq!(run(&l), Ok(Exit::Signal(9)));
    }

    #[test]
    fn errors_as_execvp_gives_them() {
        let l = launch("no-such-program-here", &["x"], &["PATH=/bin:/usr/bin"], "/", -1);
        assert_eq!(run(&l), Err(libc::ENOENT));
        let l = launch("/etc/passwd", &["x"], &[], "/", -1);
        assert_eq!(run(&l), Err(libc::EACCES));
        let l = launch("/bin/true", &["x"], &[], "/no/such/dir", -1);
        assert_eq!(run(&l), Err(libc::ENOENT));
    }

    #[test]
    fn a_detached_thread_runs() {
        let (tx, rx) = std::sync::mpsc::channel();
        detached(Box::new(move || tx.send(7).unwrap())).unwrap();
        assert_eq!(rx.recv(), Ok(7));
    }

    #[test]
    fn its_own_session_and_group() {
        let file = tempfile();
        // Fields 1, 5 and 6 of /proc/<pid>/stat: pid, process group, session.
        let l = launch(
            "sh",
            &["sh", "-c", "cut -d' ' -f1,5,6 /proc/$$/stat"],
            &["PATH=/bin:/usr/bin"],
            "/",
            file.as_raw_fd(),
        );
        let pid = spawn(&l, chdir()).unwrap();
        assert_eq!(wait(pid), Exit::Code(0));
        let ids: Vec<i32> = text_of(file).split_whitespace().map(|s| s.parse().unwrap()).collect();
        assert_eq!(ids, vec![pid, pid, pid]);
    }

    /// An unlinked temporary file.
    fn tempfile() -> std::fs::File {
        let path = std::env::temp_dir().join(format!(
            "cairn-spawn-test-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        f
    }
}
