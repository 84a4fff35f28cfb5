//! Atomic file writes: every output goes to a temporary file in the destination's directory,
//! is flushed and fsynced, then renamed over the destination. On any error the temporary file
//! is removed, so a crash or a failed encoder never leaves a half-written output behind (at
//! worst a stale `.<name>.tmp-<pid>-<n>` file if the process is killed mid-write; the next
//! write of the same file removes those of processes that are gone, on Linux).
//!
//! Kill safety is tested by `scripts/kill-test.sh`: `generate`, `tiles` and project saves
//! SIGKILLed at random moments leave only complete old or complete new files.
//!
//! On Linux, [`write_atomic`] writes with `O_DIRECT` where the file system takes it (chunks of
//! 1 MiB from aligned buffers straight to the disk, by a writer thread per file so the caller
//! computes the next chunk meanwhile; the last partial block through the cache): see the
//! `direct` module. The fsync still runs, and still waits for the disk. A
//! [`Committer`] takes that wait off the computing threads: inside [`Committer::scope`], a
//! write into the committer's folder hands its filled temporary file to the committer's own
//! thread, which waits for its last writes, fsyncs and renames it while the caller computes
//! the next file;
//! [`Committer::finish`] waits for every hand-over. Each file is still renamed only after its
//! own fsync, so kill safety is the same.

use std::cell::RefCell;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use crate::{Error, Result};

/// Counter that makes temporary names unique within one process.
static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Wraps an I/O error with the file it concerns.
pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

fn temp_path_for(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().ok_or_else(|| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "the output path has no file name"),
    })?;
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let temp_name = format!(".{}.tmp-{}-{n}", name.to_string_lossy(), std::process::id());
    Ok(path.with_file_name(temp_name))
}

