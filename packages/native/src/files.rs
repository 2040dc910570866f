//! Reads many small files (a warm run's status files and records) into one buffer.
//!
//! A warm rerun of 10^5 steps reads two small files per step. On a VM every `open` costs a few
//! microseconds in the kernel, and the run's main thread can only do one at a time; this
//! function is what a batch of them runs on a thread of libuv's pool (js.rs queues one per
//! chunk), so the chunks are read on every core while the main thread waits on one promise.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::Path;

/// `errors[i]` of a file that was read.
pub const READ_OK: u32 = 0;
/// Added to an errno when `open` failed (a missing file: `PHASE_OPEN | ENOENT`).
pub const PHASE_OPEN: u32 = 1 << 16;
/// Added to an errno when `read` failed.
pub const PHASE_READ: u32 = 2 << 16;
/// Not read: the batch's buffer would pass 4 GiB (u32 offsets). The caller reads it itself.
pub const NOT_READ: u32 = u32::MAX;

const ENOENT: u32 = 2;
const EIO: u32 = 5;
const ENOTDIR: u32 = 20;
const EISDIR: u32 = 21;
const EINVAL: u32 = 22;
#[cfg(target_os = "macos")]
const ELOOP: u32 = 62;
#[cfg(not(target_os = "macos"))]
const ELOOP: u32 = 40;

/// The files' contents, in order: file `i` is `bytes[ends[i-1]..ends[i]]` (`ends[-1]` = 0) when
/// `errors[i]` is [`READ_OK`], else it has no bytes and `errors[i]` says why.
#[derive(Debug, Default)]
pub struct FileBatch {
    pub bytes: Vec<u8>,
    pub ends: Vec<u32>,
    pub errors: Vec<u32>,
    /// True when asked to refuse links ([`read_files`]'s `no_links`): then no file was read
    /// through a named directory that is a symbolic link.
    pub links_checked: bool,
}

/// The errno of `e` (portable for the kinds a caller tells apart; the OS code elsewhere on Unix).
fn errno(e: &std::io::Error) -> u32 {
    match e.kind() {
        ErrorKind::NotFound => ENOENT,
        ErrorKind::NotADirectory => ENOTDIR,
        ErrorKind::IsADirectory => EISDIR,
        _ if cfg!(unix) => e.raw_os_error().map_or(EIO, |c| c as u32 & 0xffff),
        _ => EIO,
    }
}

/// Opens `name` relative to the directory `base` (`openat`: the kernel walks only the part of
/// the path below it), or as it is where the platform has no `openat` here.
#[cfg(any(target_os = "linux", target_os = "macos"))]
mod open {
    use std::ffi::{CString, c_char, c_int};
    use std::fs::File;
    use std::os::fd::{AsRawFd, FromRawFd};

    unsafe extern "C" {
        fn openat(dirfd: c_int, path: *const c_char, flags: c_int, ...) -> c_int;
    }
    #[cfg(target_os = "linux")]
    const O_CLOEXEC: c_int = 0o2000000;
    #[cfg(target_os = "macos")]
    const O_CLOEXEC: c_int = 0x0100_0000;

