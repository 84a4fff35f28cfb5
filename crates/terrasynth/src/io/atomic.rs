//! Atomic file writes: every output goes to a temporary file in the destination's directory,
//! is flushed and fsynced, then renamed over the destination. On any error the temporary file
//! is removed, so a crash or a failed encoder never leaves a half-written output behind (at
//! worst a stale `.<name>.tmp-<pid>-<n>` file if the process is killed mid-write; the next
//! write of the same file removes those of processes that are gone, on Linux).
//!
//! Kill safety is tested by `scripts/kill-test.sh`: `generate`, `tiles` and project saves
//! SIGKILLed at random moments leave only complete old or complete new files.

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

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
    let path = path.as_ref();
    let temp = temp_path_for(path)?;
    remove_stale_temps(path);
    let file = OpenOptions::new().write(true).create_new(true).open(&temp).map_err(io_err(path))?;
    let mut writer = BufWriter::new(file);
    let outcome = f(&mut writer).and_then(|()| {
        let file = writer
            .into_inner()
            .map_err(|e| Error::Io { path: path.to_path_buf(), source: e.into_error() })?;
        file.sync_all().map_err(io_err(path))?;
        drop(file);
        fs::rename(&temp, path).map_err(io_err(path))
    });
    if outcome.is_err() {
        // Best effort: the temp file may already be gone; the original error is what matters.
        let _ = fs::remove_file(&temp);
    }
    outcome
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
    write_atomic_seekable(path, |w| f(w))
}

/// Writes a byte buffer atomically.
pub fn write_bytes_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<()> {
    let path = path.as_ref();
    write_atomic(path, |w| w.write_all(bytes).map_err(io_err(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
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

    #[test]
    fn missing_directory_is_an_io_error_naming_the_path() {
        let path = std::env::temp_dir().join("ts-no-such-dir-xyz/out.bin");
        let err = write_bytes_atomic(&path, b"x").unwrap_err();
        assert!(matches!(&err, Error::Io { path: p, .. } if p == &path), "{err}");
    }
}