/// Removes `.<name>.tmp-<pid>-<n>` siblings of `path` left by killed processes (Linux: the
/// pid has no `/proc` entry; elsewhere nothing is removed). Best effort: errors are ignored.
fn remove_stale_temps(path: &Path) {
    if !cfg!(target_os = "linux") {
        return;
    }
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else { return };
    let dir = if dir.as_os_str().is_empty() { Path::new(".") } else { dir };
    let prefix = format!(".{}.tmp-", name.to_string_lossy());
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let file = file.to_string_lossy();
        let Some(pid) = file.strip_prefix(&prefix).and_then(|rest| rest.split('-').next()) else { continue };
        let Ok(pid) = pid.parse::<u32>() else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `path` atomically through a seekable buffered file (formats whose encoders seek
/// back, such as TIFF and EXR, need this one). See [`write_atomic`].
pub fn write_atomic_seekable(
    path: impl AsRef<Path>,
    f: impl FnOnce(&mut BufWriter<File>) -> Result<()>,
) -> Result<()> {
    write_temp(path.as_ref(), BufWriter::new, f, |w| w.into_inner().map_err(|e| e.into_error()))
}

/// The one atomic write: a new temporary file next to `path`, wrapped by `open`, filled by
/// `f`, then handed to the current [`Committer`] or committed in place. Committing unwraps it
/// by `close` (which writes what the wrapper still holds and waits for its writes), fsyncs and
/// renames it, so inside a committer's scope the caller goes on computing while the disk takes
/// the file's last chunks. On any error the temporary file is removed.
fn write_temp<W: Send + 'static>(
    path: &Path,
    open: impl FnOnce(File) -> W,
    f: impl FnOnce(&mut W) -> Result<()>,
    close: impl FnOnce(W) -> std::io::Result<File> + Send + 'static,
) -> Result<()> {
    let temp = temp_path_for(path)?;
    remove_stale_temps(path);
    let file = OpenOptions::new().write(true).create_new(true).open(&temp).map_err(io_err(path))?;
    let mut writer = open(file);
    if let Err(e) = f(&mut writer) {
        drop(writer);
        // Best effort: the temp file may already be gone; the original error is what matters.
        let _ = fs::remove_file(&temp);
        return Err(e);
    }
    let pending = Pending { close: Box::new(move || close(writer)), temp, path: path.to_path_buf() };
    match hand_over(pending) {
        Ok(()) => Ok(()),
        Err(pending) => pending.commit(),
    }
}

/// A filled temporary file, how to finish writing it, and the path it becomes.
struct Pending {
    close: Box<dyn FnOnce() -> std::io::Result<File> + Send>,
    temp: PathBuf,
    path: PathBuf,
}

impl Pending {
    /// Finishes the writes, fsyncs, then renames over the destination; on failure the
    /// temporary file is removed.
    fn commit(self) -> Result<()> {
        let Pending { close, temp, path } = self;
        let outcome = close()
            .and_then(|file| file.sync_all())
            .map_err(io_err(&path))
            .and_then(|()| fs::rename(&temp, &path).map_err(io_err(&path)));
        if outcome.is_err() {
            let _ = fs::remove_file(&temp);
        }
        outcome
    }
}

/// The folder and channel of the [`Committer`] whose scope the current thread is in.
type Route = (PathBuf, Sender<Pending>);

thread_local! {
    static ROUTE: RefCell<Option<Route>> = const { RefCell::new(None) };
}

/// Gives `pending` to the committer of the current scope if its file lies in that committer's
/// folder; otherwise (or if the committer is gone) gives it back.
fn hand_over(pending: Pending) -> std::result::Result<(), Pending> {
    ROUTE.with(|route| match &*route.borrow() {
        Some((dir, tx)) if pending.path.parent() == Some(dir.as_path()) => tx.send(pending).map_err(|e| e.0),
        _ => Err(pending),
    })
}

/// fsyncs and renames, on a thread of its own, the files written into one folder inside
/// [`Committer::scope`] (see the module docs). Dropped without [`Committer::finish`], it still
/// waits for them.
pub struct Committer {
    dir: PathBuf,
    tx: Option<Sender<Pending>>,
    thread: Option<JoinHandle<Result<()>>>,
}

impl Committer {
    /// A committer for the files written directly into `dir`. Where no thread can be started
    /// (wasm32), its scopes commit each file in place, as outside a scope.
    pub fn start(dir: &Path) -> Self {
        let (tx, rx) = channel::<Pending>();
        let thread = std::thread::Builder::new().name("terrasynth-commit".into()).spawn(move || {
            // Every file is committed even after a failure (each is complete on its own); the
            // first error is returned.
            let mut first = Ok(());
            for pending in rx {
                let outcome = pending.commit();
                if first.is_ok() {
                    first = outcome;
                }
            }
            first
        });
        match thread {
            Ok(thread) => Self { dir: dir.to_path_buf(), tx: Some(tx), thread: Some(thread) },
            Err(_) => Self { dir: dir.to_path_buf(), tx: None, thread: None },
        }
    }

    /// Runs `f` with this committer taking the atomic writes of the current thread into its
    /// folder (the previous scope, if any, is restored after).
    pub fn scope<T>(&self, f: impl FnOnce() -> T) -> T {
        let Some(tx) = &self.tx else { return f() };
        let previous = ROUTE.with(|r| r.replace(Some((self.dir.clone(), tx.clone()))));
        // Restored even if `f` panics, so the thread never keeps a route to a finished committer.
        struct Restore(Option<Route>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let previous = self.0.take();
                ROUTE.with(|r| *r.borrow_mut() = previous);
            }
        }
        let _restore = Restore(previous);
        f()
    }

    /// Waits until every file handed over is fsynced and renamed; the first error, if any.
    pub fn finish(mut self) -> Result<()> {
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(outcome)) => outcome,
            Some(Err(panic)) => std::panic::resume_unwind(panic),
        }
    }
}

impl Drop for Committer {
    fn drop(&mut self) {
        // Unfinished (an error or a panic on the way): still commit what was handed over.
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Writes `path` atomically: `f` writes the whole content to a temporary file in the same
/// directory, which is then flushed, fsynced and renamed to `path`. If `f` or any step fails,
/// the temporary file is removed and `path` is left untouched (an existing file keeps its old
/// content).
///
/// ```
/// use std::io::Write;
/// let dir = std::env::temp_dir().join(format!("ts-atomic-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("hello.txt");
/// terrasynth::io::atomic::write_atomic(&path, |w: &mut dyn Write| {
///     w.write_all(b"hi").map_err(|e| terrasynth::Error::Io { path: "hello.txt".into(), source: e })
/// })
/// .unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"hi");
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
pub fn write_atomic(path: impl AsRef<Path>, f: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    #[cfg(target_os = "linux")]
    {
        let path = path.as_ref();
        write_temp(path, direct::DirectWriter::new, |w| f(w), direct::DirectWriter::finish)
    }
    #[cfg(not(target_os = "linux"))]
    write_atomic_seekable(path, |w| f(w))
}

/// Writes a byte buffer atomically.
pub fn write_bytes_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let path = path.as_ref();
    write_atomic(path, |w| w.write_all(bytes).map_err(io_err(path)))
}

/// Writes that bypass the page cache (Linux `O_DIRECT`): the bytes go from an aligned buffer
/// of this process straight to the disk. Large outputs (the mesh of a 4097² map is 1.1 GB)
/// spent a quarter of a `generate` run's CPU time in the kernel copying pages into the cache
/// and zeroing new ones, and their fsync then wrote the cache out at a quarter of the disk's
/// direct speed here (247 MB/s against 1.6 GB/s, `dd` of 512 MiB). The fsync and rename of
/// [`Pending::commit`] are unchanged, so is kill safety.
///
/// A direct write returns only once the disk has the bytes, so each file has a writer thread
/// of its own that takes the full chunks while the caller fills the next one (at most
/// [`BUFFERS`] chunks per file): a computing thread never waits for the disk. `rivers` at
/// 1025² on one thread waited 88 ms in `write` (strace) before this.
#[cfg(target_os = "linux")]
mod direct {
    use std::fs::File;
    use std::io::{self, Write};
    use std::os::fd::AsRawFd;
    use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
    use std::thread::JoinHandle;