    pub fn open_at(base: &File, name: &[u8]) -> std::io::Result<File> {
        let c = CString::new(name).map_err(|_| std::io::Error::from_raw_os_error(22))?;
        let fd = unsafe { openat(base.as_raw_fd(), c.as_ptr(), O_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// `open_at` that fails with ELOOP where any part of `name` is a symbolic link (Linux's
    /// `openat2` with `RESOLVE_NO_SYMLINKS`: no `lstat` more per file); `None` where the kernel
    /// has no `openat2` (before 5.6, or refused by a seccomp filter).
    #[cfg(target_os = "linux")]
    pub fn open_at_no_links(base: &File, name: &[u8]) -> Option<std::io::Result<File>> {
        use std::ffi::c_long;
        use std::sync::atomic::{AtomicBool, Ordering};
        #[repr(C)]
        struct OpenHow {
            flags: u64,
            mode: u64,
            resolve: u64,
        }
        unsafe extern "C" {
            fn syscall(num: c_long, ...) -> c_long;
        }
        // The same number on every architecture (the unified syscall table).
        const SYS_OPENAT2: c_long = 437;
        const RESOLVE_NO_SYMLINKS: u64 = 0x04;
        const EPERM: i32 = 1;
        const ENOSYS: i32 = 38;
        static MISSING: AtomicBool = AtomicBool::new(false);
        if MISSING.load(Ordering::Relaxed) {
            return None;
        }
        let c = match CString::new(name) {
            Ok(c) => c,
            Err(_) => return Some(Err(std::io::Error::from_raw_os_error(22))),
        };
        let how = OpenHow {
            flags: O_CLOEXEC as u64,
            mode: 0,
            resolve: RESOLVE_NO_SYMLINKS,
        };
        let fd = unsafe {
            syscall(
                SYS_OPENAT2,
                base.as_raw_fd() as c_long,
                c.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            // ENOSYS: no openat2 (a seccomp filter may also answer EPERM, which opening a
            // plain file never does).
            if matches!(e.raw_os_error(), Some(ENOSYS) | Some(EPERM)) {
                MISSING.store(true, Ordering::Relaxed);
                return None;
            }
            return Some(Err(e));
        }
        Some(Ok(unsafe { File::from_raw_fd(fd as c_int) }))
    }

    #[cfg(not(target_os = "linux"))]
    pub fn open_at_no_links(_base: &File, _name: &[u8]) -> Option<std::io::Result<File>> {
        None
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
mod open {
    use std::fs::File;
    pub fn open_at(_base: &File, _name: &[u8]) -> std::io::Result<File> {
        Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
    }
    pub fn open_at_no_links(_base: &File, _name: &[u8]) -> Option<std::io::Result<File>> {
        None
    }
}

/// Whether the directory `name` (below `base`, or a path when `base` is empty) is a symbolic
/// link; false when it cannot be told (the open that follows reports the problem).
fn is_link(base: &[u8], name: &[u8]) -> bool {
    let mut p = Vec::with_capacity(base.len() + 1 + name.len());
    if !base.is_empty() {
        p.extend_from_slice(base);
        p.push(b'/');
    }
    p.extend_from_slice(name);
    // readlink(2) succeeds on links only (std's symlink_metadata needs lstat64@GLIBC_2.33: glibc_floor.rs).
    path_of(&p).is_some_and(|p| std::fs::read_link(p).is_ok())
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> Option<&Path> {
    use std::os::unix::ffi::OsStrExt;
    Some(Path::new(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> Option<&Path> {
    std::str::from_utf8(bytes).ok().map(Path::new)
}

/// Appends the whole of `file` to `out` through `chunk`. No `fstat`, and a small file takes one
/// `read`: a read that fills less than the chunk is taken as the end of a regular file, as the
/// store's JS reader takes it (one syscall in four per file fewer: bench row warm-100k).
fn read_into(file: &mut File, chunk: &mut [u8], out: &mut Vec<u8>) -> std::io::Result<()> {
    loop {
        match file.read(chunk) {
            Ok(0) => return Ok(()),
            Ok(n) if n < chunk.len() => {
                out.extend_from_slice(&chunk[..n]);
                return Ok(());
            }
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The file read after each name's first file when that one holds exactly `token`
/// ([`read_files`]'s `then`): a warm run reads a step's record only where its status says
/// SUCCESS, so both come from one batch (one call, one hand-off to a thread: bench row warm-100k).
#[derive(Clone, Copy, Debug)]
pub struct Then<'a> {
    /// The first file's whole content that asks for the second one.
    pub token: &'a [u8],
    /// Appended to the name instead of the first file's suffix.
    pub suffix: &'a [u8],
}

/// `errors[i]` of a `then` file that was not read: the first file did not hold the token.
pub const NOT_ASKED: u32 = u32::MAX - 1;

/// Reads the file `name + suffix` for every name in `names` (separated by NUL bytes; an empty
/// slice names none; an empty name names no file), relative to the directory `base` (empty:
/// the names are paths as they are). A suffix saves the caller building every file's name
/// (`step-dir` + `/.executor_status`).
///
/// `no_links`: a file whose name (the directory before the suffix) is a symbolic link is not
/// read, and fails as `PHASE_OPEN | ELOOP`; so may a file reached through any other link below
/// `base` (Linux, with `openat2`). The caller reads those itself, as it would have: a warm run
/// serves a step only from a real directory, and this spares it an `lstat` per step (bench row
/// warm-100k).
///
/// `then`: every name has two entries, its file and then `name + then.suffix`, read (as without
/// `no_links`) only when the first was read and holds exactly `then.token`, else [`NOT_ASKED`].
pub fn read_files(base: &[u8], names: &[u8], suffix: &[u8], no_links: bool, then: Option<Then>) -> FileBatch {
    let mut batch = FileBatch {
        links_checked: no_links,
        ..FileBatch::default()
    };
    if names.is_empty() {
        return batch;
    }
    let mut r = Reader {
        base,
        // Without `openat` here, or when `base` cannot be opened, each name is joined to it
        // instead: the same files, each open then reporting its own error.
        dir: if base.is_empty() || !cfg!(any(target_os = "linux", target_os = "macos")) {
            None
        } else {
            path_of(base).and_then(|p| File::open(p).ok())
        },
        chunk: vec![0u8; 64 * 1024],
        file: Vec::new(),
    };
    let per_name = if then.is_some() { 2 } else { 1 };
    batch.bytes.reserve(names.len() * 64 * per_name);
    batch.ends.reserve(names.len() / 16 * per_name);
    batch.errors.reserve(names.len() / 16 * per_name);
    for name in names.split(|&b| b == 0) {
        let start = batch.bytes.len();
        r.read(&mut batch, name, suffix, no_links);
        let Some(then) = then else { continue };
        if batch.errors.last() == Some(&READ_OK) && batch.bytes[start..] == *then.token {
            r.read(&mut batch, name, then.suffix, false);
        } else {
            batch.ends.push(batch.bytes.len() as u32);
            batch.errors.push(NOT_ASKED);
        }
    }
    batch
}

/// What reading one batch's files shares: the base directory, the read buffer, the name buffer.
struct Reader<'a> {
    base: &'a [u8],
    dir: Option<File>,
    chunk: Vec<u8>,
    file: Vec<u8>,
}

impl Reader<'_> {
    /// Appends the file `name + suffix` to `batch` (see [`read_files`]).
    fn read(&mut self, batch: &mut FileBatch, name: &[u8], suffix: &[u8], no_links: bool) {
        let (base, dir, file) = (self.base, &self.dir, &mut self.file);
        let start = batch.bytes.len();
        file.clear();
        if !base.is_empty() && dir.is_none() {
            file.extend_from_slice(base);
            file.push(b'/');
        }
        file.extend_from_slice(name);
        file.extend_from_slice(suffix);
        let through_dir = dir
            .as_ref()
            .filter(|_| no_links && !name.is_empty())
            .and_then(|d| open::open_at_no_links(d, file));
        let opened = if name.is_empty() {
            Err(PHASE_OPEN | ENOENT)
        } else if let Some(r) = through_dir {
            r.map_err(|e| PHASE_OPEN | errno(&e))
        } else if no_links
            && is_link(
                if dir.is_some() { base } else { b"" },
                if dir.is_some() {
                    name
                } else {
                    &file[..file.len() - suffix.len()]
                },
            )
        {
            Err(PHASE_OPEN | ELOOP)
        } else if let Some(d) = dir {
            open::open_at(d, file).map_err(|e| PHASE_OPEN | errno(&e))
        } else {
            match path_of(file) {
                None => Err(PHASE_OPEN | EINVAL),
                Some(p) => File::open(p).map_err(|e| PHASE_OPEN | errno(&e)),
            }
        };
        let error = match opened {
            Err(e) => e,
            Ok(mut f) => match read_into(&mut f, &mut self.chunk, &mut batch.bytes) {
                Err(e) => PHASE_READ | errno(&e),
                Ok(()) if batch.bytes.len() > u32::MAX as usize => NOT_READ,
                Ok(()) => READ_OK,
            },
        };
        if error != READ_OK {
            batch.bytes.truncate(start);
        }
        batch.ends.push(batch.bytes.len() as u32);
        batch.errors.push(error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("cairn-native-files-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn relative(base: &std::path::Path, paths: &[std::path::PathBuf]) -> Vec<u8> {
        let names: Vec<String> = paths
            .iter()
            .map(|p| p.strip_prefix(base).unwrap().to_str().unwrap().to_string())
            .collect();
        names.join("\0").into_bytes()
    }

    fn join(paths: &[std::path::PathBuf]) -> Vec<u8> {
        let names: Vec<String> = paths.iter().map(|p| p.to_str().unwrap().to_string()).collect();
        names.join("\0").into_bytes()
    }

    #[test]
    fn reads_files_in_order_with_their_errors() {
        let d = scratch("order");
        let big: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        fs::write(d.join("a"), "SUCCESS").unwrap();
        fs::write(d.join("empty"), "").unwrap();
        fs::write(d.join("big"), &big).unwrap();
        fs::create_dir(d.join("dir")).unwrap();
        let paths = [
            d.join("a"),
            d.join("missing"),
            d.join("empty"),
            d.join("big"),
            d.join("a/under-a-file"),
            d.join("dir"),
        ];
        let b = read_files(b"", &join(&paths), b"", false, None);
        let base = d.to_str().unwrap().as_bytes();
        let r = read_files(base, &relative(&d, &paths), b"", false, None);
        assert_eq!(
            (&r.bytes, &r.ends, &r.errors),
            (&b.bytes, &b.ends, &b.errors),
            "relative to a base: the same answers"
        );
        assert_eq!(
            b.errors,
            vec![
                READ_OK,
                PHASE_OPEN | ENOENT,
                READ_OK,
                READ_OK,
                PHASE_OPEN | ENOTDIR,
                PHASE_READ | EISDIR
            ]
        );
        let mut at = 0usize;
        let mut contents = Vec::new();
        for &end in &b.ends {
            contents.push(b.bytes[at..end as usize].to_vec());
            at = end as usize;
        }
        assert_eq!(contents[0], b"SUCCESS");
        assert!(contents[1].is_empty() && contents[2].is_empty());
        assert_eq!(contents[3], big);
        let _ = fs::remove_dir_all(&d);
    }

    /// The names of a batch below `d`: relative to it, or absolute when the batch has no base.
    fn batch_names(d: &std::path::Path, absolute: bool, names: &[&str]) -> String {
        let full: Vec<String> = names
            .iter()
            .map(|n| {
                if absolute {
                    format!("{}/{n}", d.display())
                } else {
                    (*n).to_string()
                }
            })
            .collect();
        full.join("\0")
    }

    #[test]
    fn a_suffix_is_appended_to_every_name() {
        let d = scratch("suffix");
        for n in ["s1", "s2"] {
            fs::create_dir(d.join(n)).unwrap();
            fs::write(d.join(n).join(".executor_status"), n).unwrap();
        }
        for base in [d.to_str().unwrap().as_bytes(), b""] {
            let names = batch_names(&d, base.is_empty(), &["s1", "s2", "none"]);
            let b = read_files(base, names.as_bytes(), b"/.executor_status", false, None);
            assert_eq!(b.errors, vec![READ_OK, READ_OK, PHASE_OPEN | ENOENT]);
            assert_eq!(&b.bytes, b"s1s2");
        }
        let _ = fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn no_links_refuses_a_named_directory_that_is_a_link() {
        let d = scratch("links");
        fs::create_dir(d.join("real")).unwrap();
        fs::write(d.join("real").join(".executor_status"), "SUCCESS").unwrap();
        std::os::unix::fs::symlink(d.join("real"), d.join("link")).unwrap();
        for base in [d.to_str().unwrap().as_bytes(), b""] {
            let names = batch_names(&d, base.is_empty(), &["real", "link", "none"]);
            let b = read_files(base, names.as_bytes(), b"/.executor_status", true, None);
            assert!(b.links_checked);
            assert_eq!(b.errors, vec![READ_OK, PHASE_OPEN | ELOOP, PHASE_OPEN | ENOENT]);
            assert_eq!(&b.bytes, b"SUCCESS");
            let followed = read_files(base, names.as_bytes(), b"/.executor_status", false, None);
            assert_eq!(
                followed.errors,
                vec![READ_OK, READ_OK, PHASE_OPEN | ENOENT],
                "without no_links, links are followed"
            );
        }
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn then_reads_the_second_file_only_after_the_token() {
        let d = scratch("then");
        for (step, status, record) in [
            ("built", "SUCCESS", Some("{}")),
            ("failed", "FAILED", Some("{}")),
            ("norecord", "SUCCESS", None),
            ("longer", "SUCCESS\n", Some("{}")),
        ] {
            fs::create_dir_all(d.join(step)).unwrap();
            fs::write(d.join(step).join(".executor_status"), status).unwrap();
            if let Some(r) = record {
                fs::write(d.join(step).join(".artifact.json"), r).unwrap();
            }
        }
        let then = Then {
            token: b"SUCCESS",
            suffix: b"/.artifact.json",
        };
        let names = b"built\0failed\0missing\0norecord\0longer";
        let b = read_files(
            d.to_str().unwrap().as_bytes(),
            names,
            b"/.executor_status",
            true,
            Some(then),
        );
        assert_eq!(
            b.errors,
            vec![
                READ_OK,
                READ_OK,
                READ_OK,
                NOT_ASKED,
                PHASE_OPEN | ENOENT,
                NOT_ASKED,
                READ_OK,
                PHASE_OPEN | ENOENT,
                READ_OK,
                NOT_ASKED
            ]
        );
        let text = |i: usize| &b.bytes[if i == 0 { 0 } else { b.ends[i - 1] as usize }..b.ends[i] as usize];
        assert_eq!(
            [text(0), text(1), text(2), text(6), text(8)],
            [&b"SUCCESS"[..], b"{}", b"FAILED", b"SUCCESS", b"SUCCESS\n"]
        );
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn a_missing_base_fails_each_open_as_a_path_would() {
        let b = read_files(b"/nonexistent-cairn-base", b"a\0b/c", b"", false, None);
        assert_eq!(b.errors, vec![PHASE_OPEN | ENOENT, PHASE_OPEN | ENOENT]);
    }

    #[test]
    fn no_names_no_entries_and_an_empty_name_is_missing() {
        assert!(read_files(b"", b"", b"x", false, None).ends.is_empty());
        let b = read_files(b"", b"\0", b"/x", false, None);
        assert_eq!(b.errors, vec![PHASE_OPEN | ENOENT, PHASE_OPEN | ENOENT]);
    }
}