    /// Alignment of every direct transfer: file offset, length and buffer address (the
    /// logical block size of common Linux file systems is at most this).
    const ALIGN: usize = 4096;
    /// Bytes gathered before each write (a multiple of [`ALIGN`]).
    const CHUNK: usize = 1 << 20;
    /// Chunks of one file in memory at most: one being filled, the others queued or being
    /// written. 32 MiB lets the mesh of a 1025² map (71 MB) be computed at about twice the
    /// disk's speed without waiting for it (with 3 chunks until session 37, `mesh.glb` of
    /// `rivers` at 1025² on one thread took 76–82 ms, the disk's time, against 36–41 now).
    const BUFFERS: usize = 32;

    /// An aligned buffer of [`CHUNK`] bytes (`buf[start..start + CHUNK]`) and how many of them
    /// are filled.
    struct Chunk {
        buf: Vec<u8>,
        start: usize,
        len: usize,
    }

    impl Chunk {
        /// A buffer whose usable part starts `shift` bytes past an [`ALIGN`] boundary.
        fn new(shift: usize) -> Self {
            let buf = vec![0u8; CHUNK + ALIGN + shift];
            let start = buf.as_ptr().align_offset(ALIGN) + shift;
            Self { buf, start, len: 0 }
        }

        fn bytes(&self) -> &[u8] {
            &self.buf[self.start..self.start + self.len]
        }
    }

    /// What the writer thread gives back: the file and whether its writes were still direct.
    type Done = io::Result<(File, bool)>;

    /// A [`Write`] to a new file, in chunks of [`CHUNK`] bytes written by a thread of its own,
    /// with `O_DIRECT` where the file system takes it; buffered writes otherwise (`O_DIRECT`
    /// refused by `fcntl`, a write refused with `EINVAL`, and the last partial block). Nothing
    /// reaches the file before [`DirectWriter::finish`] but whole chunks, in order.
    pub(super) struct DirectWriter {
        /// The chunk being filled.
        chunk: Chunk,
        /// Full chunks to the writer thread (`None` once finished, or after it stopped).
        full: Option<SyncSender<Chunk>>,
        /// Written chunks back from it, to fill again.
        empty: Receiver<Chunk>,
        /// Chunks made so far (at most [`BUFFERS`]).
        made: usize,
        /// The chunks' misalignment (0 but in tests).
        shift: usize,
        /// The writer thread, or why it could not be started (reported by the first hand-over
        /// or by `finish`).
        thread: Result<JoinHandle<Done>, io::Error>,
    }

    impl DirectWriter {
        /// Wraps a new, empty `file`, switching it to `O_DIRECT` if the file system allows.
        pub(super) fn new(file: File) -> Self {
            Self::with_shift(file, 0)
        }

        /// [`DirectWriter::new`] with the buffers `shift` bytes past their alignment (tests: a
        /// misaligned buffer makes the kernel refuse the direct writes).
        fn with_shift(file: File, shift: usize) -> Self {
            let direct = set_direct(&file, true).is_ok();
            let (full, queued) = sync_channel::<Chunk>(BUFFERS);
            let (done, empty) = sync_channel::<Chunk>(BUFFERS);
            let thread = std::thread::Builder::new()
                .name("terrasynth-write".into())
                .spawn(move || write_chunks(file, direct, queued, done));
            Self { chunk: Chunk::new(shift), full: Some(full), empty, made: 1, shift, thread }
        }

        /// Hands the full chunk to the writer thread and takes an empty one (waiting for one
        /// once [`BUFFERS`] exist). If the thread stopped on an error, returns it.
        fn send(&mut self) -> io::Result<()> {
            let next = if self.made < BUFFERS {
                self.made += 1;
                Chunk::new(self.shift)
            } else {
                match self.empty.recv() {
                    Ok(c) => c,
                    Err(_) => return Err(self.stopped()),
                }
            };
            let full = std::mem::replace(&mut self.chunk, next);
            let sent = self.full.as_ref().map(|tx| tx.send(full).is_ok());
            if sent != Some(true) {
                return Err(self.stopped());
            }
            Ok(())
        }

        /// The error the writer thread stopped on.
        fn stopped(&mut self) -> io::Error {
            self.full = None;
            match std::mem::replace(&mut self.thread, Err(io::ErrorKind::BrokenPipe.into())) {
                Ok(handle) => match handle.join() {
                    Ok(Err(e)) => e,
                    _ => io::Error::other("the file's writer thread stopped"),
                },
                Err(e) => io::Error::other(format!("cannot start the file's writer thread: {e}")),
            }
        }

        /// Waits for the queued chunks, writes what is left (the last block through the
        /// cache, unaligned) and gives the file back.
        pub(super) fn finish(self) -> io::Result<File> {
            self.finish_direct().map(|(file, _)| file)
        }

        /// [`DirectWriter::finish`], and whether the file's writes were still direct before the
        /// last block.
        fn finish_direct(mut self) -> io::Result<(File, bool)> {
            self.full = None; // the thread ends once the queue is empty
            let thread = std::mem::replace(&mut self.thread, Err(io::ErrorKind::BrokenPipe.into()));
            let (mut file, mut direct) = match thread {
                Ok(handle) => {
                    handle.join().map_err(|_| io::Error::other("the file's writer thread panicked"))??
                }
                Err(e) => {
                    return Err(io::Error::other(format!("cannot start the file's writer thread: {e}")));
                }
            };
            let was_direct = direct;
            if !self.chunk.len.is_multiple_of(ALIGN) && direct {
                set_direct(&file, false)?;
                direct = false;
            }
            write_chunk(&mut file, &mut direct, &self.chunk)?;
            Ok((file, was_direct))
        }
    }

    /// The writer thread: writes the chunks in the order they come and sends each back empty;
    /// ends when the sender is dropped, or at the first error (which it returns).
    fn write_chunks(
        mut file: File,
        mut direct: bool,
        queued: Receiver<Chunk>,
        done: SyncSender<Chunk>,
    ) -> Done {
        for mut chunk in queued {
            write_chunk(&mut file, &mut direct, &chunk)?;
            chunk.len = 0;
            // The writer may be gone (finished or failed): then the chunk is simply dropped.
            let _ = done.try_send(chunk);
        }
        Ok((file, direct))
    }

    /// Writes a chunk's bytes. A direct write the file system refuses (`EINVAL`: an alignment
    /// it does not take) switches the file to buffered writes for good.
    fn write_chunk(file: &mut File, direct: &mut bool, chunk: &Chunk) -> io::Result<()> {
        let bytes = chunk.bytes();
        let mut done = 0;
        while done < bytes.len() {
            match file.write(&bytes[done..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if *direct && e.raw_os_error() == Some(libc::EINVAL) => {
                    set_direct(file, false)?;
                    *direct = false;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Turns `O_DIRECT` on or off (`fcntl(F_SETFL)`).
    fn set_direct(file: &File, on: bool) -> io::Result<()> {
        let fd = file.as_raw_fd();
        // SAFETY: `fd` is this open file for the whole call; F_GETFL and F_SETFL read and set
        // its status flags and touch no memory of ours.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if flags < 0 {
            return Err(io::Error::last_os_error());
        }
        let flags = if on { flags | libc::O_DIRECT } else { flags & !libc::O_DIRECT };
        // SAFETY: as above.
        if unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    impl Write for DirectWriter {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            let c = &mut self.chunk;
            let n = data.len().min(CHUNK - c.len);
            let at = c.start + c.len;
            c.buf[at..at + n].copy_from_slice(&data[..n]);
            c.len += n;
            if c.len == CHUNK {
                self.send()?;
            }
            Ok(n)
        }

        /// Nothing: whole chunks are written as they fill, the rest by `finish`.
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        /// Whatever the pieces and the total (empty, one block and around it, around a chunk,
        /// several chunks and a tail), the file holds exactly the bytes written: with direct
        /// writes where the temporary folder takes them, and with a misaligned buffer, whose
        /// direct writes the kernel refuses (`EINVAL`), through the buffered fallback.
        #[test]
        fn the_file_holds_every_byte_written_whatever_the_pieces() {
            let dir = super::super::tests::temp_dir("direct");
            let sizes = [0, 1, ALIGN - 1, ALIGN, ALIGN + 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 123];
            for shift in [0, 1] {
                for (k, &size) in sizes.iter().enumerate() {
                    let want: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251 + k) as u8).collect();
                    let path = dir.join(format!("f{shift}-{k}"));
                    let mut w = DirectWriter::with_shift(File::create(&path).unwrap(), shift);
                    // Pieces of 1 byte to 2.5 chunks, in a fixed pseudo-random order.
                    let (mut at, mut r) = (0, k as u64 + 1);
                    while at < size {
                        r = terrasynth_noise::rng::mix64(r);
                        let piece = (((r % (5 * CHUNK as u64 / 2)) as usize >> (r % 13)) + 1).min(size - at);
                        w.write_all(&want[at..at + piece]).unwrap();
                        at += piece;
                    }
                    let (file, direct) = w.finish_direct().unwrap();
                    if shift == 1 && size >= CHUNK {
                        // Refused by the kernel (a misaligned buffer) if it was on.
                        assert!(!direct, "shift 1, {size} bytes: still direct");
                    }
                    drop(file);
                    let got = std::fs::read(&path).unwrap();
                    assert!(got == want, "shift {shift}, {size} bytes: {} read back", got.len());
                }
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }

        /// A write that fails in the writer thread (a file opened read-only) comes back to the
        /// caller, from a later `write` or from `finish`, and the writer never hangs.
        #[test]
        fn an_error_of_the_writer_thread_reaches_the_caller() {
            let dir = super::super::tests::temp_dir("direct-error");
            let path = dir.join("read-only");
            std::fs::write(&path, b"").unwrap();
            for size in [CHUNK, 10 * CHUNK + 5] {
                let mut w = DirectWriter::new(File::open(&path).unwrap());
                let data = vec![1u8; size];
                let err = match w.write_all(&data) {
                    Err(e) => e,
                    Ok(()) => w.finish().expect_err("finish after a failed write"),
                };
                assert_eq!(err.raw_os_error(), Some(libc::EBADF), "{size} bytes: {err}");
            }
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh folder for one test (also used by the `direct` module's tests).
    pub(super) fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ts-atomic-{tag}-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn failed_write_leaves_old_file_and_no_temp() {
        let dir = temp_dir("fail");
        let path = dir.join("out.bin");
        fs::write(&path, b"old").unwrap();
        let err = write_atomic(&path, |w| {
            w.write_all(b"half-writ").unwrap();
            Err(Error::Cancelled)
        });
        assert!(matches!(err, Err(Error::Cancelled)));
        assert_eq!(fs::read(&path).unwrap(), b"old");
        let leftovers: Vec<_> = fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(leftovers, vec![std::ffi::OsString::from("out.bin")], "temp file left behind");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn successful_write_replaces_content() {
        let dir = temp_dir("ok");
        let path = dir.join("out.bin");
        fs::write(&path, b"old content").unwrap();
        write_bytes_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn stale_temp_files_of_dead_processes_are_removed_by_the_next_write() {
        let dir = temp_dir("stale");
        let path = dir.join("out.bin");
        // pid 0 has no /proc entry (and is never a user process); our own pid is alive.
        let dead = dir.join(".out.bin.tmp-0-3");
        let ours = dir.join(format!(".out.bin.tmp-{}-999", std::process::id()));
        let other = dir.join(".other.bin.tmp-0-1");
        for f in [&dead, &ours, &other] {
            fs::write(f, b"partial").unwrap();
        }
        write_bytes_atomic(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        if cfg!(target_os = "linux") {
            assert!(!dead.exists(), "a dead process's temp file was kept");
        }
        assert!(ours.exists() && other.exists(), "a live process's or another file's temp was removed");
        fs::remove_dir_all(&dir).unwrap();
    }

    fn temps_in(dir: &Path) -> Vec<String> {
        let names = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned());
        names.filter(|n| n.contains(".tmp-")).collect()
    }

    #[test]
    fn committer_puts_every_file_of_its_folder_in_place_by_finish() {
        let dir = temp_dir("commit");
        let other = temp_dir("commit-other");
        let commits = Committer::start(&dir);
        commits.scope(|| {
            for k in 0..20u8 {
                write_bytes_atomic(dir.join(format!("f{k}.bin")), &vec![k; 1000 + k as usize]).unwrap();
            }
            // Outside the committer's folder: committed in place, there on return.
            write_bytes_atomic(other.join("x.bin"), b"x").unwrap();
            assert_eq!(fs::read(other.join("x.bin")).unwrap(), b"x");
        });
        commits.finish().unwrap();
        for k in 0..20u8 {
            assert_eq!(fs::read(dir.join(format!("f{k}.bin"))).unwrap(), vec![k; 1000 + k as usize]);
        }
        assert!(temps_in(&dir).is_empty(), "temp files left: {:?}", temps_in(&dir));
        // Out of the scope the thread writes in place again.
        write_bytes_atomic(dir.join("after.bin"), b"a").unwrap();
        assert_eq!(fs::read(dir.join("after.bin")).unwrap(), b"a");
        fs::remove_dir_all(&dir).unwrap();
        fs::remove_dir_all(&other).unwrap();
    }

    /// Files of many chunks handed over while their last chunks may still be on the way to the
    /// disk: by `finish` each holds every byte, and no temporary file is left.
    #[test]
    fn committer_finishes_the_writes_of_large_files_it_was_handed() {
        let dir = temp_dir("commit-large");
        let content = |k: usize| -> Vec<u8> { (0..(5 << 20) + 17 * k).map(|i| (i * 31 + k) as u8).collect() };
        let commits = Committer::start(&dir);
        commits.scope(|| {
            for k in 0..4 {
                let path = dir.join(format!("big{k}.bin"));
                write_atomic(&path, |w| w.write_all(&content(k)).map_err(io_err(&path))).unwrap();
            }
        });
        commits.finish().unwrap();
        for k in 0..4 {
            assert!(fs::read(dir.join(format!("big{k}.bin"))).unwrap() == content(k), "big{k}.bin differs");
        }
        assert!(temps_in(&dir).is_empty(), "temp files left: {:?}", temps_in(&dir));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn committer_reports_a_failed_rename_and_still_commits_the_others() {
        let dir = temp_dir("commit-fail");
        // A non-empty folder where a file should go: the rename over it fails.
        fs::create_dir_all(dir.join("blocked.bin")).unwrap();
        fs::write(dir.join("blocked.bin").join("keep"), b"k").unwrap();
        let commits = Committer::start(&dir);
        commits.scope(|| {
            write_bytes_atomic(dir.join("a.bin"), b"a").unwrap();
            write_bytes_atomic(dir.join("blocked.bin"), b"b").unwrap();
            write_bytes_atomic(dir.join("c.bin"), b"c").unwrap();
        });
        let err = commits.finish().unwrap_err();
        assert!(matches!(&err, Error::Io { path, .. } if path == &dir.join("blocked.bin")), "{err}");
        assert_eq!(fs::read(dir.join("a.bin")).unwrap(), b"a");
        assert_eq!(fs::read(dir.join("c.bin")).unwrap(), b"c");
        assert!(temps_in(&dir).is_empty(), "temp files left: {:?}", temps_in(&dir));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn nested_committer_scopes_restore_the_outer_one() {
        let (a, b) = (temp_dir("commit-a"), temp_dir("commit-b"));
        let (ca, cb) = (Committer::start(&a), Committer::start(&b));
        ca.scope(|| {
            cb.scope(|| write_bytes_atomic(b.join("in-b.bin"), b"b").unwrap());
            write_bytes_atomic(a.join("in-a.bin"), b"a").unwrap();
        });
        // Dropping without finish still waits for the files handed over.
        drop(cb);
        drop(ca);
        assert_eq!(fs::read(a.join("in-a.bin")).unwrap(), b"a");
        assert_eq!(fs::read(b.join("in-b.bin")).unwrap(), b"b");
        fs::remove_dir_all(&a).unwrap();
        fs::remove_dir_all(&b).unwrap();
    }

    #[test]
    fn missing_directory_is_an_io_error_naming_the_path() {
        let path = std::env::temp_dir().join("ts-no-such-dir-xyz/out.bin");
        let err = write_bytes_atomic(&path, b"x").unwrap_err();
        assert!(matches!(&err, Error::Io { path: p, .. } if p == &path), "{err}");
    }
}
